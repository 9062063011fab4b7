"""``kairox tui``: the terminal front end. Textual is imported here, when the command runs, never before."""

import sys

import typer

from kairox.cli._common import ExitCode, ModelOption, ProviderOption, ResumeOption, exit_at_once, fail, state


def tui(
    ctx: typer.Context, model: ModelOption = None, model_provider: ProviderOption = None, resume: ResumeOption = None
) -> None:
    """Open the terminal UI: conversation, live server status and event trace, approvals, extension panels."""
    if not (sys.stdin.isatty() and sys.stdout.isatty()):
        fail("kairox tui needs a terminal; use `kairox run PROMPT` in scripts", ExitCode.USAGE)
    cli = state(ctx)
    resolved = cli.resolve()
    from kairox.tui import run_app

    options = cli.runtime_options()
    run_app(options, resolved, model=model, provider=model_provider, resume=resume)
    exit_at_once()  # the app has left its session (every server stopped) and given the terminal back


def register(app: typer.Typer) -> None:
    app.command("tui")(tui)
