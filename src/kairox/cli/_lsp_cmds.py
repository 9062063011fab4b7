"""``kairox lsp status`` and ``kairox dap sessions``: the configured language servers and debug adapters.

Servers start lazily inside a session, so a fresh command shows them stopped; ``lsp status --probe`` starts
each one, reports what it said at ``initialize``, and stops it again.
"""

import shutil
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from kairox.cli._common import ExitCode, JsonOption, err, out, out_json, state

if TYPE_CHECKING:
    from kairox.config import ResolvedConfig
    from kairox.runtime import ServerView

lsp_app = typer.Typer(help="Language servers: what is configured and whether it starts.", no_args_is_help=True)
dap_app = typer.Typer(help="Debug adapters and debug sessions.", no_args_is_help=True)


def _available(command: str, base_dir: Path) -> bool:
    from kairox._rpc._launch import resolved_command

    path = resolved_command(command, base_dir)
    return Path(path).is_file() if "/" in path else shutil.which(path) is not None


def _entry(view: "ServerView", config: Any, base_dir: Path) -> dict[str, Any]:
    """One server of the runtime's view; an idle one whose command is not there is ``missing_command``."""
    status = str(view.status)
    if view.status == "idle" and not _available(config.command, base_dir):
        status = "missing_command"
    return {
        "server": view.name,
        "status": status,
        "reason": view.reason,
        "command": [config.command, *config.args],
        "languages": list(config.languages),
        "origin": view.origin.where() if view.origin is not None and view.origin.file else None,
    }


def _label(status: str) -> str:
    """A status in the runtime view's words ("pending re-trust"), as every front end shows it."""
    from kairox._rpc._status import ServerStatus

    return ServerStatus(status).label if status in set(ServerStatus) else status


def _entries(resolved: "ResolvedConfig", kind: str) -> list[dict[str, Any]]:
    from kairox.runtime import ServerBoard

    section = f"{kind}_servers"
    configs = getattr(resolved.config, section)
    return [
        _entry(view, configs[view.name], resolved.base_dir(f"{section}.{view.name}"))
        for view in ServerBoard(resolved).views(kind)
    ]


def _last_lines(log: Path, count: int = 3) -> str:
    with log.open("rb") as handle:
        handle.seek(max(log.stat().st_size - 4096, 0))
        lines = handle.read().decode("utf-8", errors="replace").strip().splitlines()
    return "\n".join(line[:300] for line in lines[-count:])


@lsp_app.command("status")
def lsp_status(
    ctx: typer.Context,
    json_output: JsonOption = False,
    probe: Annotated[bool, typer.Option("--probe", help="Start each server, report it, stop it.")] = False,
) -> None:
    """Show the configured language servers: idle (they start on first use), held back by trust, disabled,
    missing command; with --probe, whether each one starts."""
    cli = state(ctx)
    resolved = cli.resolve()
    servers = resolved.config.lsp_servers
    from kairox.registry import registry_settings
    from kairox.sandbox import describe_confinement, entry_confinement

    sandbox = registry_settings(resolved).sandbox
    confine = {n: entry_confinement(resolved, "lsp_servers", n, c, sandbox) for n, c in servers.items()}
    entries = _entries(resolved, "lsp")
    from kairox.lsp import server_log

    for entry in entries:
        entry["file_patterns"] = list(servers[entry["server"]].file_patterns)
        log = server_log(resolved.home / "logs", entry["server"])
        if log.is_file() and log.stat().st_size:  # how it ended last time, in an earlier process too
            entry["log"], entry["log_tail"] = str(log), _last_lines(log)
        # what it runs under: the profile of its entry, held to who wrote it (the probe says what it got)
        entry["confinement"] = confine[entry["server"]].describe()
    if probe:
        import anyio

        anyio.run(_probe, cli, resolved, entries, confine)
    if json_output:
        out_json({"workspace": str(resolved.workspace), "servers": entries})
    elif not entries:
        out("No language servers are configured; add [lsp_servers.NAME] with command and file_patterns.")
    for entry in [] if json_output else entries:
        patterns = ", ".join(entry["file_patterns"]) or "-"
        line = f"{entry['server']}: {_label(entry['status'])}  ({' '.join(entry['command'])}; files {patterns})"
        if entry.get("server_info"):
            info = entry["server_info"]
            line += f"  {info.get('name', '')} {info.get('version', '')}".rstrip()
        out(line)
        out(f"  {describe_confinement(entry['confinement'])}")
        if entry.get("reason"):
            out(f"  reason: {entry['reason']}")
        if entry.get("stderr_tail"):
            out("  stderr: " + entry["stderr_tail"].strip().replace("\n", "\n          "))
        if entry.get("log"):
            out(f"  log: {entry['log']}, ending with:")
            out("    " + entry["log_tail"].replace("\n", "\n    "))
    if any(e["status"] in ("missing_command", "failed") for e in entries):
        raise typer.Exit(int(ExitCode.FAILURE))


async def _probe(cli: Any, resolved: "ResolvedConfig", entries: list[dict[str, Any]], confine: dict[str, Any]) -> None:
    from kairox.lsp import LspServerLifecycle, LspStartupError

    for entry in entries:
        if entry["status"] != "idle":
            continue
        name = entry["server"]
        config = resolved.config.lsp_servers[name]
        async with LspServerLifecycle(
            name,
            config,
            workspace=resolved.workspace,
            events=cli.events(),
            base_dir=resolved.base_dir(f"lsp_servers.{name}"),
            confinement=confine[name],
        ) as server:
            try:
                client = await server.ensure_running()
                entry.update(
                    status="ready",
                    server_info=client.server_info,
                    position_encoding=client.position_encoding,
                    capabilities=sorted(k for k in client.capabilities if k.endswith("Provider")),
                )
            except LspStartupError as exc:
                entry.update(status="failed", reason=exc.reason, stderr_tail=exc.stderr_tail[-600:])
            entry["confinement"] = server.confinement_state
        if entry["status"] == "ready":
            entry["stopped_after_probe"] = True
            err(f"{name}: started and stopped again")


@dap_app.command("sessions")
def dap_sessions(ctx: typer.Context, json_output: JsonOption = False) -> None:
    """Show the configured debug adapters and the debug sessions of this process (sessions live inside an
    agent session or `kairox serve`; a fresh command has none)."""
    cli = state(ctx)
    resolved = cli.resolve()
    entries = _entries(resolved, "dap")
    if json_output:
        out_json({"workspace": str(resolved.workspace), "adapters": entries, "sessions": []})
        return
    if not entries:
        out("No debug adapters are configured; add [dap_servers.NAME] with command (e.g. python -m debugpy.adapter).")
    for entry in entries:
        available = "ready to launch" if entry["status"] == "idle" else _label(entry["status"])
        out(f"{entry['server']}: {available}  ({' '.join(entry['command'])})")
    out("No debug sessions in this process.")
