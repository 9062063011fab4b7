"""``kairox gui``: the web GUI on 127.0.0.1. Starlette and uvicorn are imported here, when the command runs."""

from typing import Annotated

import typer

from kairox.cli._common import ExitCode, ModelOption, ProviderOption, fail, state


def gui(
    ctx: typer.Context,
    port: Annotated[int, typer.Option("--port", help="Port on 127.0.0.1 (0, the default, picks a free one).")] = 0,
    no_browser: Annotated[
        bool, typer.Option("--no-browser", help="Print the URL only; do not open a browser.")
    ] = False,
    model: ModelOption = None,
    model_provider: ProviderOption = None,
) -> None:
    """Open the web GUI: servers with live status, the MCP catalog, skills and plugins settings, the session.

    Serves on 127.0.0.1 only, with a token made for this run in the URL it prints (every request needs it).
    Ctrl+C stops it and every server it started."""
    if not 0 <= port <= 65535:
        fail(f"--port must be 0..65535, not {port}", ExitCode.USAGE)
    cli = state(ctx)
    cli.resolve()  # a broken configuration file stops here, with file and line
    import anyio

    from kairox.web import WebOptions, serve_gui

    options = WebOptions(
        workspace=cli.workspace,
        profile=cli.profile,
        overrides=tuple(cli.overrides),
        port=port,
        model=model,
        provider=model_provider,
    )
    opener = None
    if not no_browser:
        import webbrowser

        opener = webbrowser.open
    try:
        anyio.run(lambda: serve_gui(options, open_browser=opener))
    except OSError as exc:
        fail(f"kairox gui could not listen on 127.0.0.1:{port}: {exc}", ExitCode.FAILURE)
    except KeyboardInterrupt:
        pass


def register(app: typer.Typer) -> None:
    app.command("gui")(gui)
