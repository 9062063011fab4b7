"""U1: ``kairox --help`` and ``kairox --version`` answer without loading the command-line toolkit, and say exactly
what the toolkit would."""

import json
import os
import subprocess
import sys
from pathlib import Path

from kairox.cli._app import root_help
from kairox.cli._root_help import ROOT_HELP

# the command as `kairox` runs it, then the modules it loaded
FAST = """
import sys, json
sys.argv = ["kairox", *{args!r}]
from kairox.cli import main
try:
    main()
except SystemExit as exc:
    assert not exc.code, exc.code
print(json.dumps(sorted({{m.split('.')[0] for m in sys.modules}})))
"""
# the same command through the toolkit, with no fast path
TOOLKIT = """
import sys
sys.argv = ["kairox", *{args!r}]
from kairox.cli._app import main
try:
    main()
except SystemExit as exc:
    assert not exc.code, exc.code
"""


def run(script: str, args: list[str], cwd: Path, columns: int) -> str:
    env = {**os.environ, "COLUMNS": str(columns)}
    proc = subprocess.run(
        [sys.executable, "-c", script.format(args=args)], capture_output=True, text=True, cwd=cwd, env=env, timeout=60
    )
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def test_the_stored_help_is_the_toolkits_rendering() -> None:
    assert root_help() == ROOT_HELP, (
        "a command or global option changed: run  python -c 'from "
        "kairox.cli._app import write_root_help; write_root_help()'"
    )


def test_help_and_version_print_what_the_toolkit_prints_without_loading_it(tmp_path: Path) -> None:
    for args in (["--help"], ["-h"], ["--version"]):
        fast, _, modules = run(FAST, args, tmp_path, 120).rpartition("\n[")
        assert fast + "\n" == run(TOOLKIT, args, tmp_path, 120), args
        loaded = set(json.loads("[" + modules))
        assert not loaded & {"typer", "click", "rich", "pydantic"}, (
            args,
            loaded & {"typer", "click", "rich", "pydantic"},
        )


def test_a_narrow_terminal_gets_the_help_wrapped_by_the_toolkit(tmp_path: Path) -> None:
    narrow = run(FAST, ["--help"], tmp_path, 60)
    assert "typer" in narrow.rpartition("\n[")[2]
    assert narrow.rpartition("\n[")[0] + "\n" == run(TOOLKIT, ["--help"], tmp_path, 60)
    assert narrow.rpartition("\n[")[0] + "\n" != ROOT_HELP
