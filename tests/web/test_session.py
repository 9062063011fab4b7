"""The session through the API against the scripted model server: a prompt, the streamed answer, tool calls with
their decisions, approval dialogs answered with the TUI's answers, a second prompt refused while a turn runs,
and cancel."""

import tomllib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from tests.agent._support import make_workspace, user_config
from tests.servers.model_server import ScriptedModelServer

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(180)]
KEY = "sk-test-0123456789abcdef"


@pytest.fixture(autouse=True)
def api_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KAIROX_TEST_MODEL_KEY", KEY)


def calls(*items: tuple[str, str, dict[str, object]]) -> dict[str, object]:
    return {"reply": "tool_calls", "text": "", "calls": [{"id": i, "name": n, "arguments": a} for i, n, a in items]}


async def test_a_turn_streams_its_answer_and_approvals_are_answered_from_the_gui(
    open_gui: Callable[..., Any], tmp_path: Path, isolated_home: Path
) -> None:
    workspace = make_workspace(tmp_path / "repo")
    script = [
        calls(("w1", "fs_write", {"path": "a.txt", "content": "one"})),
        {
            **calls(
                ("w2", "fs_write", {"path": "a.txt", "content": "one"}),
                ("w3", "fs_write", {"path": "b.txt", "content": "two"}),
            ),
            "expect": {"tool_results": {"w1": "a.txt"}},
        },
        {
            **calls(("w4", "fs_write", {"path": "c.txt", "content": "three"})),
            "expect": {"tool_results": {"w2": "a.txt", "w3": "use drafts"}},
        },
        {
            "reply": "text",
            "text": "Done: a.txt and c.txt.",
            "delay_sec": 0.05,
            "expect": {"tool_results": {"w4": "c.txt"}},
        },
    ]
    with ScriptedModelServer("openai", script) as server:
        config = user_config(isolated_home, server, wire="openai", extra='[policy]\napproval_policy = "untrusted"\n')
        async with open_gui(workspace) as gui:
            state = (await gui.client.get("/api/state")).json()
            started = await gui.client.post("/api/session/messages", json={"text": "Write the files."})
            turn = started.json()["turn"]
            first = await gui.event("approval.request")
            busy = await gui.client.post("/api/session/messages", json={"text": "and another"})
            grants = first["grants"]
            await gui.client.post(
                f"/api/approvals/{first['id']}", json={"answer": "session"}
            )  # the exact call, this session
            second = await gui.event("approval.request")  # w2 is the same call: no question; w3 asks
            await gui.client.post(f"/api/approvals/{second['id']}", json={"answer": "deny", "message": "use drafts"})
            third = await gui.event("approval.request")
            await gui.client.post(
                f"/api/approvals/{third['id']}", json={"answer": "always"}
            )  # the suggested rule, user layer
            ended = await gui.event("agent.turn_ended")
            seen = gui.seen
            trace = (await gui.client.get("/api/trace", params={"limit": 2000})).json()["events"]
    assert state["model"] == {
        "configured": True,
        "name": "scripted-model",
        "provider": "scripted",
        "problem": None,
        "session": True,
    }
    assert started.status_code == 202 and turn
    assert busy.status_code == 409 and "a turn is running" in busy.json()["error"]
    assert first["tool"] == "fs.write" and first["arguments"] == {"path": "a.txt", "content": "one"}
    assert grants and grants[0]["exact"] is True and first["layers"]
    assert second["arguments"]["path"] == "b.txt" and third["arguments"]["path"] == "c.txt"
    assert ended == {"turn": turn, "reason": "completed", "message": None}
    assert (workspace / "a.txt").read_text() == "one" and (workspace / "c.txt").read_text() == "three"
    assert not (workspace / "b.txt").exists()
    kinds = [
        (e.type, e.data.get("call_id")) for e in seen if e.type in ("tool.decided", "tool.finished", "agent.tool_call")
    ]
    assert ("agent.tool_call", "w1") in kinds and ("tool.decided", "w2") in kinds and ("tool.finished", "w4") in kinds
    decided = {e.data["call_id"]: e.data for e in seen if e.type == "tool.decided" and e.data["decision"] != "ask"}
    assert (
        decided["w1"]["decision"] == "allow"
        and decided["w2"]["decision"] == "allow"
        and decided["w3"]["decision"] == "deny"
    )
    assert "earlier in this session" in decided["w2"]["reason"]
    finished = {e.data["call_id"]: e.data for e in seen if e.type == "tool.finished"}
    assert finished["w1"]["ok"] is True and finished["w3"]["ok"] is False
    resolved = [e.data["answer"] for e in seen if e.type == "approval.resolved"]
    assert resolved == ["session", "deny", "always"]
    text = "".join(e.data["delta"] for e in seen if e.type == "agent.text")
    assert text == "Done: a.txt and c.txt."
    assert [e.data for e in seen if e.type == "agent.message"][-1] == {"turn": turn, "text": "Done: a.txt and c.txt."}
    allow = tomllib.loads(config.read_text())["policy"]["rules"]["allow"]
    assert any(rule.startswith("fs.write") for rule in allow)
    assert all(KEY not in str(e.data) for e in seen)
    types = [e["type"] for e in trace]
    assert "AssistantMessageCompleted" in types and "ToolCallApprovalAnswered" in types and "approval.request" in types
    assert "AssistantTextDelta" not in types and "agent.text" not in types


