"""``kairox agents list|show``: the agents a session's ``task`` tool can start, where each comes from, and what
went wrong loading the others."""

from typing import TYPE_CHECKING

import typer

from kairox.cli._common import ExitCode, JsonOption, err, fail, out, out_json, state

if TYPE_CHECKING:
    from kairox.runtime import AgentSet

agents_app = typer.Typer(help="Subagents: list and show the agents the task tool starts.", no_args_is_help=True)


def _agents(ctx: typer.Context) -> "AgentSet":
    from kairox.runtime import load_agents, load_plugins

    resolved = state(ctx).resolve(strict=False)
    return load_agents(resolved, load_plugins(resolved).plugins)


@agents_app.command("list")
def list_agents(ctx: typer.Context, as_json: JsonOption = False) -> None:
    """Every agent (on or off) with its source, and the files that did not load."""
    found = _agents(ctx)
    if as_json:
        out_json(
            {
                "agents": [a.to_json() for a in found.agents.values()],
                "diagnostics": [d.to_json() for d in found.diagnostics],
            }
        )
        return
    for problem in found.diagnostics:
        err(f"kairox: agent {problem.source}: {problem.reason}" + (f" ({problem.hint})" if problem.hint else ""))
    for a in found.agents.values():
        out(f"{'on ' if a.enabled else 'off'}  {a.name}  [{a.source}]  {a.description[:100]}")


@agents_app.command("show")
def show_agent(ctx: typer.Context, name: str, as_json: JsonOption = False) -> None:
    """One agent: its settings, the keys Kairox keeps without using, and its prompt."""
    agent = _agents(ctx).get(name)
    if agent is None:
        fail(f"no agent named {name!r}; `kairox agents list` names them", ExitCode.NOT_FOUND)
    data = agent.to_json()
    if as_json:
        out_json(data)
        return
    prompt = data.pop("prompt")
    for key, value in data.items():
        out(f"{key}: {value}")
    out(f"\n{prompt}")
