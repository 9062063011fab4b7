"""The real `kairox tui` in tmux: typing `/` opens the completion menu with a plugin's command in it, Tab takes
it, `@` completes a workspace file into its arguments, and the command with its arguments reaches the scripted
model as the user's turn; its answer is shown."""

import os
import subprocess
from pathlib import Path

import pytest
from tests.agent._support import make_workspace, user_config
from tests.servers.model_server import ScriptedModelServer
from tests.tui.test_commands import COMMIT
from tests.tui.test_terminal import KAIROX, descendants, tmux, wait_for

pytestmark = [pytest.mark.timeout(180)]


def test_a_plugin_command_from_the_completion_menu_sends_its_prompt(
    tmp_path: Path, isolated_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    workspace = make_workspace(tmp_path / "repo")
    commands = workspace / ".kairox" / "plugins" / "commit-commands" / "commands"
    commands.mkdir(parents=True)
    (commands / "commit.md").write_text(COMMIT, encoding="utf-8")
    key = "sk-test-0123456789abcdef"
    script = [
        {
            "reply": "text",
            "text": "Committed as asked.",
            "expect": {"last_user_contains": "Commit with the message: tidy @shop/cart.py the cart"},
        }
    ]
    with ScriptedModelServer("openai", script) as server:
        user_config(isolated_home, server, wire="openai")
        env = {**os.environ, "KAIROX_HOME": str(isolated_home), "KAIROX_TEST_MODEL_KEY": key}
        subprocess.run([str(KAIROX), "trust"], cwd=workspace, env=env, check=True, capture_output=True, timeout=60)
        session = f"kx-tui-cmd-{os.getpid()}"
        # COLUMNS and LINES inherited from the test run would fix the TUI at their size (80x24), not the pane's
        python_path = f"PYTHONPATH={os.environ['PYTHONPATH']} " if os.environ.get("PYTHONPATH") else ""
        shell = (
            f"cd {workspace} && env -u COLUMNS -u LINES {python_path}KAIROX_HOME={isolated_home}"
            f" KAIROX_TEST_MODEL_KEY={key} PATH={os.environ['PATH']} "
            f"{KAIROX} tui; echo KAIROX-EXITED $?; sleep 60"
        )
        tmux("new-session", "-d", "-s", session, "-x", "150", "-y", "40", shell)
        try:
            pane_pid = int(tmux("display-message", "-p", "-t", session, "#{pane_pid}").strip())
            wait_for(session, "scripted/scripted-model")  # the session's start notice
            tmux("send-keys", "-t", session, "-l", "/commit")
            screen = wait_for(session, "/commit-commands:commit")
            assert "MESSAGE  Commit the staged changes with a message." in screen and "Tab takes" in screen, screen
            tmux("send-keys", "-t", session, "Tab")
            tmux("send-keys", "-t", session, "-l", "tidy @sh")
            screen = wait_for(session, "@shop/cart.py")  # the workspace's files in the menu
            assert "@shop/" in screen
            tmux("send-keys", "-t", session, "Tab")  # the folder, then its one file
            wait_for(session, "/commit tidy @shop/")
            tmux("send-keys", "-t", session, "Tab")
            wait_for(session, "/commit tidy @shop/cart.py")
            tmux("send-keys", "-t", session, "-l", "the cart")
            wait_for(session, "/commit tidy @shop/cart.py the cart")
            tmux("send-keys", "-t", session, "Enter")
            screen = wait_for(session, "Committed as asked.")
            assert "› /commit tidy @shop/cart.py the cart" in screen
            tmux("send-keys", "-t", session, "C-c")
            wait_for(session, "KAIROX-EXITED 0", timeout=60)
            assert [args for args in descendants(pane_pid) if not args.startswith("sleep")] == []
        finally:
            tmux("kill-session", "-t", session)
