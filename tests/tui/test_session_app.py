"""The TUI driven by key presses (Textual's Pilot) against the scripted model server: a prompt, a streamed
answer, tool call blocks, the approval modal answered by keys, and a server that fails turning red."""

import sys
from collections.abc import Callable
from pathlib import Path

import anyio
import pytest
from tests.agent._support import SERVERS, make_workspace, user_config
from tests.servers.model_server import ScriptedModelServer
from textual import events
from textual.widgets import Markdown

from kairox._rpc._status import ServerStatus
from kairox.config import resolve_config
from kairox.runtime import RuntimeOptions
from kairox.tui._app import KairoxApp
from kairox.tui._approval import ApprovalScreen
from kairox.tui._conversation import ToolCallBlock

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(120)]


@pytest.fixture(autouse=True)
def api_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KAIROX_TEST_MODEL_KEY", "sk-test-0123456789abcdef")


def calls(*items: tuple[str, str, dict[str, object]]) -> dict[str, object]:
    return {"reply": "tool_calls", "text": "", "calls": [{"id": i, "name": n, "arguments": a} for i, n, a in items]}


async def until(
    pilot: object, check: Callable[[], bool], timeout: float = 60, what: Callable[[], object] | None = None
) -> None:
    """Wait for ``check``; on a timeout the failure shows ``what()`` (the screen's notices, say)."""
    try:
        with anyio.fail_after(timeout):
            while not check():
                await pilot.pause(0.05)  # type: ignore[attr-defined]
    except TimeoutError:
        raise AssertionError(f"not reached in {timeout} s" + (f"; {what()!r}" if what is not None else "")) from None


async def type_text(pilot: object, text: str) -> None:
    """``text`` typed a key at a time: for the tests of typing itself (the completion menu, focus)."""
    for char in text:
        await pilot.press("space" if char == " " else char)  # type: ignore[attr-defined]


async def paste_text(pilot: object, text: str) -> None:
    """``text`` put in the focused widget as one paste, the event a terminal sends for pasted text: Pilot waits twice
    for the app to go idle after every key it presses (60 ms or more each), which a test of what a prompt does, not
    of how it is typed, need not pay."""
    pilot.app.post_message(events.Paste(text))  # type: ignore[attr-defined]
    await pilot.pause()  # type: ignore[attr-defined]


def app_for(workspace: Path) -> KairoxApp:
    options = RuntimeOptions(workspace=workspace)
    return KairoxApp(options, resolve_config(workspace))


async def ask(pilot: object, app: KairoxApp, prompt: str, messages: int) -> None:
    """Type ``prompt``, send it, and wait until the turn ended with ``messages`` messages in the session."""
    await paste_text(pilot, prompt)
    await pilot.press("enter")  # type: ignore[attr-defined]
    await until(
        pilot, lambda: app.session is not None and len(app.session.messages) == messages and not app.turn_running
    )


async def resume(pilot: object, app: KairoxApp, session_id: str, shown: Callable[[], bool] = lambda: True) -> None:
    """``/resume session_id`` typed, and wait until that session is open (and ``shown()`` holds)."""
    await paste_text(pilot, f"/resume {session_id}")
    await pilot.press("enter")  # type: ignore[attr-defined]
    await until(
        pilot,
        lambda: (
            app.session is not None and app.session.session_id == session_id and app.resume == session_id and shown()
        ),
    )


async def test_prompt_streams_the_answer_shows_tool_blocks_and_the_approval_modal_answers_by_keys(
    tmp_path: Path, isolated_home: Path
) -> None:
    workspace = make_workspace(tmp_path / "repo")
    script = [
        calls(("w1", "fs_write", {"path": "a.txt", "content": "one"})),
        {**calls(("w2", "fs_write", {"path": "b.txt", "content": "two"})), "expect": {"tool_results": {"w1": "a.txt"}}},
        {
            "reply": "text",
            "text": "I will use **drafts/** next time.",
            "delay_sec": 0.05,
            "expect": {"tool_results": {"w2": "use drafts please"}},
        },
    ]
    with ScriptedModelServer("openai", script) as server:
        user_config(isolated_home, server, wire="openai", extra='[policy.rules]\nask = ["fs.write"]\n')
        app = app_for(workspace)
        async with app.run_test(size=(140, 40)) as pilot:
            await until(pilot, lambda: app.session is not None)
            await paste_text(pilot, "Write two files.")
            await pilot.press("enter")
            await until(pilot, lambda: isinstance(app.screen, ApprovalScreen))
            assert app.screen.request.tool == "fs.write"
            assert app.screen.request.arguments == {"path": "a.txt", "content": "one"}
            await pilot.press("o")  # allow once
            await until(
                pilot,
                lambda: isinstance(app.screen, ApprovalScreen) and app.screen.request.arguments["path"] == "b.txt",
            )
            await pilot.press("m")  # deny with a message to the model
            await paste_text(pilot, "use drafts please")
            await pilot.press("enter")
            await until(pilot, lambda: not app.turn_running and "w2" in app.query_one("#conversation").blocks)
            await until(pilot, lambda: not app.turn_running and bool(app.query(Markdown)))
            blocks = {b.call_id: b for b in app.query(ToolCallBlock)}
            answer = app.query(Markdown).last()
            answer_text = answer.source
    assert (workspace / "a.txt").read_text() == "one"
    assert not (workspace / "b.txt").exists()
    assert set(blocks) == {"w1", "w2"}
    assert blocks["w1"].decision.startswith("allow by approver") and blocks["w1"].outcome.startswith("ok in ")
    assert '"path": "a.txt"' in blocks["w1"].arguments_text
    assert "a.txt" in blocks["w1"].result
    assert blocks["w2"].decision.startswith("deny") and blocks["w2"].outcome.startswith("error in ")
    assert "use drafts please" in blocks["w2"].result
    assert answer_text == "I will use **drafts/** next time."
    assert app.usage[0] > 0


