"""The SDK's stream transport contract over a :class:`kairox._rpc.ChildProcess`, for a 2026-era stdio server
handed from Kairox's own session to the SDK's ``Client`` (the process keeps running).

The SDK's own ``stdio_client`` cannot put the server in a process group of ours with ``PR_SET_PDEATHSIG`` nor
drain stderr into a log file, so the child is started by ``kairox._rpc`` and this module only pumps
newline-delimited JSON-RPC between its pipes and the memory streams a ``ClientSession`` reads and writes.
A line that is not JSON-RPC (a stray ``print``) is reported and skipped; it never ends the session.
"""

import contextlib
from collections.abc import Callable
from types import TracebackType
from typing import TYPE_CHECKING

import anyio
import anyio.abc
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream

from kairox._rpc import ChildProcess

if TYPE_CHECKING:
    from mcp.shared.message import SessionMessage

InvalidLineHandler = Callable[[str], None]


class ChildStdioTransport:
    """``async with ChildStdioTransport(child) as (read, write):`` for an already started child.

    Leaving the block stops the pumps, not the child: whoever started the child stops it. It meets the SDK's
    ``Transport`` protocol by shape, so that importing it does not import the SDK (the SDK loads while the
    server boots).
    ``closed`` is set when the child's stdout reaches end of file (the server exited or closed it).
    """

    def __init__(self, child: ChildProcess, *, on_invalid_line: InvalidLineHandler | None = None) -> None:
        self.child = child
        self.closed = anyio.Event()
        self.eof = False
        """True when the child closed its stdout (it exited, or is about to) rather than the host stopping it."""
        self.invalid_lines: list[str] = []
        self._on_invalid_line = on_invalid_line
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

    def _invalid(self, line: str) -> None:
        self.invalid_lines.append(line[:200])
        del self.invalid_lines[:-20]
        if self._on_invalid_line is not None:
            self._on_invalid_line(line)

    async def _read_stdout(self, sink: MemoryObjectSendStream["SessionMessage | Exception"]) -> None:
        import mcp_types
        from mcp.shared.message import SessionMessage
        from pydantic import ValidationError

        stdout = self.child.stdout
        try:
            async with sink:
                while True:
                    try:
                        raw = await stdout.readline()
                    except ValueError:  # one line longer than the reader's limit
                        self._invalid("<a line longer than 16 MiB>")
                        continue
                    if not raw:
                        self.eof = True
                        return
                    line = raw.decode("utf-8", errors="replace").strip()
                    if not line:
                        continue
                    try:
                        message = mcp_types.jsonrpc_message_adapter.validate_json(line, by_name=False)
                    except (ValidationError, ValueError):
                        self._invalid(line)
                        continue
                    try:
                        await sink.send(SessionMessage(message))
                    except (anyio.ClosedResourceError, anyio.BrokenResourceError):
                        return
        except (ConnectionError, OSError):
            return
        finally:
            self.closed.set()

    async def _write_stdin(self, source: MemoryObjectReceiveStream["SessionMessage"]) -> None:
        stdin = self.child.stdin
        try:
            async with source:
                async for message in source:
                    data = message.message.model_dump_json(by_alias=True, exclude_unset=True)
                    stdin.write(data.encode() + b"\n")
                    await stdin.drain()
        except (ConnectionError, OSError, anyio.ClosedResourceError, anyio.BrokenResourceError):
            with contextlib.suppress(Exception):
                stdin.close()
