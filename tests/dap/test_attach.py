"""``dap.attach`` to a port where no debug adapter answers fails with what to check, within its documented waits:
a refused connection is tried for ATTACH_CONNECT_WAIT, an accepted one must answer ``initialize`` within
ATTACH_ANSWER_WAIT. Real sockets on 127.0.0.1; the test timeouts only keep a regression from hanging the run."""

import asyncio
import socket
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from tests.dap._fixtures import debugpy_config, free_port

from kairox.dap import DapServerFailed, DapServerStarting, DapToolProvider
from kairox.errors import ToolCallError
from kairox.events import RecordingSink
from kairox.tools import CallContext

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(20)]


def hint(port: int) -> str:
    return (
        f"check that the program runs and waits for a debugger on port {port}, e.g. started with "
        f"`python -m debugpy --listen 127.0.0.1:{port} --wait-for-client app.py`, and that nothing else uses the port"
    )


async def attach(workspace: Path, port: int, sink: RecordingSink | None = None) -> tuple[ToolCallError, str]:
    """The error of attaching to ``port``, and the state the provider then shows for the session."""
    async with DapToolProvider({"debugpy": debugpy_config()}, workspace=workspace, events=sink) as provider:
        with pytest.raises(ToolCallError) as caught:
            await provider.call_tool("dap.attach", {"port": port}, CallContext(call_id="t", workspace=workspace))
        return caught.value, str(provider.status()[0]["state"])


@contextmanager
def silent_listener() -> Iterator[int]:
    """A port on 127.0.0.1 whose connections the kernel accepts and nothing ever reads or answers."""
    server = socket.socket()
    try:
        server.bind(("127.0.0.1", 0))
        server.listen(4)
        yield server.getsockname()[1]
    finally:
        server.close()


async def test_attaching_where_nothing_listens_fails_naming_the_port_and_what_to_check(workspace: Path) -> None:
    port = free_port()
    sink = RecordingSink()
    error, state = await attach(workspace, port, sink)
    reason = f"127.0.0.1:{port} refused the connection: nothing listens there (tried for 1s)"
    assert error.message == f"dap.attach failed: cannot attach to 127.0.0.1:{port}: {reason}"
    assert error.hint == hint(port)
    assert state == "ended"
    assert sink.events == [
        DapServerStarting(server="debugpy", session="s1"),
        DapServerFailed(server="debugpy", session="s1", reason=reason),
    ]


async def test_attaching_to_a_port_that_accepts_and_says_nothing_fails_after_the_answer_wait(workspace: Path) -> None:
    with silent_listener() as port:
        error, state = await attach(workspace, port)
    assert error.message == (
        f"dap.attach failed: cannot attach to 127.0.0.1:{port}: 127.0.0.1:{port} accepted the connection but did "
        "not answer the DAP initialize request within 5s"
    )
    assert error.hint == hint(port)
    assert state == "ended"


async def test_attaching_to_a_port_that_hangs_up_fails_saying_so(workspace: Path) -> None:
    async def hang_up(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.close()

    server = await asyncio.start_server(hang_up, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    async with server:
        error, _ = await attach(workspace, port)
    assert error.message == (
        f"dap.attach failed: cannot attach to 127.0.0.1:{port}: 127.0.0.1:{port} closed the connection without "
        "answering the DAP initialize request"
    )


async def test_a_lower_request_timeout_caps_the_answer_wait(workspace: Path) -> None:
    config = debugpy_config(request_timeout_sec=0.5)
    with silent_listener() as port:
        async with DapToolProvider({"debugpy": config}, workspace=workspace) as provider:
            with pytest.raises(ToolCallError) as caught:
                await provider.call_tool("dap.attach", {"port": port}, CallContext(call_id="t", workspace=workspace))
    assert caught.value.message.endswith(
        "accepted the connection but did not answer the DAP initialize request within 0.5s"
    )
