"""``web.fetch`` (A6) against a real HTTP server on 127.0.0.1: behind the gate (domain rules; loopback and private
hosts ask, cloud metadata is refused unless a rule names it), each redirect checked, the page as markdown, capped."""

import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from tests.agent._support import make_workspace, user_config
from tests.registry._support import ScriptedApprover, settings
from tests.servers.model_server import ScriptedModelServer

from kairox.agent import open_session
from kairox.config import resolve_config
from kairox.events import RecordingSink
from kairox.policy import ApprovalAnswer, ApprovalScope, Rule
from kairox.registry import ToolCallDecided, build_registry
from kairox.tools import ToolCall
from kairox.tools._web_fetch import MAX_BYTES, fetch_page

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(60)]

PAGE = (
    "<html><head><title>Greeting</title><style>p {color: red}</style><script>steal()</script></head>"
    "<body><h1>Hello</h1><p>Read the <a href='/docs'>docs</a> and <b>stay</b>.</p><ul><li>one</li></ul></body></html>"
)


class _Pages(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        port = self.server.server_address[1]
        routes = {
            "/page": (200, "text/html; charset=utf-8", PAGE.encode()),
            "/big": (200, "text/plain", b"x" * (MAX_BYTES + 1000)),
            "/image": (200, "image/png", b"\x89PNG\r\n"),
            "/hop": (302, "text/plain", b""),
            "/away": (302, "text/plain", b""),
        }
        status, kind, body = routes.get(self.path, (404, "text/plain", b"no such page"))
        self.send_response(status)
        self.send_header("Content-Type", kind)
        if self.path == "/hop":
            self.send_header("Location", "/page")
        if self.path == "/away":
            self.send_header("Location", f"http://localhost:{port}/page")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def site() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Pages)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def _yes() -> ScriptedApprover:
    return ScriptedApprover([ApprovalAnswer(approved=True, scope=ApprovalScope.ONCE)] * 3)


async def test_a_loopback_page_is_asked_about_and_returned_as_markdown_after_an_approval(
    site: str, tmp_path: Path
) -> None:
    approver = _yes()
    registry = await build_registry(settings(tmp_path), approver=approver)
    result = await registry.call(ToolCall(name="web.fetch", arguments={"url": f"{site}/page"}))
    assert not result.is_error, result.text_content()
    text = result.text_content()
    assert text.startswith(f"# Greeting\nSource: {site}/page (200, text/html)")
    assert "# Hello" in text and "[docs](/docs)" in text and "**stay**" in text and "- one" in text
    assert "steal" not in text and "color" not in text
    (request,) = approver.requests
    assert "127.0.0.1, a loopback, link-local or private address" in request.reason
    assert "web.fetch(domain:127.0.0.1)" in [g.rule for g in request.grants]


async def test_a_blanket_allow_rule_does_not_reach_loopback_but_a_rule_naming_the_host_does(
    site: str, tmp_path: Path
) -> None:
    asked = _no()
    blanket = await build_registry(settings(tmp_path, Rule(action="allow", pattern="web.fetch")), approver=asked)
    refused = await blanket.call(ToolCall(name="web.fetch", arguments={"url": f"{site}/page"}))
    assert refused.is_error and [r.tool for r in asked.requests] == ["web.fetch"]
    assert "loopback" in asked.requests[0].reason
    named = await build_registry(
        settings(tmp_path, Rule(action="allow", pattern="web.fetch(domain:127.0.0.1)")), approver=_no()
    )
    fetched = await named.call(ToolCall(name="web.fetch", arguments={"url": f"{site}/page"}))
    assert not fetched.is_error and "# Hello" in fetched.text_content()


def _no() -> ScriptedApprover:
    return ScriptedApprover([])


@pytest.mark.parametrize(
    "url", ["http://169.254.169.254/latest/meta-data/", "http://[fd00:ec2::254]/", "http://metadata.google.internal/"]
)
async def test_cloud_metadata_is_refused_without_asking_even_under_a_blanket_allow(url: str, tmp_path: Path) -> None:
    approver = _yes()
    sink = RecordingSink()
    registry = await build_registry(
        settings(tmp_path, Rule(action="allow", pattern="web.fetch")), approver=approver, events=sink
    )
    result = await registry.call(ToolCall(name="web.fetch", arguments={"url": url}))
    assert result.is_error and "cloud metadata address" in result.text_content()
    assert approver.requests == [] and [e.decision for e in sink.of_type(ToolCallDecided)] == ["deny"]


