"""``kairox context`` (what the model is told and may call) and ``kairox doctor`` (what is broken, and how
to fix it)."""

from typing import TYPE_CHECKING, Annotated, Any

import typer

from kairox.cli._common import ExitCode, JsonOption, err, fail, out, out_json, state

if TYPE_CHECKING:
    from kairox.errors import Diagnostic
    from kairox.runtime import ExtensionContext


def context(
    ctx: typer.Context,
    as_json: JsonOption = False,
    provider: Annotated[
        str | None,
        typer.Option(
            "--provider", help="Print the tool definitions as this provider gets them: openai, anthropic or gemini."
        ),
    ] = None,
) -> None:
    """The prompt context, the model-visible tools and the diagnostics of the workspace."""
    from kairox.cli._notices import ShownWarnings, held_back_note
    from kairox.cli._runtime import with_context
    from kairox.errors import Severity
    from kairox.registry import ModelProvider

    if provider is not None and provider not in {p.value for p in ModelProvider}:
        fail(f"unknown provider {provider!r}; use openai, anthropic or gemini", ExitCode.USAGE)

    async def collect(context: "ExtensionContext") -> tuple[dict[str, Any], list["Diagnostic"], int]:
        data = context.to_json()
        problems: list[Diagnostic] = []
        if provider is not None:
            definitions, problems = context.registry.definitions(provider)
            data["definitions"] = definitions
            data["diagnostics"] += [d.to_json() for d in problems]
        shown, held = ShownWarnings(context.resolved.home).split(
            d for d in [*context.diagnostics, *problems] if d.severity is not Severity.INFO
        )
        return data, shown, held

    data, shown, held = with_context(state(ctx), collect)
    if provider is not None:
        out_json(data["definitions"])
    elif as_json:
        out_json(data)
    else:
        out(data["prompt_context"].rstrip("\n") + "\n\nTools:")
        width = max((len(t["name"]) for t in data["tools"]), default=0)
        for tool in data["tools"]:  # where it comes from, once: `builtin`, `lsp`, `mcp notes`, `plugin demo`
            origin = tool["origin"] if tool["origin"] not in (None, tool["source"]) else ""
            out(f"- {tool['name']:<{width}}  {tool['source']} {origin}".rstrip())
    for diagnostic in shown:
        err(f"{diagnostic.severity}: {diagnostic.location()}: {diagnostic.reason}")
    if held:
        err(held_back_note(held))


def doctor(ctx: typer.Context, as_json: JsonOption = False) -> None:
    """Every extension that failed to load and how to fix it, plus the programs Kairox relies on.

    Exits 1 only when something required is broken: the configuration, an MCP server with ``required = true``,
    or a required program. Other failures are listed with their fix, and the exit code stays 0.
    """
    from kairox.cli._runtime import with_context
    from kairox.runtime import doctor_lines, doctor_report

    async def examine(context: "ExtensionContext") -> dict[str, Any]:
        return doctor_report(context)

    # a failed required server is reported like the others (and fails doctor), not raised before the report
    report = with_context(state(ctx), examine, raise_on_required=False)
    if as_json:
        out_json(report)
    else:
        for line in doctor_lines(report):
            out(line)
    if not report["ok"]:
        raise typer.Exit(int(ExitCode.FAILURE))


def register(app: typer.Typer) -> None:
    app.command("context")(context)
    app.command("doctor")(doctor)
