"""A Kairox home reached through a symlink: every confined server (an MCP server, a language server, a debug
adapter) starts in the sandbox with its state folder bound at its real path, and answers."""

import json
import os
import subprocess
import sys
from pathlib import Path

import debugpy
import pytest

pytestmark = pytest.mark.timeout(300)

SERVERS = Path(__file__).resolve().parents[1] / "servers"
SITE = Path(debugpy.__file__).parent.parent
SOURCE = Path(__file__).resolve().parents[2] / "src"


def test_servers_start_confined_under_a_linked_home(tmp_path: Path) -> None:
    real, ws = tmp_path / "real", tmp_path / "ws"
    real.mkdir()
    ws.mkdir()
    (tmp_path / "link").symlink_to(real)
    home = tmp_path / "link"
    (ws / "app.py").write_text(
        "def compute(x):\n    total = x + 1\n    return total\n\n\nprint('total', compute(41))\n"
    )
    python, site = json.dumps(sys.executable), json.dumps(str(SITE))
    (real / "kairox.toml").write_text(f"""
[mcp_servers.basic]
command = {python}
args = [{json.dumps(str(SERVERS / "basic_server.py"))}]

[lsp_servers.jedi]
command = {python}
args = ["-c", "from jedi_language_server.cli import cli; cli()"]
env = {{ PYTHONPATH = {site} }}
file_patterns = ["app.py"]

[dap_servers.debugpy]
command = {python}
args = ["-m", "debugpy.adapter"]
env = {{ PYTHONPATH = {site} }}
languages = ["python"]
""")
    env = {
        **os.environ,
        "KAIROX_HOME": str(home),
        "KAIROX_SYSTEM_CONFIG": str(tmp_path / "none.toml"),
        "PYTHONPATH": f"{SOURCE}:{SITE}",
    }

    def kairox(*args: str) -> "subprocess.CompletedProcess[str]":
        return subprocess.run(
            [sys.executable, "-m", "kairox", *args],
            cwd=ws,
            env=env,
            capture_output=True,
            text=True,
            timeout=250,
            check=False,
        )

    status = kairox("mcp", "status", "--json")
    (basic,) = json.loads(status.stdout)["servers"]
    assert basic["status"] == "ready", status.stdout + status.stderr
    assert basic["confinement"]["confined"] is True, basic
    assert basic["confinement"]["state_dir"] == str(real / "servers" / "basic"), basic  # the real path, bound as such
    assert basic["tools"] >= 10, basic  # its tools listed
    calls = [
        ("mcp__basic__echo", {"message": "through the link"}),
        ("lsp.hover", {"path": "app.py", "line": 6, "column": 16}),
        ("dap.launch", {"program": "app.py", "breakpoints": [{"path": "app.py", "line": 3}]}),
        ("dap.variables", {}),
        ("dap.continue", {}),
    ]
    (tmp_path / "calls.jsonl").write_text("".join(json.dumps({"tool": t, "arguments": a}) + "\n" for t, a in calls))
    run = kairox("tools", "call", "--yes", "--script", str(tmp_path / "calls.jsonl"), "--json")
    results = [json.loads(line) for line in run.stdout.splitlines()]
    assert len(results) == len(calls), run.stdout + run.stderr
    echo, hover, launch, variables, ended = results
    assert echo["text"] == "through the link", echo
    assert "compute" in hover["text"], hover
    assert launch["structured"]["frame"]["line"] == 3, launch
    assert "x = 41 (int)" in variables["text"], variables
    assert "total 42" in ended["text"], ended
    lsp = kairox("lsp", "status", "--probe", "--json")
    (jedi,) = json.loads(lsp.stdout)["servers"]
    assert jedi["status"] == "ready" and jedi["confinement"]["confined"] is True, jedi
    assert jedi["confinement"]["state_dir"] == str(real / "servers" / "lsp.jedi"), jedi
    assert (real / "servers" / "dap.debugpy").is_dir()  # the adapter's own state folder, through the link
