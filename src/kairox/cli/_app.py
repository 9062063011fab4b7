"""``kairox``: global options and the command groups. Each group lives in its own module."""

import sys
from pathlib import Path
from typing import Annotated

import typer

from kairox import __version__
from kairox.cli import (
    _config_cmds,
    _context_cmds,
    _extension_cmds,
    _gui_cmd,
    _run_cmds,
    _serve_cmd,
    _tui_cmds,
)
from kairox.cli._common import CliState, ExitCode
from kairox.cli._help import HELP_OPTIONS, plain_help

app = typer.Typer(
    name="kairox",
    help="Kairox: MCP servers, skills, plugins, hooks, LSP and DAP for coding agents, behind one permission gate.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
    rich_markup_mode=None,
    context_settings={"help_option_names": HELP_OPTIONS},
)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"kairox {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    ctx: typer.Context,
    workspace: Annotated[
        Path | None, typer.Option("--workspace", "-w", metavar="DIR", help="Workspace root (default: nearest folder with .git, kairox.toml or .kairox).")
    ] = None,
    profile: Annotated[str | None, typer.Option("--profile", "-p", metavar="NAME", help="Apply [profiles.NAME].")] = None,
    config: Annotated[
        list[str] | None, typer.Option("--config", "-c", metavar="KEY=VALUE", help="Override a key: -c policy.network_access=true (value parsed as TOML, else a string).")
    ] = None,
    trace: Annotated[Path | None, typer.Option("--trace", metavar="FILE", help="Write every event of this command as JSON lines.")] = None,
    version: Annotated[bool, typer.Option("--version", callback=_version, is_eager=True, help="Print the version.")] = False,
) -> None:
    ctx.obj = CliState(workspace=workspace, profile=profile, overrides=list(config or []), trace=trace)


_config_cmds.register(app)
_context_cmds.register(app)
_extension_cmds.register(app)
_run_cmds.register(app)
_serve_cmd.register(app)
_tui_cmds.register(app)
_gui_cmd.register(app)


def main() -> None:
    from kairox.errors import KairoxError

    command = typer.main.get_command(app)
    plain_help(command)
    args = sys.argv[1:]
    try:
        # `kairox` alone at a terminal opens the TUI; in a pipe or a script it prints the help as before
        command(args=["tui"] if not args and sys.stdin.isatty() and sys.stdout.isatty() else args, prog_name="kairox")
    except KairoxError as exc:  # what a command did not report itself still ends with a message, not a traceback
        sys.stderr.write(f"kairox: {exc}\n")
        sys.exit(int(ExitCode.FAILURE))
