"""``kairox acp`` driven by the ACP Python SDK's client as an editor drives it, against the scripted model."""

from pathlib import Path

import pytest
from tests.acp.conftest import Editor, running
from tests.agent._support import user_config
from tests.servers.model_server import ScriptedModelServer

from acp import text_block
from kairox.config import trust_workspace

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(120)]


def calls(*items: tuple[str, str, dict[str, object]]) -> dict[str, object]:
    return {"reply": "tool_calls", "calls": [{"id": i, "name": n, "arguments": a} for i, n, a in items]}


async def test_a_prompt_streams_its_answer_reads_the_unsaved_buffer_and_edits_through_the_editor_as_a_diff(
    workspace: Path, isolated_home: Path
) -> None:
    notes = str(workspace / "notes.txt")
    script = [
        calls(("r1", "fs_read", {"path": "notes.txt"}), ("r2", "fs_read", {"path": "todo.txt"})),
        {
            **calls(("e1", "fs_edit", {"path": "notes.txt", "old_string": "unsaved", "new_string": "edited"})),
            "expect": {"tool_results": {"r1": "unsaved note", "r2": "second note"}},
        },
        {"reply": "text", "text": "Edited the note.", "expect": {"tool_results": {"e1": "1 replacement"}}},
    ]
    editor = Editor(buffers={notes: "unsaved note\n"})
    with ScriptedModelServer("responses", script) as server:
        user_config(isolated_home, server, wire="responses")
        trust_workspace(workspace)
        async with running(editor, workspace) as (conn, _):
            session = await conn.new_session(cwd=str(workspace), mcp_servers=[])
            answer = await conn.prompt(session_id=session.session_id, prompt=[text_block("Edit the note.")])
    assert answer.stop_reason == "end_turn"
    assert editor.text() == "Edited the note."
    assert editor.written == {notes: "edited note\n"}
    assert (workspace / "notes.txt").read_text() == "first note\n", "the edit landed in the editor's buffer"
    started = {u.tool_call_id: u for u in editor.of("tool_call")}
    read = started["r1"]
    assert (read.kind, read.title, read.locations[0].path) == ("read", "Read notes.txt", notes)
    [diff] = started["e1"].content
    assert (diff.type, diff.path, diff.old_text, diff.new_text) == ("diff", notes, "unsaved", "edited")
    finals = {u.tool_call_id: u.status for u in editor.of("tool_call_update") if u.status in ("completed", "failed")}
    assert finals == {"r1": "completed", "r2": "completed", "e1": "completed"}
