"""What hosts that show only ``structuredContent`` see: every Kairox tool's structured form carries its text.

Claude Code and Codex hand the model a result's ``structuredContent`` and drop its text when both are present.
Each built-in, LSP, DAP and skill tool is called here through ``kairox serve`` (in-process, the SDK's own client),
and what the text says must be in the structured form alone.
"""

import base64
import http.server
import json
import re
import subprocess
import sys
import threading
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import mcp_types as types
import pytest
from tests.gateway.conftest import EVERYTHING, JEDI, NODE, Served
from tests.gateway.test_serve import connect

from kairox.gateway._serve import open_gateway
from kairox.gateway._server import GatewayOptions
from kairox.gateway._wire import uncarried_lines
from kairox.runtime import RuntimeOptions
from mcp import Client, StdioServerParameters

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(300)]

PROGRAM = """def compute(n):
    x = 42
    y = x + n
    return y


print("total", compute(1))
"""

SKILL = """---
name: greet-back
description: Greet someone back by name.
arguments:
  - name: who
    required: true
---
Say hello to ${who}, warmly.
"""

SUMMARIES = {"fs_write", "fs_edit"}
"""Tools whose text is a one-line summary of their structured form (``edited PATH: 1 replacement(s)``)."""


def text(result: types.CallToolResult) -> str:
    return "\n".join(block.text for block in result.content if isinstance(block, types.TextContent))


@pytest.fixture
async def client(tmp_path: Path, isolated_home: Path) -> AsyncIterator[Client]:
    ws = tmp_path / "ws"
    (ws / ".git").mkdir(parents=True)
    (ws / "kairox.toml").write_text(
        f'[lsp_servers.jedi]\ncommand = {json.dumps(str(JEDI))}\nfile_patterns = ["*.py"]\n'
        f"[dap_servers.debugpy]\ncommand = {json.dumps(sys.executable)}"
        '\nargs = ["-m", "debugpy.adapter"]\nlanguages = ["python"]\n'
        '[policy.rules]\nallow = ["shell.exec", "fs.write", "fs.edit", "dap.*", "web.fetch(domain:127.0.0.1)"]\n'
        "[tools]\noutput_limit_chars = 1000\n"
    )
    (ws / "big.txt").write_text("".join(f"line {n:04}\n" for n in range(300)))
    (ws / "program.py").write_text(PROGRAM)
    (ws / "notes.txt").write_text("first line\nsecond line\n")
    skill = ws / ".kairox" / "skills" / "greet-back" / "SKILL.md"
    skill.parent.mkdir(parents=True)
    skill.write_text(SKILL)
    done = subprocess.run(
        [sys.executable, "-m", "kairox", "trust"], cwd=ws, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    async with (
        open_gateway(RuntimeOptions(workspace=ws), GatewayOptions(audit_path=tmp_path / "audit.jsonl")) as gateway,
        Client(gateway.server, mode="legacy") as connected,
    ):
        yield connected


CALLS: list[tuple[str, dict[str, Any]]] = [
    ("fs_write", {"path": "made.txt", "content": "alpha\nbeta\n"}),
    ("fs_edit", {"path": "made.txt", "old_string": "beta", "new_string": "gamma"}),
    ("fs_read", {"path": "notes.txt"}),
    ("fs_read", {"path": "made.txt", "start_line": 2}),
    ("fs_read", {"path": "big.txt"}),
    ("fs_list", {}),
    ("fs_list", {"pattern": "*.nothing"}),
    ("search_ripgrep", {"pattern": "line"}),
    ("search_ripgrep", {"pattern": "no such text anywhere"}),
    ("shell_exec", {"command": "echo out-text; echo err-text >&2"}),
    ("shell_exec", {"command": "echo failing; exit 3"}),
    ("lsp_definition", {"path": "program.py", "line": 7, "column": 16}),
    ("lsp_references", {"path": "program.py", "line": 1, "column": 5}),
    ("lsp_hover", {"path": "program.py", "line": 1, "column": 5}),
    ("lsp_document_symbols", {"path": "program.py"}),
    ("lsp_workspace_symbols", {"query": "compute"}),
    ("lsp_implementation", {"path": "program.py", "line": 1, "column": 5}),
    ("lsp_call_hierarchy", {"path": "program.py", "line": 1, "column": 5}),
    ("lsp_diagnostics", {"path": "program.py"}),
    ("lsp_rename", {"path": "program.py", "line": 1, "column": 5, "new_name": "calc"}),
    ("skill", {"name": "greet-back", "arguments": {"who": "Ann"}}),
    ("dap_launch", {"program": "program.py", "breakpoints": [{"path": "program.py", "line": 2}]}),
    ("dap_threads", {}),
    ("dap_stack_trace", {}),
    ("dap_scopes", {}),
    ("dap_variables", {"scope": "Locals"}),
    ("dap_evaluate", {"expression": "n + 1"}),
    ("dap_set_breakpoints", {"breakpoints": [{"path": "program.py", "line": 4}]}),
    ("dap_next", {}),
    ("dap_step_in", {}),
    ("dap_continue", {}),
    ("dap_step_out", {}),
    ("dap_pause", {}),
    ("dap_disconnect", {}),
    ("dap_attach", {"port": 9}),
    ("web_fetch", {"url": "PAGE"}),  # the page a loopback server of the fixture serves
]
PAGE_HTML = (
    b"<html><head><title>Notes</title></head><body><h1>Release notes</h1><p>Fixed the cart total.</p></body></html>"
)


@pytest.fixture
def page_url() -> Iterator[str]:
    class Page(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(PAGE_HTML)))
            self.end_headers()
            self.wfile.write(PAGE_HTML)

        def log_message(self, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Page)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/notes.html"
    finally:
        server.shutdown()


