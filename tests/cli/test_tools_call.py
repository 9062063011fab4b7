"""``kairox tools call`` starts only what a call needs, and one process takes many calls (--script, --interactive)."""

import json
import sys
from pathlib import Path

import pytest
from tests.dap._fixtures import PROGRAM
from tests.helpers import kairox

SERVERS = Path(__file__).resolve().parents[1] / "servers"

# each start of a server leaves a file named for the server and its pid, then the real server runs
RECORDING_SERVER = """import os, runpy, sys
from pathlib import Path
name, record, server = sys.argv[1:4]
Path(record, f"{name}-{os.getpid()}").touch()
sys.argv = [server]
runpy.run_path(server, run_name="__main__")
"""


@pytest.fixture
def ws(tmp_path: Path, isolated_home: Path) -> Path:
    workspace = tmp_path / "ws"
    (workspace / ".git").mkdir(parents=True)
    (tmp_path / "started").mkdir()
    wrapper = tmp_path / "recording_server.py"
    wrapper.write_text(RECORDING_SERVER)
    servers = "".join(
        f"[mcp_servers.{name}]\ncommand = {json.dumps(sys.executable)}\n"
        f"args = {json.dumps([str(wrapper), name, str(tmp_path / 'started'), str(SERVERS / 'basic_server.py')])}\n"
        for name in ("alpha", "beta", "gamma")
    )
    (isolated_home / "kairox.toml").write_text(
        servers + f'\n[dap_servers.debugpy]\ncommand = {json.dumps(sys.executable)}\nargs = ["-m", "debugpy.adapter"]\n'
    )
    (workspace / "program.py").write_text(PROGRAM)
    return workspace


def started(ws: Path) -> list[str]:
    return sorted(p.name.split("-")[0] for p in (ws.parent / "started").iterdir())


def test_a_built_in_tool_starts_no_mcp_server(ws: Path) -> None:
    (ws / "notes.txt").write_text("hello\n")
    run = kairox("-w", ws, "tools", "call", "fs.read", '{"path": "notes.txt"}')
    assert run.code == 0, run.stderr
    assert "hello" in run.stdout
    assert started(ws) == []


def test_an_mcp_tool_starts_only_its_own_server(ws: Path) -> None:
    run = kairox("-w", ws, "tools", "call", "mcp__beta__echo", '{"message": "hi"}', "--yes")
    assert run.code == 0, run.stderr
    assert run.stdout.strip() == "hi"
    assert started(ws) == ["beta"]


def test_a_script_runs_every_call_in_one_process_and_starts_the_servers_it_names(ws: Path) -> None:
    script = ws.parent / "calls.jsonl"
    script.write_text(
        '{"tool": "mcp__gamma__echo", "arguments": {"message": "one"}}\n'
        "# a comment, then a blank line\n\n"
        '{"tool": "mcp__gamma__echo", "arguments": {"message": "two"}}\n'
    )
    run = kairox("-w", ws, "tools", "call", "--script", script, "--json", "--yes")
    assert run.code == 0, run.stderr
    replies = [json.loads(line) for line in run.stdout.splitlines()]
    assert [(r["tool"], r["where"], r["text"]) for r in replies] == [
        ("mcp__gamma__echo", f"{script}:1", "one"),
        ("mcp__gamma__echo", f"{script}:4", "two"),
    ]
    assert started(ws) == ["gamma"]


def test_a_bad_script_line_is_reported_with_its_line_before_any_call_runs(ws: Path) -> None:
    script = ws.parent / "calls.jsonl"
    script.write_text('{"tool": "fs.write", "arguments": {"path": "x.txt", "content": "x"}}\n{"arguments": {}}\n')
    run = kairox("-w", ws, "tools", "call", "--script", script, "--yes")
    assert run.code == 2
    assert run.stderr.strip() == (
        f'kairox: {script}:2: no "tool" name; a call is {{"tool": NAME, "arguments": {{...}}}}'
    )
    assert not (ws / "x.txt").exists()


def test_a_name_and_a_script_together_are_a_usage_error(ws: Path) -> None:
    run = kairox("-w", ws, "tools", "call", "fs.read", "--script", ws.parent / "calls.jsonl")
    assert (run.code, run.stderr.strip()) == (2, "kairox: give one of: a tool NAME, --script FILE, --interactive")


DEBUG_CALLS = [
    {"tool": "dap.launch", "arguments": {"program": "program.py", "breakpoints": [{"path": "program.py", "line": 6}]}},
    {"tool": "dap.stack_trace", "arguments": {}},
    {"tool": "dap.variables", "arguments": {}},
    {"tool": "dap.evaluate", "arguments": {"expression": "x * 2"}},
    {"tool": "dap.continue", "arguments": {}},
]


@pytest.mark.timeout(120)
def test_one_script_drives_a_debug_session_from_launch_to_the_end(ws: Path) -> None:
    script = ws.parent / "debug.jsonl"
    script.write_text("".join(json.dumps(call) + "\n" for call in DEBUG_CALLS))
    run = kairox("-w", ws, "tools", "call", "--script", script, "--yes", "--json")
    assert run.code == 0, run.stdout + run.stderr
    launch, stack, variables, evaluated, continued = (json.loads(line) for line in run.stdout.splitlines())
    assert launch["structured"]["frame"]["line"] == 6
    assert launch["text"].splitlines()[1] == "breakpoint program.py:6 set"
    assert [frame["name"] for frame in stack["structured"]["frames"]][:3] == ["compute", "main", "<module>"]
    assert "n = 1 (int)" in variables["text"].splitlines()
    assert evaluated["text"] == "84 (int)"
    assert continued["structured"]["state"] == "ended"
    assert "total 43" in continued["text"]
    assert started(ws) == []


@pytest.mark.timeout(120)
def test_the_interactive_prompt_takes_calls_until_exit(ws: Path) -> None:
    typed = (
        "dap.launch "
        + json.dumps(DEBUG_CALLS[0]["arguments"])
        + '\ndap.evaluate {"expression": "n + 1"}\nnot json {\nexit\n'
    )
    run = kairox("-w", ws, "tools", "call", "--interactive", "--yes", stdin=typed)
    assert run.code == 2, run.stdout + run.stderr  # the bad line is a usage error; the calls around it ran
    assert "── dap.evaluate (<stdin>:2)\n2 (int)\n" in run.stdout
    assert "kairox: <stdin>:3: the arguments are not valid JSON" in run.stderr
    assert run.stderr.count("kairox> ") == 4