async def test_a_server_that_fails_turns_red_with_its_reason_in_the_trace(tmp_path: Path, isolated_home: Path) -> None:
    workspace = make_workspace(tmp_path / "repo")
    (isolated_home / "kairox.toml").write_text(
        f'[mcp_servers.broken]\ncommand = "{sys.executable}"\n'
        f'args = ["{SERVERS / "crash_at_start.py"}"]\nstartup_timeout_sec = 20\n\n'
        f'[mcp_servers.basic]\ncommand = "{sys.executable}"\nargs = ["{SERVERS / "basic_server.py"}"]\n',
        encoding="utf-8",
    )
    app = app_for(workspace)
    async with app.run_test(size=(140, 40)) as pilot:
        await until(pilot, lambda: app.context is not None)
        rows = {view.name: view for view in app.board.views("mcp")}
        trace = [entry.text for _, entry in app.entries]
        table = app.query_one("#servers")
        cells = [str(table.get_row_at(i)[0]) + " " + str(table.get_row_at(i)[1]) for i in range(table.row_count)]
        dots = {
            str(table.get_row_at(i)[0]).split()[-1]: str(table.get_row_at(i)[0].spans[0].style)
            for i in range(table.row_count)
        }
        notice = str(app.query_one("#conversation").children[0].render())
    assert rows["broken"].status is ServerStatus.FAILED and rows["broken"].reason
    assert rows["basic"].status is ServerStatus.READY and rows["basic"].tool_count
    assert "● mcp broken failed" in cells and "● mcp basic ready" in cells
    assert dots == {"broken": "red", "basic": "green"}
    assert any(line.startswith("mcp broken: failed: ") and rows["broken"].reason[:40] in line for line in trace), trace
    assert "No model is configured" in notice  # no model here: the panels work, the conversation says how


async def test_resume_reopens_a_transcript_in_place_with_its_history(tmp_path: Path, isolated_home: Path) -> None:
    workspace = make_workspace(tmp_path / "repo")

    def sees_history(body: dict[str, object]) -> None:
        texts = [str(m.get("content")) for m in body["messages"]]  # type: ignore[attr-defined]
        assert any("First question" in t for t in texts) and any("First answer." in t for t in texts), texts

    script = [
        {"reply": "text", "text": "First answer."},
        {
            "reply": "text",
            "text": "Second answer.",
            "check": sees_history,
            "expect": {"last_user_contains": "Second question"},
        },
    ]
    with ScriptedModelServer("openai", script) as server:
        user_config(isolated_home, server, wire="openai")
        app = app_for(workspace)
        async with app.run_test(size=(140, 40)) as pilot:
            await until(pilot, lambda: app.session is not None)
            first = app.session.session_id
            await ask(pilot, app, "First question", 2)
            await resume(pilot, app, first)
            shown = [str(w.render()) for w in app.query("#conversation .user")]
            answers = [m.source for m in app.query(Markdown)]
            await ask(pilot, app, "Second question", 4)
    assert shown == ["› First question"] and answers == ["First answer."]


async def test_a_resumed_session_shows_its_tool_calls_with_the_results_they_had(
    tmp_path: Path, isolated_home: Path
) -> None:
    workspace = make_workspace(tmp_path / "repo")
    (workspace / "notes.txt").write_text("remember the milk\n")
    script = [
        calls(("r1", "fs_read", {"path": "notes.txt"})),
        {"reply": "text", "text": "It says milk.", "expect": {"tool_results": {"r1": "remember the milk"}}},
    ]
    with ScriptedModelServer("openai", script) as server:
        user_config(isolated_home, server, wire="openai")
        app = app_for(workspace)
        async with app.run_test(size=(140, 40)) as pilot:
            await until(pilot, lambda: app.session is not None)
            first = app.session.session_id
            await ask(pilot, app, "What do the notes say", 4)
            await resume(pilot, app, first, lambda: bool(app.query(ToolCallBlock)))
            [block] = list(app.query(ToolCallBlock))
            heading, body = block.heading, str(block._body.render())
    assert block.tool == "fs.read" and "notes.txt" in heading, heading
    assert heading.endswith("· earlier session · ok"), heading
    assert "remember the milk" in body, body