async def test_every_served_tool_result_carries_its_text_in_the_structured_form(client: Client, page_url: str) -> None:
    served = {tool.name: tool for tool in (await client.list_tools()).tools}
    kairox_tools = {
        n for n, t in served.items() if (t.meta or {}).get("kairox/source") in ("builtin", "lsp", "dap", "skill")
    }
    assert kairox_tools - {name for name, _ in CALLS} == set()  # every one of them is called below
    seen: dict[str, list[types.CallToolResult]] = {}
    lost: list[tuple[str, list[str]]] = []
    for name, arguments in CALLS:
        if arguments.get("url") == "PAGE":
            arguments = {"url": page_url}
        result = await client.call_tool(name, arguments)
        seen.setdefault(name, []).append(result)
        shown = text(result)
        if result.structured_content is None:
            continue
        assert uncarried_lines(result.structured_content, shown) == [], (name, shown, result.structured_content)
        # the tool's own structured form carries it: notes the gateway added are only summaries of it
        notes = result.structured_content.get("notes", [])
        if name not in SUMMARIES and not all(n.startswith(("[", "(")) for n in notes):
            lost.append((name, notes))
        schema = served[name].output_schema
        if schema is not None:
            assert set(result.structured_content) - set(schema["properties"]) <= {"notes"}, name
    assert lost == [], "\n".join(map(repr, lost))
    read = seen["fs_read"][0]
    assert read.structured_content is not None and read.structured_content["content"] == "first line\nsecond line\n"
    assert (
        seen["fs_read"][1].structured_content is not None
        and seen["fs_read"][1].structured_content["content"] == "gamma\n"
    )
    cut = seen["fs_read"][2]  # over the output cap: the structured form is cut with the text, not left whole
    assert cut.structured_content is not None and "content" not in cut.structured_content
    assert cut.structured_content["text"] == text(cut) and cut.structured_content["output_truncated"] is True
    assert text(cut).startswith("line 0000\n") and "[output truncated: 3000 characters, limit 1000;" in text(cut)
    ran, failed = seen["shell_exec"]
    assert ran.structured_content is not None and failed.structured_content is not None
    assert (
        ran.structured_content["stdout"],
        ran.structured_content["stderr"],
        ran.structured_content["exit_code"],
    ) == ("out-text\n", "err-text\n", 0)
    assert (failed.is_error, failed.structured_content["stdout"], failed.structured_content["exit_code"]) == (
        True,
        "failing\n",
        3,
    )
    launched = seen["dap_launch"][0]
    assert not launched.is_error and launched.structured_content is not None, text(launched)
    definition = seen["lsp_definition"][0].structured_content
    assert definition is not None and [(d["path"], d["line"]) for d in definition["locations"]] == [("program.py", 1)]
    assert "Say hello to Ann, warmly." in json.dumps(seen["skill"][0].structured_content)


UPSTREAM_CALLS: list[tuple[str, dict[str, Any]]] = [
    ("get-tiny-image", {}),
    ("get-annotated-message", {"messageType": "error", "includeImage": True}),
    ("get-resource-links", {"count": 2}),
    ("get-resource-reference", {"resourceType": "Text", "resourceId": 1}),
    ("get-resource-reference", {"resourceType": "Blob", "resourceId": 2}),
    ("get-structured-content", {"location": "New York"}),
]


def blocks(result: types.CallToolResult) -> str:
    """The content blocks as JSON, with the time a dynamic resource was made taken out (each read makes it anew)."""
    dumped_blocks = [b.model_dump(by_alias=True, exclude_none=True) for b in result.content]
    for block in dumped_blocks:  # a blob resource holds the time too: compared decoded
        if "blob" in block.get("resource", {}):
            block["resource"]["blob"] = base64.b64decode(block["resource"]["blob"]).decode(errors="replace")
    dumped = json.dumps(dumped_blocks)
    return re.sub(r"\d{1,2}:\d\d:\d\d [AP]M", "<time>", dumped)


async def test_upstream_results_pass_through_unchanged(gateway: Served) -> None:
    """Images, annotated blocks, resource links, embedded text and blob resources and structured content reach the
    client of ``kairox serve`` exactly as server-everything sends them to a client of its own."""
    direct: list[types.CallToolResult] = []
    async with Client(
        StdioServerParameters(command=str(NODE), args=[str(EVERYTHING), "stdio"]), mode="legacy"
    ) as upstream:
        for name, arguments in UPSTREAM_CALLS:
            direct.append(await upstream.call_tool(name, arguments))
    async with connect(gateway) as client:
        served = [await client.call_tool(f"mcp__everything__{name}", arguments) for name, arguments in UPSTREAM_CALLS]
    kinds = {block.type for result in direct for block in result.content}
    assert kinds == {"text", "image", "resource_link", "resource"}
    assert any(getattr(block, "annotations", None) for result in direct for block in result.content)
    for (name, _), theirs, ours in zip(UPSTREAM_CALLS, direct, served, strict=True):
        assert blocks(ours) == blocks(theirs), name
        assert (ours.structured_content, ours.is_error) == (theirs.structured_content, theirs.is_error), name
