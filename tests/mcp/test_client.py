"""McpClient against the Python test server: calls, results, progress, timeouts, cancellation, logs.

The server speaks both eras: in ``auto`` mode it answers the discovery probe and is served in the 2026 era, in
``legacy`` mode with the classic handshake; Kairox's own session serves it either way. Every test runs with both."""

import base64
from collections.abc import Callable
from pathlib import Path

import anyio
import pytest

from kairox._rpc._status import ServerStatus
from kairox.config import McpServerConfig
from kairox.events import RecordingSink
from kairox.mcp import (
    ClientFeatures,
    McpClient,
    McpServerLog,
    McpServerReady,
    McpServerStarting,
    McpServerStopped,
    McpToolProgress,
)
from kairox.mcp._features import ElicitationAnswer, ElicitationRequest
from kairox.tools import AudioContent, EmbeddedResource, ImageContent, ResourceLink, TextContent, ToolResult

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(60)]


@pytest.fixture
def python_server(either_session_server: Callable[..., McpServerConfig]) -> Callable[..., McpServerConfig]:
    return either_session_server


BASIC_TOOLS = ["echo", "add", "bad_structured", "slow", "wait_forever", "die", "media", "log", "burst", "roots_echo"]


async def test_server_starts_lists_its_tools_and_stops_with_events(
    python_server: Callable[..., McpServerConfig], tmp_path: Path
) -> None:
    sink = RecordingSink()
    async with McpClient("basic", python_server("basic_server.py"), workspace=tmp_path, events=sink) as client:
        assert client.status == ServerStatus.READY
        assert [tool.name for tool in client.tools] == BASIC_TOOLS
        version = client.protocol_version
    assert client.status == ServerStatus.STOPPED
    assert sink.events == [
        McpServerStarting(server="basic", transport="stdio", attempt=0),
        McpServerReady(server="basic", tools=10, protocol_version=version),
        McpServerStopped(server="basic"),
    ]


async def test_echo_and_structured_results_come_back_whole(
    python_server: Callable[..., McpServerConfig], tmp_path: Path
) -> None:
    async with McpClient("basic", python_server("basic_server.py"), workspace=tmp_path) as client:
        kind = client.session_kind
        echo = await client.call_tool("echo", {"message": "hi"})
        added = await client.call_tool("add", {"a": 2, "b": 3})
    assert (echo.content, echo.structured, echo.is_error) == ((TextContent(text="hi"),), {"result": "hi"}, False)
    assert (added.structured, added.is_error) == ({"total": 5}, False)
    assert kind == "kairox"


async def test_every_content_kind_is_mapped(python_server: Callable[..., McpServerConfig], tmp_path: Path) -> None:
    async with McpClient("basic", python_server("basic_server.py"), workspace=tmp_path) as client:
        result = await client.call_tool("media")
    assert result.is_error is False
    assert result.content[0] == TextContent(text="caption")
    assert isinstance(result.content[1], ImageContent) and result.content[1].mime_type == "image/png"
    assert base64.b64decode(result.content[1].data).startswith(b"\x89PNG")
    assert result.content[2:] == (
        AudioContent(data=base64.b64encode(b"RIFF").decode(), mime_type="audio/wav"),
        EmbeddedResource(uri="memo://note", mime_type="text/plain", text="note body"),
        EmbeddedResource(uri="memo://blob", mime_type="application/octet-stream", blob="AAE="),
        ResourceLink(uri="memo://linked", name="linked", description="a linked resource", mime_type="text/plain"),
    )


async def test_structured_result_breaking_its_output_schema_is_a_tool_error(
    python_server: Callable[..., McpServerConfig], tmp_path: Path
) -> None:
    async with McpClient("basic", python_server("basic_server.py"), workspace=tmp_path) as client:
        result = await client.call_tool("bad_structured")
    assert result.is_error is True
    assert "returned an invalid result" in result.text_content()
    assert "'not a number' is not of type 'integer'" in result.text_content()


async def test_progress_reaches_events_and_the_callback(
    python_server: Callable[..., McpServerConfig], tmp_path: Path
) -> None:
    sink = RecordingSink()
    seen: list[tuple[float, float | None, str | None]] = []

    def progress(value: float, total: float | None, message: str | None) -> None:
        seen.append((value, total, message))

    async with McpClient("basic", python_server("basic_server.py"), workspace=tmp_path, events=sink) as client:
        result = await client.call_tool("slow", {"steps": 3, "delay": 0.01}, call_id="c1", progress=progress)
    assert result.text_content() == "done after 3 steps"
    assert seen == [(1.0, 3.0, "step 1"), (2.0, 3.0, "step 2"), (3.0, 3.0, "step 3")]
    assert sink.of_type(McpToolProgress) == [
        McpToolProgress(server="basic", tool="slow", call_id="c1", progress=float(i), total=3.0, message=f"step {i}")
        for i in (1, 2, 3)
    ]