@pytest.mark.timeout(240)  # two sessions open, one after the other
async def test_the_status_bar_meters_the_context_and_compact_summarises_older_turns(
    tmp_path: Path, isolated_home: Path
) -> None:
    workspace = make_workspace(tmp_path / "repo")
    summary = "SUMMARY: the first question was answered."

    def starts_from_the_summary(body: dict[str, object]) -> None:
        text = str(body["messages"])
        assert summary in text and "First question" not in text and "Second question" in text

    script = [
        {"reply": "text", "text": "At length: " * 40 + "the first answer."},  # longer than its summary
        {"reply": "text", "text": "Second answer."},
        {"reply": "text", "text": summary, "expect": {"last_user_contains": "Keep the numbers."}},
        {"reply": "text", "text": "Third answer.", "check": starts_from_the_summary},
    ]
    with ScriptedModelServer("anthropic", script) as server:
        user_config(
            isolated_home, server, wire="anthropic", extra="context_window = 50000\n\n[agent]\ncompact_keep_turns = 1\n"
        )
        app = app_for(workspace)
        async with app.run_test(size=(160, 40)) as pilot:
            await until(pilot, lambda: app.session is not None and app.context_usage is not None)
            opening = str(app.query_one("#status-bar").render())
            for prompt in ("First question", "Second question"):
                await paste_text(pilot, prompt)
                await pilot.press("enter")
                await until(
                    pilot,
                    lambda: (
                        not app.turn_running
                        and app.session is not None
                        and app.session.messages[-1].text.endswith("answer.")
                    ),
                )
            measured = app.context_usage
            metered = str(app.query_one("#status-bar").render())
            await paste_text(pilot, "/compact Keep the numbers.")
            await pilot.press("enter")
            await until(
                pilot,
                lambda: app.session is not None and bool(app.session.messages) and app.session.messages[0].summary,
            )
            await until(pilot, lambda: not app.turn_running)
            notices = [str(w.render()) for w in app.query("#conversation .notice")]
            compacted = app.context_usage
            after = str(app.query_one("#status-bar").render())
            await paste_text(pilot, "Third question")
            await pilot.press("enter")
            await until(
                pilot,
                lambda: (
                    not app.turn_running
                    and app.session is not None
                    and app.session.messages[-1].text == "Third answer."
                ),
            )
            session_id = app.session.session_id
            await paste_text(pilot, f"/resume {session_id}")
            await pilot.press("enter")
            await until(
                pilot,
                lambda: app.session is not None and app.resume == session_id and bool(app.query("#conversation .user")),
            )
            resumed = [m.summary for m in app.session.messages]
            shown_notices = [str(w.render()) for w in app.query("#conversation .notice")]
            shown_prompts = [str(w.render()) for w in app.query("#conversation .user")]
    assert "│  context ~" in opening and "/50k (" in opening, "an estimate before any usage is reported"
    assert opening.split("  │  ")[1].startswith("context ~"), "the meter sits next to the model"
    assert measured is not None and measured.source == "usage" and measured.meter() in metered
    assert measured.meter().startswith("context ") and "~" not in measured.meter()
    assert any(n.startswith("compacted: 2 messages summarised, 2 kept") for n in notices), notices
    assert compacted is not None and compacted.source == "estimate" and compacted.meter() in after
    assert resumed == [True, False, False, False, False], "the resumed session starts from the summary"
    assert any(n.startswith("earlier turns, as compacted:") and summary in n for n in shown_notices), shown_notices
    assert shown_prompts == ["› Second question", "› Third question"]


async def test_a_file_a_turn_made_is_completed_after_the_turn(tmp_path: Path, isolated_home: Path) -> None:
    workspace = make_workspace(tmp_path / "repo")
    script = [calls(("w1", "fs_write", {"path": "made.txt", "content": "new"})), {"reply": "text", "text": "Made."}]
    with ScriptedModelServer("openai", script) as server:
        user_config(isolated_home, server, wire="openai", extra='[policy.rules]\nallow = ["fs.write"]\n')
        app = app_for(workspace)
        async with app.run_test(size=(140, 40)) as pilot:
            await until(pilot, lambda: app.session is not None)
            composer = app.query_one("#composer")
            await type_text(pilot, "@mad")
            await pilot.press("tab")
            before = composer.text
            composer.load_text("")
            await ask(pilot, app, "Make a file.", 4)
            composer.load_text("")
            await type_text(pilot, "@mad")
            await pilot.press("tab")
            after = composer.text
    assert before == "@mad" and (workspace / "made.txt").exists()
    assert after == "@made.txt "
