"""``kairox acp`` driven by an editor written on the ACP TypeScript SDK (the npm package, run with Node from npm),
against the scripted model: what Zed-like clients built on that SDK see."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from tests.agent._support import NODE, SERVERS, user_config
from tests.agent.conftest import MODEL_KEY
from tests.servers.model_server import ScriptedModelServer

from kairox.config import trust_workspace

pytestmark = pytest.mark.timeout(120)


def editor_run(plan: dict[str, object], tmp_path: Path) -> dict[str, object]:
    """The TypeScript editor's run of ``plan``: what it saw, as it prints it."""
    (tmp_path / "plan.json").write_text(json.dumps(plan), encoding="utf-8")
    env = {**os.environ, "KAIROX_TEST_MODEL_KEY": MODEL_KEY}
    done = subprocess.run(
        [NODE, SERVERS / "acp_editor.mjs", tmp_path / "plan.json", "--", sys.executable, "-m", "kairox", "acp"],
        capture_output=True,
        text=True,
        env=env,
        timeout=100,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    result: dict[str, object] = json.loads(done.stdout)
    return result


def test_the_typescript_sdks_editor_sees_chunks_calls_its_buffer_read_a_diff_written_a_rejection_and_a_command(
    workspace: Path, isolated_home: Path, tmp_path: Path
) -> None:
    notes, todo = str(workspace / "notes.txt"), workspace / "todo.txt"
    script = [
        {"reply": "tool_calls", "calls": [{"id": "r1", "name": "fs_read", "arguments": {"path": "notes.txt"}}]},
        {
            "reply": "tool_calls",
            "calls": [{"id": "w1", "name": "fs_write", "arguments": {"path": "notes.txt", "content": "rewritten\n"}}],
            "expect": {"tool_results": {"r1": "unsaved"}},
        },
        {
            "reply": "tool_calls",
            "calls": [{"id": "w2", "name": "fs_write", "arguments": {"path": "todo.txt", "content": "no\n"}}],
            "expect": {"tool_results": {"w1": "replaced"}},
        },
        {"reply": "text", "text": "One written, one refused.", "expect": {"tool_results": {"w2": "not approved"}}},
        {"reply": "text", "text": " Notes.", "expect": {"last_user_contains": "List the changes under Added"}},
    ]
    plan = {
        "cwd": str(workspace),
        "prompts": ["Rewrite the notes, then the todo list.", "/release-notes v2"],
        "buffers": {notes: "unsaved notes\n"},
        "answers": ["allow_once", "reject_once"],
    }
    with ScriptedModelServer("openai", script) as server:
        user_config(isolated_home, server, wire="openai", extra='[policy.rules]\nask = ["fs.write"]\n')
        trust_workspace(workspace)
        seen = editor_run(plan, tmp_path)
    assert seen["stops"] == ["end_turn", "end_turn"] and seen["exitCode"] == 0
    capabilities = seen["initialized"]["agentCapabilities"]  # type: ignore[index]
    assert capabilities["loadSession"] is True and capabilities["promptCapabilities"]["embeddedContext"] is True
    updates = seen["updates"]
    assert isinstance(updates, list)
    text = "".join(u["content"]["text"] for u in updates if u["sessionUpdate"] == "agent_message_chunk")
    assert text == "One written, one refused. Notes."
    [announced] = [u for u in updates if u["sessionUpdate"] == "available_commands_update"]
    assert "release-notes" in [c["name"] for c in announced["availableCommands"]]
    calls = {u["toolCallId"]: u for u in updates if u["sessionUpdate"] == "tool_call"}
    assert (calls["r1"]["kind"], calls["r1"]["title"]) == ("read", "Read notes.txt")
    assert calls["w1"]["content"] == [{"type": "diff", "path": notes, "newText": "rewritten\n"}]
    assert [a["toolCall"]["toolCallId"] for a in seen["asked"]] == ["w1", "w2"]  # type: ignore[union-attr]
    assert seen["written"] == {notes: "rewritten\n"}
    assert todo.read_text() == "second note\n", "the refused write left the file as it was"
