"""The SDK's stream transport contract over a :class:`~kairox.mcp._native.StdioChannel`, for a 2026-era stdio
server handed from Kairox's own session to the SDK's ``Client`` (the process keeps running).

The SDK's own ``stdio_client`` cannot put the server in a process group of ours with ``PR_SET_PDEATHSIG`` nor
drain stderr into a log file, so the child is started by ``kairox._rpc``; its lines are read by the same channel
Kairox's session used (a line that is not JSON-RPC is reported there and skipped, never ending the session), and
this module only moves whole messages between the channel and the memory streams the SDK reads and writes.
"""

import contextlib
import json
from types import TracebackType
from typing import TYPE_CHECKING

import anyio
import anyio.abc
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream

from kairox.mcp._native import StdioChannel
from kairox.mcp._session import SessionError

if TYPE_CHECKING:
    from mcp.shared.message import SessionMessage


class ChildStdioTransport:
    """``async with ChildStdioTransport(channel) as (read, write):`` for an already started child.

    Leaving the block stops the pumps, not the child: whoever started the child stops it. It meets the SDK's
    ``Transport`` protocol by shape. ``closed`` is set when the child's stdout ends (the server exited or closed
    it); the channel says which (``eof``) and keeps the lines that were not JSON-RPC.
    """

    def __init__(self, channel: StdioChannel) -> None:
        self.channel = channel
        self.closed = anyio.Event()
        self._task_group: anyio.abc.TaskGroup | None = None
        self._streams: list[MemoryObjectSendStream[object] | MemoryObjectReceiveStream[object]] = []

    async def __aenter__(
        self,
    ) -> tuple[MemoryObjectReceiveStream["SessionMessage | Exception"], MemoryObjectSendStream["SessionMessage"]]:
        from mcp.shared.message import SessionMessage

        read_writer, read_stream = anyio.create_memory_object_stream[SessionMessage | Exception](16)
        write_stream, write_reader = anyio.create_memory_object_stream[SessionMessage](16)
        self._streams = [read_writer, read_stream, write_stream, write_reader]  # type: ignore[list-item]
        self._task_group = anyio.create_task_group()
        await self._task_group.__aenter__()
        self._task_group.start_soon(self._read_stdout, read_writer)
        self._task_group.start_soon(self._write_stdin, write_reader)
        return read_stream, write_stream

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> bool | None:
        assert self._task_group is not None
        # exit in the entering task: anyio cancel scopes belong to one task
        self._task_group.cancel_scope.cancel()
        try:
            await self._task_group.__aexit__(None, None, None)
        finally:
            for stream in self._streams:
                stream.close()
        return None

    async def _read_stdout(self, sink: MemoryObjectSendStream["SessionMessage | Exception"]) -> None:
        import mcp_types
        from mcp.shared.message import SessionMessage
        from pydantic import ValidationError

        try:
            async with sink:
                while (message := await self.channel.receive()) is not None:
                    try:
                        wire = mcp_types.jsonrpc_message_adapter.validate_python(message, by_name=False)
                    except ValidationError:  # JSON-RPC in shape, but not an MCP message
                        self.channel.invalid(json.dumps(message))
                        continue
                    try:
                        await sink.send(SessionMessage(wire))
                    except (anyio.ClosedResourceError, anyio.BrokenResourceError):
                        return
        finally:
            self.closed.set()

    async def _write_stdin(self, source: MemoryObjectReceiveStream["SessionMessage"]) -> None:
        try:
            async with source:
                async for message in source:
                    await self.channel.send(message.message.model_dump(by_alias=True, mode="json", exclude_unset=True))
        except (SessionError, anyio.ClosedResourceError, anyio.BrokenResourceError):
            with contextlib.suppress(Exception):
                self.channel.child.stdin.close()
