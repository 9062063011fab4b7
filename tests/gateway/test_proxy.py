"""``kairox proxy`` in front of the conformance fixture (a real stdio server), driven by real MCP clients: the MCP
Inspector CLI, the official SDK's client in both eras, and Codex CLI with a scripted model on loopback.

What each client receives is checked whole: the upstream's own tool names and results (an image block as the
upstream sent it), a deny rule's refusal, and an ask answered through elicitation (handshake era) or an
``input_required`` round (2026 era), or refused with its reason by a client that cannot answer. Every call is a
line of the proxy's audit log under ``mcp__fixture__<tool>``.
"""

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from tests.gateway.conftest import SERVERS, kairox_env
from tests.gateway.test_hosts import BIN, CODEX, NODE_BIN, base_env, codex_env, run_in_netns

pytestmark = pytest.mark.timeout(300)

FIXTURE = SERVERS / "conformance_fixture_server.py"
INSPECTOR = SERVERS / "node_modules" / "@modelcontextprotocol" / "inspector-cli" / "build"
PNG_PREFIX = "iVBORw0KGgo"


def proxy_home(root: Path) -> tuple[Path, Path]:
    """A Kairox home whose user config names the fixture and rules for its tools, and an empty workspace."""
    home, workspace = root / "kairox-home", root / "ws"
    home.mkdir(parents=True)
    (workspace / ".git").mkdir(parents=True)
    (home / "kairox.toml").write_text(
        f"""[mcp_servers.fixture]
command = {json.dumps(sys.executable)}
args = [{json.dumps(str(FIXTURE))}]

[policy.rules]
allow = ["mcp__fixture__*"]
deny = ["mcp__fixture__test_error_handling"]
ask = ["mcp__fixture__test_embedded_resource"]
"""
    )
    return home, workspace


def audit(home: Path) -> list[dict[str, Any]]:
    path = home / "logs" / "proxy.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def proxy_command(workspace: Path) -> list[str]:
    return [sys.executable, "-m", "kairox", "--workspace", str(workspace), "proxy", "--name", "fixture"]


