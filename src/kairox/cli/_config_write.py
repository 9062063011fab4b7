"""What every command that writes a configuration file asks first: a write into a project or local file of an
untrusted workspace needs the user's say, through the rule every front end shares
(``kairox.runtime.authorize_config_write``, the one the GUI's approval dialog answers)."""

import functools
import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from kairox.cli._common import ExitCode, fail

if TYPE_CHECKING:
    from kairox.config import ResolvedConfig

WriteYesOption = Annotated[
    bool,
    typer.Option(
        "--yes",
        "-y",
        help=(
            "Approve a write into a project or local file of an "
            "untrusted workspace (asked at a terminal, else refused)."
        ),
    ),
]
_NO_TERMINAL_HINT = (
    "there is no terminal to ask at: run the command again at one, or with --yes to approve this write once"
)


def authorize_config_write(resolved: "ResolvedConfig", file: Path, change: str, *, yes: bool) -> None:
    """Return when ``file`` may be written; else end the command with exit code 4, naming the file and the
    change and saying how to allow it. The user's file and a trusted workspace's files need no question; a file
    of an untrusted workspace is asked about at the terminal (y/N, Enter is no), approved by ``--yes``, and
    refused when there is nobody to ask, so a script never writes one silently."""
    if resolved.untrusted_file(file) is None and resolved.redirected_write(file) is None:
        # the shared rule says there is nothing to ask, and the runtime stays unloaded: no cost for a user-file write
        return
    import anyio

    from kairox import runtime
    from kairox.cli._approver import command_line_approver

    approver = command_line_approver(yes, hint=_NO_TERMINAL_HINT)
    try:
        anyio.run(functools.partial(runtime.authorize_config_write, resolved, file, change, approver=approver))
    except runtime.ConfigWriteDeniedError as exc:
        fail(str(exc), ExitCode.DENIED)


def change_text(key: str, value: Any) -> str:
    """``key = value`` as the question and a refusal show it, secrets redacted as ``config show`` redacts them.
    Raises ValueError on a malformed key."""
    from kairox.config import redact_tree, split_key

    parts = split_key(key)
    shown = redact_tree({parts[-1]: value}, parent=parts[-2] if len(parts) > 1 else "")[parts[-1]]
    return f"{key} = {json.dumps(shown, ensure_ascii=False, default=str)}"


def is_set(file: Path, key: str) -> bool:
    """Whether ``file`` sets ``key``, so that removing what is not there asks nothing; a file that does not
    parse counts as setting it (the writer then reports the error)."""
    import tomllib

    from kairox.config import split_key

    if not file.exists():
        return False
    try:
        node: Any = tomllib.loads(file.read_text(encoding="utf-8"))
        for part in split_key(key):
            if not isinstance(node, dict) or part not in node:
                return False
            node = node[part]
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return True
    return True