async def test_cancel_ends_the_running_turn_and_denies_its_waiting_approval(
    open_gui: Callable[..., Any], tmp_path: Path, isolated_home: Path
) -> None:
    workspace = make_workspace(tmp_path / "repo")
    with ScriptedModelServer("openai", [calls(("w1", "fs_write", {"path": "a.txt", "content": "one"}))]) as server:
        user_config(isolated_home, server, wire="openai", extra='[policy.rules]\nask = ["fs.write"]\n')
        async with open_gui(workspace) as gui:
            turn = (await gui.client.post("/api/session/messages", json={"text": "Write it."})).json()["turn"]
            asked = await gui.event("approval.request")
            cancelled = await gui.client.post("/api/session/cancel")
            ended = await gui.event("agent.turn_ended")
            late = await gui.client.post(f"/api/approvals/{asked['id']}", json={"answer": "once"})
            resolved = [e.data for e in gui.seen if e.type == "approval.resolved"]
    assert asked["grants"] == []  # an explicit ask rule asks every time: only "once" and "deny"
    assert cancelled.json() == {"ok": True, "cancelled": True}
    assert ended["turn"] == turn and ended["reason"] == "cancelled"
    assert late.status_code == 404
    assert resolved == [{"id": asked["id"], "answer": "deny"}]
    assert not (workspace / "a.txt").exists()


async def test_a_grant_the_request_did_not_offer_counts_once(
    open_gui: Callable[..., Any], tmp_path: Path, isolated_home: Path
) -> None:
    workspace = make_workspace(tmp_path / "repo")
    write = ("fs_write", {"path": "a.txt", "content": "one"})
    script = [
        calls(("w1", *write)),
        {**calls(("w2", *write)), "expect": {"tool_results": {"w1": "a.txt"}}},
        {"reply": "text", "text": "Written twice.", "expect": {"tool_results": {"w2": "a.txt"}}},
    ]
    with ScriptedModelServer("openai", script) as server:
        config = user_config(isolated_home, server, wire="openai", extra='[policy]\napproval_policy = "untrusted"\n')
        before = config.read_text()
        async with open_gui(workspace) as gui:
            await gui.client.post("/api/session/messages", json={"text": "Write it twice."})
            first = await gui.event("approval.request")
            await gui.client.post(f"/api/approvals/{first['id']}", json={"answer": "always", "grant": "fs.write(/**)"})
            second = await gui.event("approval.request")  # the same call asks again: nothing was granted beyond once
            await gui.client.post(f"/api/approvals/{second['id']}", json={"answer": "once"})
            ended = await gui.event("agent.turn_ended")
    assert "fs.write(/**)" not in [g["rule"] for g in first["grants"]]
    assert second["arguments"] == first["arguments"]
    assert ended["reason"] == "completed"
    assert config.read_text() == before  # no rule was saved


async def test_the_state_and_the_stream_carry_the_context_meter_the_warning_and_compact(
    open_gui: Callable[..., Any], tmp_path: Path, isolated_home: Path
) -> None:
    workspace = make_workspace(tmp_path / "repo")
    summary = "SUMMARY: two questions were answered."
    script = [
        {"reply": "text", "text": "First answer, at length. " * 80},
        {"reply": "text", "text": "Second answer."},
        {"reply": "text", "text": summary, "expect": {"last_user_contains": "Keep the answers."}},
    ]
    extra = (
        "context_window = 5000\n\n[agent]\ncompact_keep_turns = 1\n"
        'tools_warning_share = 0.15\n\n[tools]\nsearch_threshold = "off"\n'
    )
    with ScriptedModelServer("openai", script) as server:
        user_config(isolated_home, server, wire="openai", extra=extra)
        async with open_gui(workspace) as gui:
            opening = (await gui.client.get("/api/state")).json()
            for text in ("First question", "Second question"):
                await gui.client.post("/api/session/messages", json={"text": text})
                await gui.event("agent.turn_ended")
            measured = next(e.data for e in reversed(gui.seen) if e.type == "agent.context")  # after the last answer
            bad = await gui.client.post("/api/session/compact", json={"instructions": 3})
            started = await gui.client.post("/api/session/compact", json={"instructions": "Keep the answers."})
            busy = await gui.client.post("/api/session/messages", json={"text": "too early"})
            done = await gui.event("agent.compaction", lambda data: data["state"] != "started")
            await gui.until(lambda: not gui.backend.turn_running)
            after = (await gui.client.get("/api/state")).json()
    assert opening["context"]["window_tokens"] == 5000 and opening["context"]["source"] == "estimate"
    # the six file, search and shell tools, web.fetch, todo.write and task
    assert opening["context"]["text"].startswith("context ~") and opening["context"]["tools"] == 9
    assert (
        opening["context_warning"]["tools"] == 9
        and "agent.tools_warning_share" in opening["context_warning"]["message"]
    )
    assert [e.type for e in gui.seen].count("agent.context_warning") <= 1
    assert measured["used_tokens"] > opening["context"]["used_tokens"] and "~" not in measured["text"]
    assert bad.status_code == 400 and "instructions must be text" in bad.json()["error"]
    assert started.status_code == 202 and busy.status_code == 409
    assert done["state"] == "done" and done["trigger"] == "manual" and done["summary"] == summary
    assert (done["replaced_messages"], done["kept_messages"]) == (2, 2)
    assert any(e.type == "agent.compaction" and e.data["state"] == "started" for e in gui.seen)
    assert after["compacting"] is False and after["context"]["source"] == "estimate"
    assert after["context"]["used_tokens"] < measured["used_tokens"]


