"""What the GUI's event hub sends: Kairox events as the API's events, numbered, kept for the trace, and scrubbed of
every secret ``config show`` would redact."""

from pathlib import Path

from kairox.config import SecretScrubber as Redactor
from kairox.config import resolve_config
from kairox.mcp import McpServerFailed, McpServerReady
from kairox.registry import ToolCallDecided
from kairox.web._hub import EventHub


def test_redactor_hides_what_config_show_redacts_and_secret_host_variables(tmp_path: Path, isolated_home: Path) -> None:
    (isolated_home / "kairox.toml").write_text(
        '[mcp_servers.remote]\ntype = "streamable_http"\nurl = "https://me:hunter2-pass@mcp.example/x?api_key=k-999-abc"\n'
        'headers = { Authorization = "Bearer tok-header-123" }\n'
        '[mcp_servers.local]\ncommand = "srv"\n'
        'args = ["--token", "argv-secret-77"]\nenv = { PLAIN = "env-value-55" }\n',
        encoding="utf-8",
    )
    (tmp_path / ".git").mkdir()
    redactor = Redactor()
    redactor.add_config(resolve_config(tmp_path))
    redactor.add_environment(
        {"MY_API_KEY": "host-key-000111", "TOKENIZERS_PARALLELISM": "true", "HOME": "/root/home-dir"}
    )
    text = (
        "hunter2-pass k-999-abc Bearer tok-header-123 argv-secret-77 "
        "env-value-55 host-key-000111 mcp.example true /root/home-dir"
    )
    assert redactor.scrub({"a": [text], "n": 3}) == {
        "a": ["<redacted> <redacted> <redacted> <redacted> <redacted> <redacted> mcp.example true /root/home-dir"],
        "n": 3,
    }


def test_hub_numbers_translates_keeps_and_scrubs(tmp_path: Path, isolated_home: Path) -> None:
    from kairox.runtime import ServerBoard

    (tmp_path / ".git").mkdir()
    redactor = Redactor()
    redactor.add("sk-abcdef123")
    hub = EventHub(redactor)
    hub.board = ServerBoard(resolve_config(tmp_path))
    queue = hub.subscribe()
    hub.emit(McpServerReady(server="notes", tools=2))
    hub.emit(McpServerFailed(server="bad", reason="exited: key sk-abcdef123 refused"))
    hub.emit(ToolCallDecided(call_id="c1", tool="fs.read", decision="allow", reason="rule", source="rule"))
    sent = [queue.get_nowait() for _ in range(queue.qsize())]
    assert [(e.type, e.data) for e in sent] == [
        ("server.status", {"kind": "mcp", "name": "notes", "status": "ready", "label": "ready", "reason": None}),
        (
            "server.status",
            {
                "kind": "mcp",
                "name": "bad",
                "status": "failed",
                "label": "failed",
                "reason": "exited: key <redacted> refused",
            },
        ),
        ("tool.decided", {"call_id": "c1", "tool": "fs.read", "decision": "allow", "reason": "rule"}),
    ]
    assert [e.seq for e in sent] == sorted(e.seq for e in sent)
    trace = hub.recent(10)
    assert [e["type"] for e in trace] == ["McpServerReady", "McpServerFailed", "ToolCallDecided"]
    assert "sk-abcdef123" not in str(trace)


def test_the_application_can_be_made_before_the_event_loop_runs(tmp_path: Path) -> None:
    import anyio
    import httpx

    from kairox.web import WebOptions, create_app

    (tmp_path / ".git").mkdir()
    app = create_app(WebOptions(workspace=tmp_path, port=8765, token="t" * 20))  # as an ASGI server's factory does

    async def ask() -> int:
        async with app.router.lifespan_context(app):
            transport = httpx.ASGITransport(app=app)
            async with httpx.AsyncClient(transport=transport, base_url="http://localhost:8765") as client:
                return (await client.get("/api/state", headers={"Authorization": "Bearer " + "t" * 20})).status_code

    assert anyio.run(ask) == 200