async def test_progress_extends_the_idle_timeout(python_server: Callable[..., McpServerConfig], tmp_path: Path) -> None:
    # six steps of 0.3 s each take longer than the 1 s timeout in total, but never 1 s without progress
    async with McpClient("basic", python_server("basic_server.py"), workspace=tmp_path) as client:
        result = await client.call_tool("slow", {"steps": 6, "delay": 0.3}, timeout=1.0)
    assert result == ToolResult(
        content=(TextContent(text="done after 6 steps"),), structured={"result": "done after 6 steps"}, meta=result.meta
    )


async def test_idle_timeout_is_a_tool_error_and_cancels_on_the_server(
    python_server: Callable[..., McpServerConfig], tmp_path: Path
) -> None:
    marker = tmp_path / "cancelled"
    config = python_server("basic_server.py", env={"KAIROX_TEST_MARKER": str(marker)})
    async with McpClient("basic", config, workspace=tmp_path) as client:
        result = await client.call_tool("wait_forever", timeout=0.5)
        with anyio.fail_after(10):
            while not marker.exists():
                await anyio.sleep(0.05)
        after = await client.call_tool("echo", {"message": "still alive"})
    assert result.is_error is True
    assert "timed out after 0.5s" in result.text_content()
    assert marker.read_text() == "cancelled"
    assert after.text_content() == "still alive"


async def test_cancelling_the_caller_sends_notifications_cancelled(
    python_server: Callable[..., McpServerConfig], tmp_path: Path
) -> None:
    marker = tmp_path / "cancelled"
    config = python_server("basic_server.py", env={"KAIROX_TEST_MARKER": str(marker)})
    async with McpClient("basic", config, workspace=tmp_path) as client:
        with anyio.move_on_after(0.5) as scope:
            await client.call_tool("wait_forever")
        with anyio.fail_after(10):
            while not marker.exists():
                await anyio.sleep(0.05)
    assert scope.cancelled_caught is True
    assert marker.read_text() == "cancelled"


async def test_server_log_messages_become_events(python_server: Callable[..., McpServerConfig], tmp_path: Path) -> None:
    sink = RecordingSink()
    async with McpClient("basic", python_server("basic_server.py"), workspace=tmp_path, events=sink) as client:
        await client.call_tool("log", {"message": "hello from the server"})
    assert sink.of_type(McpServerLog) == [
        McpServerLog(server="basic", level="info", data="hello from the server", logger="basic")
    ]


async def test_unknown_tool_is_a_tool_error(python_server: Callable[..., McpServerConfig], tmp_path: Path) -> None:
    async with McpClient("basic", python_server("basic_server.py"), workspace=tmp_path) as client:
        result = await client.call_tool("no_such_tool")
    assert result.is_error is True
    assert "no_such_tool" in result.text_content()


async def test_stderr_goes_to_a_per_server_log_file(
    python_server: Callable[..., McpServerConfig], tmp_path: Path, isolated_home: Path
) -> None:
    config = python_server("basic_server.py", "--stderr-bytes", str(1024 * 1024))
    async with McpClient("noisy", config, workspace=tmp_path, home=isolated_home) as client:
        assert client.status == ServerStatus.READY
        assert len(client.stderr_tail) <= 4_000
    log = isolated_home / "logs" / "mcp" / "noisy.log"
    assert log.stat().st_size >= 1024 * 1024


async def test_the_log_file_stays_in_the_log_folder_whatever_the_server_name(
    python_server: Callable[..., McpServerConfig], tmp_path: Path, isolated_home: Path
) -> None:
    folder = isolated_home / "logs" / "mcp"
    names = ["../../escaped", "a/b", "a_b"]
    clients = [
        McpClient(name, python_server("basic_server.py"), workspace=tmp_path, home=isolated_home) for name in names
    ]
    assert [c.log_path.parent for c in clients] == [folder] * 3
    assert len({c.log_path for c in clients}) == 3
    assert clients[2].log_path == folder / "a_b.log"


async def test_call_to_a_failed_server_says_why(python_server: Callable[..., McpServerConfig], tmp_path: Path) -> None:
    async with McpClient("crash", python_server("crash_at_start.py"), workspace=tmp_path) as client:
        assert client.status == ServerStatus.FAILED
        result = await client.call_tool("echo", {"message": "hi"})
    assert result.is_error is True
    assert result.text_content().startswith("MCP server 'crash' is failed (the server exited with code 3")


async def test_a_question_of_the_server_reaches_the_person_and_the_answer_goes_back_in_either_era(
    python_server: Callable[..., McpServerConfig], tmp_path: Path
) -> None:
    # the handshake era asks with an elicitation request; the 2026 era answers the call with an input-required result
    # and Kairox sends the call again with the answer
    asked: list[str] = []

    async def person(request: ElicitationRequest) -> ElicitationAnswer:
        asked.append(request.message)
        return ElicitationAnswer(action="accept", content={"colour": "teal"})

    features = ClientFeatures(roots=(tmp_path,), elicitation=person)
    config = python_server("basic_server.py", "--ask-tool")
    async with McpClient("basic", config, workspace=tmp_path, features=features) as client:
        result = await client.call_tool("ask")
    assert (result.is_error, result.text_content(), asked) == (False, "accept: teal", ["Which colour?"])