async def test_history_comes_from_the_session_and_survives_a_restart_that_resumes_the_transcript(
    open_gui: Callable[..., Any], tmp_path: Path, isolated_home: Path
) -> None:
    workspace = make_workspace(tmp_path / "repo")
    (workspace / "notes.txt").write_text("alpha-line-marker\n", encoding="utf-8")
    script = [
        calls(("r1", "fs_read", {"path": "notes.txt"})),
        {"reply": "text", "text": "The notes say **alpha**.", "expect": {"tool_results": {"r1": "alpha-line-marker"}}},
    ]
    with ScriptedModelServer("openai", script) as server:
        user_config(isolated_home, server, wire="openai")
        async with open_gui(workspace) as gui:
            empty = (await gui.client.get("/api/session/history")).json()
            await gui.client.post("/api/session/messages", json={"text": "Read the notes."})
            result = await gui.event("tool.result")
            await gui.event("agent.turn_ended")
            order = [e.type for e in gui.seen if e.type in ("tool.finished", "tool.result", "agent.message")]
            before = (await gui.client.get("/api/session/history")).json()
            # trust opens the session again, resuming its transcript: the conversation is the same
            await gui.client.post("/api/trust")
            await gui.backend.ready_context()
            await gui.until(lambda: gui.backend.session is not None)
            after = (await gui.client.get("/api/session/history")).json()
    assert empty["items"] == [] and empty["turn"] is None
    assert result == {
        "call_id": "r1",
        "text": "alpha-line-marker\n",
        "truncated": False,
        "chars": 18,
        "is_error": False,
    }
    # the result reaches the page after the call finished and before the answer that follows it
    assert order == ["agent.message", "tool.finished", "tool.result", "agent.message"]
    kinds = [item["kind"] for item in before["items"]]
    assert kinds == ["user", "tool", "assistant"]
    user, tool, answer = before["items"]
    assert user["text"] == "Read the notes."
    assert tool["call"]["tool"] == "fs.read" and tool["call"]["arguments"] == {"path": "notes.txt"}
    assert tool["call"]["decision"] == "allow" and tool["call"]["finished"]["ok"] is True
    assert tool["call"]["result"]["text"] == "alpha-line-marker\n"
    assert answer == {"kind": "assistant", "turn": None, "text": "The notes say **alpha**.", "done": True}
    assert before["seq"] > empty["seq"] and before["turn"] is None
    assert after["session_id"] == before["session_id"]
    assert [item["kind"] for item in after["items"]] == kinds
    assert after["items"][1]["call"]["result"] == tool["call"]["result"]


async def test_on_responses_a_turn_with_two_tool_calls_then_a_restart_resumes_and_sends_the_reasoning_back(
    open_gui: Callable[..., Any], tmp_path: Path, isolated_home: Path
) -> None:
    workspace = make_workspace(tmp_path / "repo")
    script = [
        {
            **calls(("r1", "fs_read", {"path": "notes.txt"}), ("r2", "fs_read", {"path": "todo.txt"})),
            "reasoning": "Both files.",
        },
        {"reply": "text", "text": "Two notes.", "expect": {"tool_results": {"r1": "first", "r2": "second"}}},
        {"reply": "text", "text": "Still two.", "expect": {"last_user_contains": "Again"}},
    ]
    with ScriptedModelServer("responses", script) as server:  # it checks that rs_1 comes back with request 3
        user_config(isolated_home, server, wire="responses")
        async with open_gui(workspace) as gui:
            await gui.client.post("/api/session/messages", json={"text": "Read both."})
            await gui.event("agent.turn_ended")
            first = (await gui.client.get("/api/session/history")).json()
            await gui.client.post("/api/trust")  # the session opens again, resuming its transcript
            await gui.backend.ready_context()
            await gui.until(lambda: gui.backend.session is not None)
            await gui.client.post("/api/session/messages", json={"text": "Again?"})
            await gui.event("agent.turn_ended")
            after = (await gui.client.get("/api/session/history")).json()
    assert [item["kind"] for item in first["items"]] == ["user", "tool", "tool", "assistant"]
    assert [i["text"] for i in after["items"] if i["kind"] == "assistant"] == ["Two notes.", "Still two."]
    assert after["session_id"] == first["session_id"]
