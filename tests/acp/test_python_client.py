"""``kairox acp`` driven by the ACP Python SDK's client as an editor drives it, against the scripted model."""

import contextlib
import sys
from pathlib import Path

import anyio
import pytest
from acp import RequestError, schema, text_block
from tests._rpc._procs import descendants, process_gone
from tests.acp.conftest import Editor, running
from tests.agent._support import SERVERS, user_config
from tests.servers.model_server import ScriptedModelServer

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


async def test_an_ask_is_a_permission_request_and_a_rejection_or_no_answer_leaves_nothing_done(
    workspace: Path, isolated_home: Path
) -> None:
    target = workspace / "x.txt"
    write = ("w", "fs_write", {"path": "x.txt", "content": "x"})
    script = [
        calls(("w1", *write[1:])),
        {**calls(("w2", *write[1:])), "expect": {"tool_results": {"w1": "not approved"}}},
        {**calls(("w3", *write[1:])), "expect": {"tool_results": {"w2": "not approved"}}},
        {"reply": "text", "text": "Written.", "expect": {"tool_results": {"w3": "created"}}},
    ]
    editor = Editor(answers=["reject_once", "cancel", "allow_once"])
    with ScriptedModelServer("openai", script) as server:
        user_config(isolated_home, server, wire="openai", extra='[policy.rules]\nask = ["fs.write"]\n')
        trust_workspace(workspace)
        async with running(editor, workspace) as (conn, _):
            session = await conn.new_session(cwd=str(workspace), mcp_servers=[])
            answer = await conn.prompt(session_id=session.session_id, prompt=[text_block("Write x.txt.")])
    assert answer.stop_reason == "end_turn"
    assert [a.tool_call.tool_call_id for a in editor.asked] == ["w1", "w2", "w3"]
    kinds = [o.kind for o in editor.asked[0].options]
    assert kinds == ["allow_once", "reject_once", "reject_always"], "an explicit ask rule asks every time"
    shown = editor.asked[0].tool_call.content
    assert [c.type for c in shown] == ["diff", "content"] and shown[0].new_text == "x", "the question shows the change"
    assert editor.written == {str(target): "x"} and not target.exists(), "only the approved write, in the editor"


async def test_reject_always_refuses_the_tool_without_asking_again_and_modes_never_go_past_the_configuration(
    workspace: Path, isolated_home: Path
) -> None:
    edit = {"path": "notes.txt", "old_string": "first", "new_string": "last"}
    script = [
        calls(("w1", "fs_write", {"path": "a.txt", "content": "a"})),
        {**calls(("w2", "fs_write", {"path": "b.txt", "content": "b"})), "expect": {"tool_results": {"w1": "refused"}}},
        {"reply": "text", "text": "Stopped.", "expect": {"tool_results": {"w2": "refused in the editor"}}},
        calls(("e1", "fs_edit", edit)),
        {"reply": "text", "text": "Denied.", "expect": {"tool_results": {"e1": "approval policy is never"}}},
    ]
    editor = Editor(answers=["reject_always"])
    with ScriptedModelServer("openai", script) as server:
        user_config(isolated_home, server, wire="openai", extra='[policy.rules]\nask = ["fs.write", "fs.edit"]\n')
        trust_workspace(workspace)
        async with running(editor, workspace) as (conn, _):
            session = await conn.new_session(cwd=str(workspace), mcp_servers=[])
            sid = session.session_id
            await conn.prompt(session_id=sid, prompt=[text_block("Write two files.")])
            assert session.modes is not None and session.modes.current_mode_id == "on_request"
            assert [m.id for m in session.modes.available_modes] == ["untrusted", "never", "on_request"]
            with pytest.raises(RequestError, match="Invalid params"):
                await conn.set_session_mode(session_id=sid, mode_id="on_failure")
            await conn.set_session_mode(session_id=sid, mode_id="never")
            await conn.prompt(session_id=sid, prompt=[text_block("Edit the note.")])
    assert len(editor.asked) == 1 and not editor.written
    assert (workspace / "notes.txt").read_text() == "first note\n"


