"""Claude-style .mcp.json files as a source of MCP servers (M1)."""

import json
from pathlib import Path

from kairox.config import McpServerConfig
from kairox.config._mcp_json import read_mcp_json, workspace_mcp_servers
from kairox.errors import ExtensionLoadFailure, Severity


def test_wrapped_form_with_every_transport_type(tmp_path: Path) -> None:
    path = tmp_path / ".mcp.json"
    path.write_text(
        json.dumps(
            {
                "mcpServers": {
                    "files": {"command": "npx", "args": ["-y", "server-files"], "env": {"TOKEN": ""}},
                    "remote": {"type": "http", "url": "https://example.invalid/mcp", "headers": {"X-Key": "${KEY}"}},
                    "stream": {"type": "streamable-http", "url": "https://example.invalid/s"},
                    "events": {"type": "sse", "url": "https://example.invalid/sse"},
                }
            },
            indent=2,
        )
    )
    loaded = workspace_mcp_servers(tmp_path)
    assert loaded.diagnostics == ()
    assert loaded.servers == {
        "files": McpServerConfig(type="stdio", command="npx", args=["-y", "server-files"], env={"TOKEN": ""}),
        "remote": McpServerConfig(
            type="streamable_http", url="https://example.invalid/mcp", headers={"X-Key": "${KEY}"}
        ),
        "stream": McpServerConfig(type="streamable_http", url="https://example.invalid/s"),
        "events": McpServerConfig(type="sse", url="https://example.invalid/sse"),
    }
    assert loaded.lines == {"files": 3, "remote": 13, "stream": 20, "events": 24}
    assert loaded.source == str(path)


def test_flat_form_and_claude_extras(tmp_path: Path) -> None:
    path = tmp_path / ".mcp.json"
    path.write_text(
        json.dumps({"git": {"command": "uvx", "args": ["mcp-server-git"], "disabled": True, "alwaysAllow": []}})
    )
    loaded = read_mcp_json(path, source="plugin:git-tools")
    assert loaded.servers == {"git": McpServerConfig(command="uvx", args=["mcp-server-git"], enabled=False)}
    (note,) = loaded.diagnostics
    assert (note.severity, note.reason, note.source) == (
        Severity.INFO,
        "ignored keys Kairox does not use: alwaysAllow",
        "plugin:git-tools",
    )


def test_broken_entry_is_reported_with_its_line_and_the_rest_load(tmp_path: Path) -> None:
    path = tmp_path / ".mcp.json"
    path.write_text(
        '{\n  "mcpServers": {\n    "ok": {"command": "a"},\n    "bad": {"type": "sse", "command": "b"}\n  }\n}\n'
    )
    loaded = read_mcp_json(path)
    assert list(loaded.servers) == ["ok"]
    assert loaded.diagnostics == (
        ExtensionLoadFailure(
            kind="mcp_server",
            name="bad",
            reason=(
                'command: a sse server cannot set command; remove it or set type = "stdio"; a sse server needs `url`'
            ),
            source=str(path),
            line=4,
            hint="fix this entry; the other servers still load",
        ),
    )


def test_invalid_json_names_the_line(tmp_path: Path) -> None:
    path = tmp_path / ".mcp.json"
    path.write_text('{\n  "mcpServers": {\n    "x": {"command": "a",}\n  }\n}\n')
    loaded = read_mcp_json(path)
    assert loaded.servers == {}
    (failure,) = loaded.diagnostics
    assert (failure.line, failure.reason.startswith("not valid JSON")) == (3, True)


def test_missing_file_gives_nothing(tmp_path: Path) -> None:
    loaded = workspace_mcp_servers(tmp_path)
    assert (loaded.servers, loaded.diagnostics) == ({}, ())


def test_file_that_is_not_utf8_is_a_diagnostic_with_its_path(tmp_path: Path) -> None:
    path = tmp_path / ".mcp.json"
    path.write_bytes(b'\xff\xfe{"mcpServers": {}}')
    loaded = workspace_mcp_servers(tmp_path)
    assert loaded.servers == {}
    assert loaded.diagnostics == (
        ExtensionLoadFailure(
            kind="mcp_server",
            name=".mcp.json",
            reason="cannot read: not UTF-8 text (byte 0xff at offset 0)",
            source=str(path),
            hint="save the file as UTF-8",
        ),
    )
