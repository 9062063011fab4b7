"""U1: `kairox --help` and `kairox config ...` never import the MCP SDK or the UI toolkits."""

import json
import subprocess
import sys
from pathlib import Path

HEAVY = ("mcp", "textual", "starlette")

PROBE = """
import sys, runpy, json
sys.argv = ["kairox", *{args!r}]
code = 0
try:
    runpy.run_module("kairox", run_name="__main__")
except SystemExit as exc:
    code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
print("\\n" + json.dumps({{"exit_code": code, "modules": sorted({{m.split('.')[0] for m in sys.modules}})}}))
"""


def loaded_modules(args: list[str], cwd: Path) -> set[str]:
    """The top-level modules the command imported; the command itself must have succeeded."""
    proc = subprocess.run(
        [sys.executable, "-c", PROBE.format(args=args)], capture_output=True, text=True, cwd=cwd, timeout=60
    )
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout.strip().splitlines()[-1])
    assert report["exit_code"] == 0, (args, proc.stderr)
    return set(report["modules"])


def test_help_and_config_commands_stay_light(tmp_path: Path) -> None:
    for args in (["--help"], ["config", "show"], ["config", "paths", "--json"], ["config", "validate"]):
        modules = loaded_modules(args, tmp_path)
        assert "kairox" in modules
        assert not modules & set(HEAVY), (args, modules & set(HEAVY))


def test_skills_and_plugins_lists_never_import_the_mcp_sdk(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / "kairox.toml").write_text('[mcp_servers.x]\ncommand = "never-started"\n', encoding="utf-8")
    for args in (["skills", "list"], ["plugins", "list"], ["skills", "list", "--json"]):
        modules = loaded_modules(args, tmp_path)
        assert "kairox" in modules
        assert "mcp" not in modules, args


def test_no_command_but_tui_imports_textual(tmp_path: Path) -> None:
    """Every command group's help and the commands that run without servers stay free of textual; without a
    terminal, `kairox` alone prints the help instead of opening the TUI."""
    for args in (
        ["tui", "--help"],
        ["run", "--help"],
        ["mcp", "--help"],
        ["doctor", "--help"],
        ["sessions", "list"],
        ["skills", "list"],
        ["plugins", "list"],
        ["hooks", "--help"],
        ["tools", "--help"],
        ["context", "--help"],
        ["policy", "--help"],
        ["lsp", "--help"],
        ["dap", "--help"],
        ["trust", "--list"],
        ["config", "--help"],
    ):
        modules = loaded_modules(args, tmp_path)
        assert "kairox" in modules
        assert "textual" not in modules, args
    bare = subprocess.run(
        [sys.executable, "-c", PROBE.format(args=[])],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=60,
        stdin=subprocess.DEVNULL,
    )
    report = json.loads(bare.stdout.strip().splitlines()[-1])
    assert "Usage: kairox" in bare.stdout + bare.stderr and "textual" not in report["modules"]
