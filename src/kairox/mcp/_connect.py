"""One configured server's transport, for a front end that speaks MCP to it itself (``kairox proxy``): a stdio server
started as the manager starts one (confined under its profile, in its own process group, stderr to its log) and
read through the SDK's stream contract, or a remote server's HTTP transport with its headers, bearer token and
OAuth tokens. (The SDK's own ``stdio_client`` can neither confine the server nor drain its stderr to a log.)"""

import contextlib
import json
import os
from contextlib import AsyncExitStack
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING

import anyio
import anyio.abc
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream

from kairox.errors import McpStartupError
from kairox.mcp._connection import StartError, open_remote, open_stdio
from kairox.mcp._files import server_file_stem
from kairox.mcp._native import StdioChannel
from kairox.mcp._session import SessionError
from kairox.mcp._sources import ConfiguredServer, server_confiner

if TYPE_CHECKING:
    from mcp.client import Transport
    from mcp.shared.message import SessionMessage

    from kairox.sandbox import SandboxSettings


async def open_server_transport(
    stack: AsyncExitStack, server: ConfiguredServer, *, workspace: Path, home: Path, sandbox: "SandboxSettings"
) -> "Transport":
    """The SDK transport of ``server``; ``stack`` stops the process (stdio) or closes the HTTP client."""
    config = server.config
    try:
        if config.transport == "stdio":
            confine = server_confiner({server.name: server}, sandbox=sandbox, workspace=workspace, home=home)
            child, _ = await open_stdio(
                stack,
                config,
                environ=os.environ,
                workspace=workspace,
                base_dir=server.base_dir,
                log_path=home / "logs" / "mcp" / f"{server_file_stem(server.name)}.log",
                confinement=confine(server.name, config),
            )
            return ChildStdioTransport(StdioChannel(child))
        from kairox.mcp._oauth import oauth_provider, token_path

        auth = None
        if config.url is not None and (config.oauth or token_path(home, server.name).exists()):
            auth = oauth_provider(server.name, config.url, home=home)
        return await open_remote(stack, config, environ=os.environ, auth=auth)
    except StartError as exc:
        raise McpStartupError(server.name, str(exc)) from exc


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