def running_commands(pid: int, word: str) -> list[int]:
    found = []
    for child in descendants(pid):
        with contextlib.suppress(OSError):
            if word in Path(f"/proc/{child}/cmdline").read_bytes().decode(errors="replace"):
                found.append(child)
    return found


async def test_cancel_mid_turn_stops_the_command_and_leaves_no_process_then_the_session_goes_on(
    workspace: Path, isolated_home: Path
) -> None:
    script = [
        calls(("s1", "shell_exec", {"command": "sleep 37"})),
        {"reply": "text", "text": "Fine.", "expect": {"tool_results": {"s1": "cancelled"}}},
    ]
    editor = Editor()
    with ScriptedModelServer("openai", script) as server:
        user_config(isolated_home, server, wire="openai", extra='[policy.rules]\nallow = ["shell.exec(sleep *)"]\n')
        trust_workspace(workspace)
        async with running(editor, workspace) as (conn, proc):
            session = await conn.new_session(cwd=str(workspace), mcp_servers=[])
            sid = session.session_id

            async def cancel_when_running(update: object) -> None:
                if getattr(update, "status", None) == "in_progress":
                    with anyio.fail_after(20):
                        while not running_commands(proc.pid, "sleep 37"):
                            await anyio.sleep(0.05)
                    await conn.cancel(session_id=sid)

            editor.on_update = cancel_when_running
            answer = await conn.prompt(session_id=sid, prompt=[text_block("Wait a while.")])
            left = running_commands(proc.pid, "sleep 37")
            editor.on_update = None
            again = await conn.prompt(session_id=sid, prompt=[text_block("Go on.")])
    assert answer.stop_reason == "cancelled" and left == []
    assert again.stop_reason == "end_turn"
    ended = {u.tool_call_id: u.status for u in editor.of("tool_call_update") if u.status in ("completed", "failed")}
    assert ended == {"s1": "failed"}


async def test_commands_are_announced_and_run_and_a_loaded_session_replays_and_goes_on_over_responses(
    workspace: Path, isolated_home: Path
) -> None:
    first = [
        {
            "reply": "text",
            "text": "Notes written.",
            "reasoning": "A short list.",
            "expect": {"last_user_contains": "List the changes under Added"},
        }
    ]
    editor = Editor()
    with ScriptedModelServer("responses", first) as server:
        user_config(isolated_home, server, wire="responses")
        trust_workspace(workspace)
        async with running(editor, workspace) as (conn, _):
            session = await conn.new_session(cwd=str(workspace), mcp_servers=[])
            commands = await editor.commands()
            await conn.prompt(session_id=session.session_id, prompt=[text_block("/release-notes v2")])
    assert commands[0] == "compact" and "release-notes" in commands
    assert editor.text("agent_thought_chunk") == "A short list."
    later = [{"reply": "text", "text": "Again.", "expect": {"last_user_contains": "And again"}}]
    editor = Editor()
    with ScriptedModelServer("responses", later) as server:
        server.reasoning = {"rs_1": "enc-1"}  # the first answer's reasoning comes back from the transcript
        user_config(isolated_home, server, wire="responses")
        async with running(editor, workspace) as (conn, _):
            await conn.load_session(cwd=str(workspace), session_id=session.session_id, mcp_servers=[])
            replayed = (editor.text("user_message_chunk"), editor.text())
            await conn.prompt(session_id=session.session_id, prompt=[text_block("And again?")])
    assert "List the changes under Added" in replayed[0] and replayed[1] == "Notes written."
    assert editor.text() == "Notes written.Again."


