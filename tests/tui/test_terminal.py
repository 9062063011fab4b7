"""The real `kairox tui` in tmux on the example workspace: the trace panel lists its MCP servers as ready and
its language server as idle, /doctor opens, and Ctrl-C (or /quit) leaves with no process behind. `kairox`
alone at a terminal opens the same TUI."""

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

# tmux is installed by `make install` (scripts/system-packages.sh) and checked by the pre-flight
pytestmark = [pytest.mark.timeout(180)]

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "workspace"
KAIROX = Path(sys.executable).parent / "kairox"


def tmux(*args: str) -> str:
    return subprocess.run(["tmux", *args], capture_output=True, text=True, timeout=30).stdout


def wait_for(session: str, check: str, timeout: float = 90) -> str:
    deadline = time.monotonic() + timeout
    screen = ""
    while time.monotonic() < deadline:
        screen = tmux("capture-pane", "-p", "-t", session)
        if check in screen:
            return screen
        time.sleep(0.3)
    raise AssertionError(f"{check!r} did not appear; the screen was:\n{screen}")


def descendants(pid: int) -> list[str]:
    found = subprocess.run(["ps", "-e", "-o", "pid=,ppid=,args="], capture_output=True, text=True).stdout.splitlines()
    children: dict[int, list[tuple[int, str]]] = {}
    for line in found:
        parts = line.split(None, 2)
        children.setdefault(int(parts[1]), []).append((int(parts[0]), parts[2] if len(parts) > 2 else ""))
    result, todo = [], [pid]
    while todo:
        for child, args in children.get(todo.pop(), []):
            result.append(args)
            todo.append(child)
    return result


@pytest.mark.parametrize(("command", "leave"), [("tui", "ctrl-c"), ("", "slash-quit")])
def test_kairox_tui_in_tmux_shows_servers_opens_doctor_and_exits_cleanly(
    command: str, leave: str, isolated_home: Path
) -> None:
    env = {**os.environ, "KAIROX_HOME": str(isolated_home), "PATH": f"{KAIROX.parent}:{os.environ['PATH']}"}
    subprocess.run([str(KAIROX), "trust"], cwd=EXAMPLE, env=env, check=True, capture_output=True, timeout=60)
    session = f"kx-tui-{os.getpid()}-{leave}"
    # the tmux server keeps its own environment: the code under test is named here (PYTHONPATH), not inherited
    python_path = f"PYTHONPATH={os.environ['PYTHONPATH']} " if os.environ.get("PYTHONPATH") else ""
    shell = (
        f"cd {EXAMPLE} && env -u COLUMNS -u LINES {python_path}KAIROX_HOME={isolated_home}"
        f" PATH={env['PATH']} {KAIROX} {command}; echo KAIROX-EXITED $?; sleep 60"
    )
    tmux("new-session", "-d", "-s", session, "-x", "150", "-y", "40", shell)
    try:
        pane_pid = int(tmux("display-message", "-p", "-t", session, "#{pane_pid}").strip())
        wait_for(session, "● mcp notes   ready")
        screen = wait_for(session, "● mcp clock   ready")  # the example plugin's server
        assert "● mcp notes   ready" in screen and "◌ lsp python  idle" in screen
        running = descendants(pane_pid)
        assert any("notes_server.py" in args for args in running), running
        tmux("send-keys", "-t", session, "/doctor", "Enter")
        screen = wait_for(session, "Environment:")  # the report `kairox doctor` prints
        assert "Doctor   (Esc closes)" in screen and "bwrap" in screen
        tmux("send-keys", "-t", session, "Escape")
        time.sleep(0.5)  # the panel closes before the next keys: they are for the main screen
        if leave == "ctrl-c":
            tmux("send-keys", "-t", session, "C-c")
        else:
            tmux("send-keys", "-t", session, "-l", "/quit")
            time.sleep(0.3)
            tmux("send-keys", "-t", session, "Enter")  # the completion menu is open on /quit: Enter runs it
        wait_for(session, "KAIROX-EXITED 0", timeout=60)
        left = [args for args in descendants(pane_pid) if not args.startswith("sleep")]
        assert left == [], left
    finally:
        tmux("kill-session", "-t", session)
