"""``kairox acp``: the Agent Client Protocol agent on stdin/stdout, for editors. Loaded when the command runs."""

from typing import Annotated

import typer

from kairox.cli._common import exit_at_once, state


def acp(
    ctx: typer.Context,
    model: Annotated[
        str | None, typer.Option("--model", "-m", help="Model name (default: `model` of the configuration).")
    ] = None,
    model_provider: Annotated[
        str | None,
        typer.Option(
            "--model-provider", help="Which [model_providers.NAME] serves it (openai, anthropic, ollama built in)."
        ),
    ] = None,
) -> None:
    """Serve the Agent Client Protocol on stdin/stdout (for editors: Zed, JetBrains, Neovim, Emacs); docs/editors.md."""
    import anyio

    from kairox.acp import serve
    from kairox.runtime import RuntimeOptions

    cli = state(ctx)
    options = RuntimeOptions(workspace=cli.workspace, profile=cli.profile, overrides=tuple(cli.overrides))
    anyio.run(lambda: serve(options, model=model, provider=model_provider))
    exit_at_once()  # every session was left and its servers stopped


def register(app: typer.Typer) -> None:
    app.command("acp")(acp)
