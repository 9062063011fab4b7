"""``LspServerLifecycle``: one language server, started lazily, kept warm, restarted after a crash.

A supervisor task per server owns the process and its connection (:class:`kairox._rpc._supervisor.ServerLifecycle`);
callers ask :meth:`LspServerLifecycle.ensure_running` for the client, and concurrent first uses wait for one
start. Each status change is an event.
"""

import os
from collections.abc import Mapping
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Self

import anyio
import anyio.abc

from kairox._rpc._connection import FramedConnection
from kairox._rpc._status import ServerStatus
from kairox._rpc._supervisor import ServerLifecycle
from kairox._util._json import JsonObject
from kairox.config import LspServerConfig
from kairox.events import Event, EventSink
from kairox.lsp._client import LspClient
from kairox.lsp._errors import LspStartupError
from kairox.lsp._events import LspServerFailed, LspServerRunning, LspServerStarting, LspServerStopped

if TYPE_CHECKING:
    from kairox.sandbox import ServerConfinement


class LspServerLifecycle(ServerLifecycle[LspClient]):
    """``async with LspServerLifecycle(name, config, workspace=root, events=sink) as server:``; no process runs
    until the first :meth:`ensure_running`. Leaving the block stops the server."""

    startup_error = LspStartupError

    def __init__(
        self,
        name: str,
        config: LspServerConfig,
        *,
        workspace: Path,
        events: EventSink | None = None,
        host_env: Mapping[str, str] | None = None,
        stderr_log: Path | None = None,
        base_dir: Path | None = None,
        confinement: "ServerConfinement | None" = None,
    ) -> None:
        super().__init__(events=events, stop_wait=config.shutdown_timeout_sec + 10)
        self.name = name
        self.confinement = confinement
        """The sandbox profile the server starts under (None: unconfined)."""
        self.confinement_state: JsonObject = (
            confinement.describe()
            if confinement is not None
            else {"confined": False, "sandbox": "none", "reason": "not managed"}
        )
        self.confinement_warning: str | None = None
        self.base_dir = base_dir
        self.config = config
        self.workspace = workspace
        self._host_env = host_env
        self._stderr_log = stderr_log
        self.starts = 0
        self._lock = anyio.Lock()
        self._tg: anyio.abc.TaskGroup | None = None

    async def __aenter__(self) -> Self:
        self._tg = anyio.create_task_group()
        await self._tg.__aenter__()
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        assert self._tg is not None
        with anyio.CancelScope(shield=True):  # a cancelled owner still stops its server
            await self.stop()
        self._tg.cancel_scope.cancel()
        await self._tg.__aexit__(None, None, None)  # the body's exception is not the supervisors' business

    # --- use -----------------------------------------------------------------------------------------------------

    async def ensure_running(self) -> LspClient:
        """The running client; starts (or restarts) the server first when needed."""
        client = self.client
        if self.status is ServerStatus.READY and client is not None and client.alive:
            return client
        async with self._lock:
            client = self.client
            if self.status is ServerStatus.READY and client is not None and client.alive:
                return client
            if self.winding_down and self._done is not None:  # the previous run still ends after a crash
                with anyio.move_on_after(self.config.shutdown_timeout_sec + 5):
                    await self._done.wait()
            if self._tg is None:
                raise RuntimeError("enter the LspServerLifecycle (async with) before using it")
            if await self._start_in(self._tg) and self.client is not None:
                return self.client
            raise LspStartupError(self.name, self.reason or "unknown reason", stderr_tail=self.stderr_tail)

    async def restart(self) -> LspClient:
        await self.stop()
        return await self.ensure_running()

    # --- the supervisor's parts ----------------------------------------------------------------------------------

    def _new_client(self) -> LspClient:
        return LspClient(
            self.name,
            self.config,
            workspace=self.workspace,
            host_env=self._host_env,
            stderr_log=self._stderr_log,
            base_dir=self.base_dir,
            confinement=self.confinement,
            on_confined=self._confined,
        )

    def _raced(self, client: LspClient) -> bool:
        argv = client.child.argv
        if not argv or os.path.basename(argv[0]) != "bwrap":
            return False
        from kairox.sandbox import vanished_before_start  # loaded only for a confined server

        return vanished_before_start(argv, client.child.returncode, b"", client.stderr_tail.strip().encode())

    def _confined(self, state: JsonObject, warning: str | None) -> None:
        self.confinement_state, self.confinement_warning = state, warning

    def _connection(self, client: LspClient) -> FramedConnection | None:
        return client.rpc

    def _starting(self) -> Event:
        restart = self.starts > 0
        self.starts += 1
        return LspServerStarting(server=self.name, restart=restart)

    def _running(self, client: LspClient) -> Event:
        return LspServerRunning(server=self.name, pid=client.child.pid, position_encoding=client.position_encoding)

    def _failed(self, reason: str) -> Event:
        return LspServerFailed(server=self.name, reason=reason, stderr_tail=self.stderr_tail[-600:])

    def _stopped(self) -> Event:
        return LspServerStopped(server=self.name)

    # --- reporting -----------------------------------------------------------------------------------------------

    def snapshot(self) -> JsonObject:
        """The server's state for ``kairox lsp status --json``."""
        client = self.client
        return {
            "server": self.name,
            "status": self.status.value,
            "command": [self.config.command, *self.config.args],
            "file_patterns": list(self.config.file_patterns),
            "languages": list(self.config.languages),
            "pid": client.child.pid if client is not None else None,
            "position_encoding": client.position_encoding if client is not None else None,
            "server_info": client.server_info if client is not None else None,
            "progress": client.progress if client is not None else [],
            "starts": self.starts,
            "reason": self.reason,
            "stderr_tail": self.stderr_tail[-600:] if self.status is ServerStatus.FAILED else "",
            "confinement": self.confinement_state,
        }
