"""The ``kairox`` command line (U1). Commands parse, call the runtime, render; no feature logic here.

``kairox --version`` and ``kairox --help`` answer before the command-line toolkit loads: importing it alone takes
several times as long as starting the interpreter. The top-level help is the toolkit's own rendering, stored in
``_root_help.py`` (a test keeps the two equal; ``write_root_help`` in ``_app.py`` regenerates it).
"""

import os
import sys

_HELP_COLUMNS = 80
"""The stored help is the rendering for a terminal this wide or wider (the toolkit wraps at 78 characters)."""


def _columns() -> int:
    """The terminal width the toolkit would wrap the help to (``COLUMNS`` first, as ``shutil`` reads it)."""
    try:
        columns = int(os.environ.get("COLUMNS", "0"))
    except ValueError:
        columns = 0
    stream = sys.__stdout__
    if columns <= 0 and stream is not None:
        try:
            columns = os.get_terminal_size(stream.fileno()).columns
        except (AttributeError, ValueError, OSError):
            columns = 0
    return columns if columns > 0 else _HELP_COLUMNS


def main() -> None:
    args = sys.argv[1:]
    if args == ["--version"]:
        from kairox import __version__

        sys.stdout.write(f"kairox {__version__}\n")
        return
    if len(args) == 1 and args[0] in ("-h", "--help") and _columns() >= _HELP_COLUMNS:
        from kairox.cli._root_help import ROOT_HELP

        sys.stdout.write(ROOT_HELP)
        return
    from kairox.cli._app import main as run

    try:
        run()
    except SystemExit as exc:
        _end_now(exc.code)
        raise


def _end_now(code: object) -> None:
    """``os._exit`` once a command said its work is done (``exit_at_once``), after what a normal exit would still
    run that matters: the ``atexit`` functions (logging's flush among them) and the flush of stdout and stderr.
    Not while a thread that is not a daemon runs (a normal exit would wait for it)."""
    from kairox.cli._common import exits_at_once

    if not exits_at_once() or not (code is None or isinstance(code, int)):
        return
    import threading

    if any(t.is_alive() and not t.daemon for t in threading.enumerate() if t is not threading.main_thread()):
        return
    import atexit

    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # a closed pipe: nothing more can reach it
            pass
    os._exit(code or 0)


__all__ = ["main"]