async def test_a_name_that_resolves_to_loopback_is_refused_unless_a_rule_names_it(site: str, tmp_path: Path) -> None:
    port = site.rsplit(":", 1)[1]
    url = f"http://2130706433:{port}/page"  # 127.0.0.1 written as one number: a name to the gate, loopback to DNS
    asked = await build_registry(settings(tmp_path), approver=_yes())
    refused = await asked.call(ToolCall(name="web.fetch", arguments={"url": url}))
    assert refused.is_error and "resolves to 127.0.0.1, a private address" in refused.text_content()
    named = await build_registry(
        settings(tmp_path, Rule(action="allow", pattern="web.fetch(domain:2130706433)")), approver=_no()
    )
    fetched = await named.call(ToolCall(name="web.fetch", arguments={"url": url}))
    assert not fetched.is_error and "# Hello" in fetched.text_content()


async def test_a_redirect_on_the_same_host_is_followed_and_one_to_another_host_is_told_not_followed(
    site: str,
) -> None:
    hop = await fetch_page({"url": f"{site}/hop"}, allowlist=None, named=())
    assert f"Source: {site}/page (200" in hop.text_content()
    away = await fetch_page({"url": f"{site}/away"}, allowlist=None, named=())
    port = site.rsplit(":", 1)[1]
    assert away.text_content() == (
        f"{site}/away redirects to http://localhost:{port}/page, on another host; "
        "call web.fetch with that URL to read it"
    )


async def test_a_page_past_the_size_cap_is_cut_with_a_note_and_binary_content_is_refused(site: str) -> None:
    big = await fetch_page({"url": f"{site}/big"}, allowlist=None, named=())
    assert big.structured is not None and big.structured["truncated"] is True
    assert big.text_content().endswith(f"[web.fetch: only the first {MAX_BYTES} bytes were read]")
    image = await fetch_page({"url": f"{site}/image"}, allowlist=None, named=())
    assert image.is_error and "image/png" in image.text_content()


async def test_the_sandbox_domain_allowlist_holds_for_web_fetch_too(
    site: str, tmp_path: Path, isolated_home: Path
) -> None:
    rules = 'allow = ["web.fetch(domain:127.0.0.1)"]'
    (isolated_home / "kairox.toml").write_text(
        f'[sandbox]\nnetwork = "allowlist"\nallowed_domains = ["docs.python.org"]\n\n[policy.rules]\n{rules}\n'
    )
    workspace = tmp_path / "ws"
    workspace.mkdir()
    registry = await build_registry(resolve_config(workspace), approver=_no())
    refused = await registry.call(ToolCall(name="web.fetch", arguments={"url": f"{site}/page"}))
    assert refused.is_error and "127.0.0.1 is not in sandbox.allowed_domains" in refused.text_content()
    allowed = await fetch_page({"url": f"{site}/page"}, allowlist=("127.0.0.1",), named=())
    assert "# Hello" in allowed.text_content()


@pytest.mark.parametrize("wire", ["openai", "anthropic"])
async def test_the_agent_fetches_a_loopback_page_after_an_approval_and_is_refused_cloud_metadata(
    wire: str, site: str, tmp_path: Path, isolated_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KAIROX_TEST_MODEL_KEY", "sk-test-0123456789abcdef")
    workspace = make_workspace(tmp_path / "repo")
    script = [
        {
            "reply": "tool_calls",
            "calls": [
                {"id": "w1", "name": "web_fetch", "arguments": {"url": f"{site}/page"}},
                {"id": "w2", "name": "web_fetch", "arguments": {"url": "http://169.254.169.254/latest/meta-data/"}},
            ],
        },
        {
            "reply": "text",
            "text": "The page greets you.",
            "expect": {"tool_results": {"w1": "[docs](/docs)", "w2": "cloud metadata address"}},
        },
    ]
    approver = _yes()
    with ScriptedModelServer(wire, script) as server:
        user_config(isolated_home, server, wire=wire)
        async with open_session(workspace, approver=approver) as session:
            result = await session.run_turn("What does the page say?")
    assert result.text == "The page greets you."
    assert [r.tool for r in approver.requests] == ["web.fetch"], "asked once: the loopback page, not the metadata"
