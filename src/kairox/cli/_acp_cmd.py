"""``kairox acp``: the Agent Client Protocol agent on stdin/stdout, for editors. Loaded when the command runs."""

import typer

from kairox.cli._common import exit_at_once, state


def acp(ctx: typer.Context) -> None:
    """Serve the Agent Client Protocol on stdin/stdout (for editors: Zed, JetBrains, Neovim, Emacs); docs/editors.md."""
    import anyio

    from kairox.acp import serve

    anyio.run(serve, state(ctx).runtime_options())
    exit_at_once()  # every session was left and its servers stopped


def register(app: typer.Typer) -> None:
    app.command("acp")(acp)