async def test_an_untrusted_workspace_is_said_first_and_the_editors_mcp_server_serves_behind_the_gate(
    workspace: Path, isolated_home: Path
) -> None:
    lean = schema.McpServerStdio(name="lean", command=sys.executable, args=[str(SERVERS / "lean_server.py")], env=[])
    (workspace / "kairox.toml").write_text('[mcp_servers.held]\ncommand = "never-started"\n', encoding="utf-8")
    script = [
        {
            **calls(("m1", "mcp__lean__echo", {"message": "from the editor"})),
            "expect": {"tools_include": ["mcp__lean__echo"]},
        },
        {"reply": "text", "text": "Echoed.", "expect": {"tool_results": {"m1": "from the editor"}}},
    ]
    editor = Editor(answers=["allow_once"])
    with ScriptedModelServer("openai", script) as server:
        user_config(isolated_home, server, wire="openai")
        async with running(editor, workspace) as (conn, proc):
            session = await conn.new_session(cwd=str(workspace), mcp_servers=[lean])
            await editor.commands()
            notice = editor.text()
            await conn.prompt(session_id=session.session_id, prompt=[text_block("Echo it.")])
            servers = running_commands(proc.pid, "lean_server.py")
    assert proc.returncode == 0 and servers, "the editor's server ran (confined), and stopped when stdin closed"
    assert all(process_gone(pid) for pid in servers)
    assert notice.startswith(f"This workspace ({workspace}) is not trusted") and "mcp_servers.held" in notice
    assert "release-notes" not in [c.name for c in editor.of("available_commands_update")[-1].available_commands]


async def test_a_command_runs_confined_in_the_editors_terminal_with_kaiross_scrubbed_environment(
    workspace: Path, isolated_home: Path
) -> None:
    command = 'echo "key=[$KAIROX_TEST_MODEL_KEY]"; touch .git/planted'
    script = [
        calls(("s1", "shell_exec", {"command": command})),
        {"reply": "text", "text": "Ran.", "expect": {"tool_results": {"s1": "key=[]"}}},
    ]
    editor = Editor()
    terminal = schema.ClientCapabilities(terminal=True)
    with ScriptedModelServer("openai", script) as server:
        user_config(isolated_home, server, wire="openai", extra='[policy.rules]\nallow = ["shell.exec(echo *)"]\n')
        trust_workspace(workspace)
        async with running(editor, workspace, capabilities=terminal) as (conn, _):
            session = await conn.new_session(cwd=str(workspace), mcp_servers=[])
            await conn.prompt(session_id=session.session_id, prompt=[text_block("Run it.")])
    [shown] = [u for u in editor.of("tool_call_update") if u.content and u.content[0].type == "terminal"]
    assert editor.released == [shown.content[0].terminal_id] and len(editor.terminals) == 1
    assert "Read-only file system" in next(iter(editor.outputs.values())), "the sandbox keeps the write inside"
    assert not (workspace / ".git" / "planted").exists()


async def test_a_missing_api_key_is_an_env_var_auth_method_and_new_session_says_which_variable(
    workspace: Path, isolated_home: Path
) -> None:
    editor = Editor()
    with ScriptedModelServer("openai", []) as server:
        user_config(isolated_home, server, wire="openai")
        async with running(editor, workspace, key="") as (conn, _):
            with pytest.raises(RequestError) as refused:
                await conn.new_session(cwd=str(workspace), mcp_servers=[])
            with pytest.raises(RequestError):
                await conn.authenticate(method_id="KAIROX_TEST_MODEL_KEY")
    [method] = editor.initialized.auth_methods
    assert (method.type, method.id, [v.name for v in method.vars]) == (
        "env_var",
        "KAIROX_TEST_MODEL_KEY",
        ["KAIROX_TEST_MODEL_KEY"],
    )
    assert refused.value.code == -32000 and "KAIROX_TEST_MODEL_KEY is not set" in str(refused.value.data)


async def test_the_models_plan_reaches_the_editor_as_a_plan_update(workspace: Path, isolated_home: Path) -> None:
    todos = [{"content": "Read the notes", "status": "completed"}, {"content": "Answer", "status": "in_progress"}]
    script = [calls(("p1", "todo_write", {"todos": todos})), {"reply": "text", "text": "Planned."}]
    editor = Editor()
    with ScriptedModelServer("openai", script) as server:
        user_config(isolated_home, server, wire="openai")
        trust_workspace(workspace)
        async with running(editor, workspace) as (conn, _):
            session = await conn.new_session(cwd=str(workspace), mcp_servers=[])
            await conn.prompt(session_id=session.session_id, prompt=[text_block("Plan it.")])
    [plan] = editor.of("plan")
    assert [(e.content, e.status) for e in plan.entries] == [("Read the notes", "completed"), ("Answer", "in_progress")]