def test_inspector_cli_gets_whole_results_a_refusal_and_an_unanswerable_ask(tmp_path: Path) -> None:
    home, workspace = proxy_home(tmp_path)
    if not (INSPECTOR / "index.js").exists():
        pytest.fail("the MCP Inspector CLI is not installed: run `npm ci` in tests/servers")
    env = {**kairox_env(home), "PATH": f"{NODE_BIN}:{os.environ['PATH']}"}

    def inspect(*args: str) -> dict[str, Any]:
        # the CLI finds its own package.json relative to the working directory: run it from its build folder
        done = subprocess.run(
            [str(NODE_BIN / "node"), "index.js", *proxy_command(workspace), *args],
            cwd=INSPECTOR,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode == 0, done.stdout + done.stderr
        result: dict[str, Any] = json.loads(done.stdout[done.stdout.index("{") :])
        return result

    listed = inspect("--method", "tools/list")
    names = {tool["name"] for tool in listed["tools"]}
    assert {"test_image_content", "test_sampling", "json_schema_2020_12_tool"} <= names
    schema = next(t for t in listed["tools"] if t["name"] == "json_schema_2020_12_tool")["inputSchema"]
    assert schema["$defs"]["address"]["$anchor"] == "addressDef" and "if" in schema  # the upstream's own shape

    image = inspect("--method", "tools/call", "--tool-name", "test_image_content")
    assert image["content"] == [{"type": "image", "data": image["content"][0]["data"], "mimeType": "image/png"}]
    assert image["content"][0]["data"].startswith(PNG_PREFIX) and not image["isError"]

    denied = inspect("--method", "tools/call", "--tool-name", "test_error_handling")
    assert (
        denied["isError"] and "denied by deny rule 'mcp__fixture__test_error_handling'" in denied["content"][0]["text"]
    )

    asked = inspect("--method", "tools/call", "--tool-name", "test_embedded_resource")
    text = asked["content"][0]["text"]
    assert asked["isError"] and "was not run" in text and "cannot answer approval questions" in text

    records = [(r["tool"], r["decision"], r["outcome"]) for r in audit(home)]
    assert records == [
        ("mcp__fixture__test_image_content", "allow", "ok"),
        ("mcp__fixture__test_error_handling", "deny", "refused"),
        ("mcp__fixture__test_embedded_resource", "unanswerable", "refused"),
    ]


@pytest.mark.anyio
@pytest.mark.parametrize("era", ["legacy", "2026-07-28"])
async def test_an_ask_is_answered_through_the_host_in_either_era(tmp_path: Path, era: str) -> None:
    from mcp.client import Client
    from mcp.client.stdio import StdioServerParameters

    home, workspace = proxy_home(tmp_path)
    asked: list[str] = []

    async def answer(context: Any, params: Any) -> Any:
        import mcp_types as types

        asked.append(params.message)
        return types.ElicitResult(action="accept", content={"decision": "allow once"})

    command = proxy_command(workspace)
    server = StdioServerParameters(command=command[0], args=command[1:], env=kairox_env(home))
    async with Client(server, mode=era, elicitation_callback=answer) as client:  # type: ignore[arg-type]
        result = await client.call_tool("test_embedded_resource", {})
        refused = await client.call_tool("test_error_handling", {})
    embedded = result.content[0]
    assert not result.is_error and embedded.type == "resource"
    assert embedded.resource.uri == "test://embedded-resource"  # type: ignore[union-attr]
    assert len(asked) == 1 and "Allow mcp__fixture__test_embedded_resource?" in asked[0]
    assert refused.is_error and "denied by deny rule" in refused.content[0].text  # type: ignore[union-attr]
    decisions = [(r["tool"], r["decision"]) for r in audit(home) if r["decision"] != "input_required"]
    assert decisions == [
        ("mcp__fixture__test_embedded_resource", "approved"),
        ("mcp__fixture__test_error_handling", "deny"),
    ]


STEPS = [
    {"tool": "test_simple_text", "args": {}},
    {"tool": "test_error_handling", "args": {}},
    {"tool": "test_embedded_resource", "args": {}},
]


def check_host(report: dict[str, Any], home: Path, refused_ask: str, ask_decision: str) -> None:
    """What a host's model got for the three STEPS, and the proxy's audit of them: the text whole, the deny rule's
    refusal, and the ask the host could not answer (``refused_ask`` in what the model read)."""
    results = report["results"]
    assert isinstance(results, list) and len(results) == len(STEPS), report
    simple, denied, asked = results
    assert "This is a simple text response for testing." in simple
    assert "denied by deny rule 'mcp__fixture__test_error_handling'" in denied
    assert "was not run" in asked and refused_ask in asked
    decided = [(r["tool"], r["decision"]) for r in audit(home)]
    assert decided == [
        ("mcp__fixture__test_simple_text", "allow"),
        ("mcp__fixture__test_error_handling", "deny"),
        ("mcp__fixture__test_embedded_resource", ask_decision),
    ]


def test_codex_cli_sees_the_upstreams_results_through_kairox_proxy(tmp_path: Path) -> None:
    home, workspace = proxy_home(tmp_path)
    server_env = {k: v for k, v in kairox_env(home).items() if k.startswith("KAIROX_")}
    env = codex_env(tmp_path, "fixture", proxy_command(workspace), server_env)
    report = run_in_netns(
        [*CODEX, "Use the fixture tools as asked, then say done."], env, tmp_path / "report.json", STEPS
    )
    # Codex declines the elicitation of an unattended run: the call does not run, and the model is told why
    check_host(report, home, "was declined by the user of", "declined")


@pytest.mark.anyio
@pytest.mark.parametrize("era", ["legacy", "2026-07-28"])
async def test_a_handshake_upstreams_questions_go_to_the_host_request_that_can_carry_them(
    tmp_path: Path, era: str
) -> None:
    """server-everything speaks the handshake era only: its sampling and roots requests during a call reach a
    handshake host over that call's back-channel; a 2026 host's request cannot carry them, so they are declined
    with the reason, and its lists still carry the freshness hints its era requires."""
    import mcp_types as types
    from mcp.client import Client
    from mcp.client.stdio import StdioServerParameters
    from tests.gateway.conftest import EVERYTHING, NODE

    home, workspace = tmp_path / "home", tmp_path / "ws"
    (workspace / ".git").mkdir(parents=True)
    home.mkdir()
    (home / "kairox.toml").write_text('[policy.rules]\nallow = ["mcp__everything__*"]\n')

    async def sample(context: Any, params: Any) -> Any:
        return types.CreateMessageResult(role="assistant", content=types.TextContent(text="sampled by host"), model="m")

    async def roots(context: Any) -> Any:
        return types.ListRootsResult(roots=[types.Root(uri=workspace.as_uri())])  # type: ignore[arg-type]

    command = [*proxy_command(workspace)[:-2], "--name", "everything", "--", str(NODE), str(EVERYTHING), "stdio"]
    server = StdioServerParameters(command=command[0], args=command[1:], env=kairox_env(home))
    async with Client(server, mode=era, sampling_callback=sample, list_roots_callback=roots) as client:  # type: ignore[arg-type]
        listed = await client.list_tools()
        sampled = await client.call_tool("trigger-sampling-request", {"prompt": "hi", "maxTokens": 10})
        echoed = await client.call_tool("echo", {"message": "through"})
    assert "trigger-sampling-request" in {tool.name for tool in listed.tools}
    assert echoed.content[0].text == "Echo: through"  # type: ignore[union-attr]
    said = sampled.content[0].text  # type: ignore[union-attr]
    if era == "legacy":
        assert "sampled by host" in said and not sampled.is_error
    else:
        assert sampled.is_error and "no request of the host can carry sampling/createMessage" in said


def test_claude_code_sees_the_upstreams_results_through_kairox_proxy(tmp_path: Path) -> None:
    home, workspace = proxy_home(tmp_path)
    command = proxy_command(workspace)
    server = {"type": "stdio", "command": command[0], "args": command[1:], "env": kairox_env(home)}
    config = tmp_path / "claude-mcp.json"
    config.write_text(json.dumps({"mcpServers": {"fixture": server}}))
    env = {
        **base_env(tmp_path / "home"),
        "ANTHROPIC_BASE_URL": "http://127.0.0.1:18080",
        "ANTHROPIC_API_KEY": "scripted",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "MCP_TIMEOUT": "60000",  # a busy machine starts the proxy and its confined upstream slower than the default
        "DISABLE_TELEMETRY": "1",
        "DISABLE_AUTOUPDATER": "1",
        "DISABLE_ERROR_REPORTING": "1",
    }
    (tmp_path / "home").mkdir(exist_ok=True)
    claude = [str(BIN / "claude"), "-p", "Use the fixture tools as asked, then say done.", "--output-format", "json"]
    claude += ["--mcp-config", str(config), "--strict-mcp-config", "--allowedTools", "mcp__fixture"]
    report = run_in_netns(claude, env, tmp_path / "report.json", STEPS)
    # Claude Code answers the elicitation of a headless run by cancelling it: the call does not run
    check_host(report, home, "was cancelled by the user of claude-code", "cancelled")
