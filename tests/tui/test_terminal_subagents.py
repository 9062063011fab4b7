"""The real `kairox tui` in tmux with a subagent: a prompt whose answer calls `task`, the child's calls shown
nested under the task with its progress, the task's answer, `/agents` listing the agents; no process behind."""

import os
import subprocess
from pathlib import Path

import pytest
from tests.agent._support import make_workspace, user_config
from tests.servers.model_server import ScriptedModelServer
from tests.tui.test_terminal import KAIROX, descendants, tmux, wait_for

pytestmark = [pytest.mark.timeout(180)]


def test_a_task_shows_its_childs_calls_nested_and_agents_lists_the_agent(tmp_path: Path, isolated_home: Path) -> None:
    workspace = make_workspace(tmp_path / "repo")
    agents = workspace / ".claude" / "agents"
    agents.mkdir(parents=True)
    (agents / "reviewer.md").write_text(
        "---\nname: reviewer\ndescription: Reviews code.\ntools: Read, Grep\n---\nREVIEWER: read and judge.\n",
        encoding="utf-8",
    )
    key = "sk-test-0123456789abcdef"
    task = {"subagent_type": "reviewer", "description": "review the cart", "prompt": "Review shop/cart.py"}
    script = [
        {"reply": "tool_calls", "calls": [{"id": "t1", "name": "task", "arguments": task}]},
        {"reply": "text", "text": "The reviewer found nothing wrong.", "expect": {"tool_results": {"t1": "Looks"}}},
    ]
    child = [
        {"reply": "tool_calls", "calls": [{"id": "r1", "name": "fs_read", "arguments": {"path": "shop/cart.py"}}]},
        {"reply": "tool_calls", "calls": [{"id": "r2", "name": "fs_read", "arguments": {"path": "notes.txt"}}]},
        {"reply": "text", "text": "Looks fine."},
    ]
    with ScriptedModelServer("openai", script, routes={"REVIEWER:": child}) as server:
        user_config(isolated_home, server, wire="openai")
        env = {**os.environ, "KAIROX_HOME": str(isolated_home), "KAIROX_TEST_MODEL_KEY": key}
        subprocess.run([str(KAIROX), "trust"], cwd=workspace, env=env, check=True, capture_output=True, timeout=60)
        session = f"kx-tui-agents-{os.getpid()}"
        python_path = f"PYTHONPATH={os.environ['PYTHONPATH']} " if os.environ.get("PYTHONPATH") else ""
        shell = (
            f"cd {workspace} && env -u COLUMNS -u LINES {python_path}KAIROX_HOME={isolated_home}"
            f" KAIROX_TEST_MODEL_KEY={key} PATH={os.environ['PATH']} "
            f"{KAIROX} tui; echo KAIROX-EXITED $?; sleep 60"
        )
        tmux("new-session", "-d", "-s", session, "-x", "150", "-y", "40", shell)
        try:
            pane_pid = int(tmux("display-message", "-p", "-t", session, "#{pane_pid}").strip())
            wait_for(session, "scripted/scripted-model")
            tmux("send-keys", "-t", session, "-l", "Have the cart reviewed")
            tmux("send-keys", "-t", session, "Enter")
            screen = wait_for(session, "The reviewer found nothing wrong.")
            lines = screen.splitlines()
            task_line = next(i for i, line in enumerate(lines) if "▶ task reviewer" in line)
            children = [line for line in lines[task_line + 1 : task_line + 3]]
            assert all("▶ fs.read" in line for line in children), screen
            indent = lambda line: len(line) - len(line.lstrip())  # noqa: E731
            assert all(indent(line) > indent(lines[task_line]) for line in children), screen
            assert "shop/cart.py" in children[0] and "notes.txt" in children[1], screen
            assert "agent reviewer: completed after 2 call(s)" in screen, screen
            tmux("send-keys", "-t", session, "-l", "/agents")
            tmux("send-keys", "-t", session, "Enter")
            screen = wait_for(session, "(the task tool's agents")
            assert "general-purpose  offered" in screen and "reviewer         offered" in screen, screen
            tmux("send-keys", "-t", session, "Escape")
            tmux("send-keys", "-t", session, "C-c")
            wait_for(session, "KAIROX-EXITED 0", timeout=60)
            assert [args for args in descendants(pane_pid) if not args.startswith("sleep")] == []
        finally:
            subprocess.run(["tmux", "capture-pane", "-p", "-t", session], capture_output=True)
            tmux("kill-session", "-t", session)
