"""``LspServerLifecycle``: one language server, started lazily, kept warm, restarted after a crash.

A supervisor task per server owns the process and its connection (entered and exited in that task); callers
ask :meth:`LspServerLifecycle.ensure_running` for the client, and concurrent first uses wait for one start.
Each status change is an event.
"""

import time
from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path
from types import TracebackType
from typing import Self

import anyio
import anyio.abc

from kairox._rpc import ServerStatus
from kairox._util import JsonObject
from kairox.config import LspServerConfig
from kairox.events import Event, EventSink, NullSink
from kairox.lsp._client import LspClient
from kairox.lsp._errors import LspStartupError
from kairox.lsp._events import LspServerFailed, LspServerRunning, LspServerStarting, LspServerStopped


async def _until_first(*waits: Callable[[], Awaitable[object]]) -> None:
    async with anyio.create_task_group() as group:

        async def wait(fn: Callable[[], Awaitable[object]]) -> None:
            await fn()
            group.cancel_scope.cancel()

        for fn in waits:
            group.start_soon(wait, fn)


class LspServerLifecycle:
    """``async with LspServerLifecycle(name, config, workspace=root, events=sink) as server:``; no process runs
    until the first :meth:`ensure_running`. Leaving the block stops the server."""

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
    ) -> None:
        self.name = name
        self.base_dir = base_dir
        self.config = config
        self.workspace = workspace
        self.events: EventSink = events or NullSink()
        self._host_env = host_env
        self._stderr_log = stderr_log
        self.status = ServerStatus.STOPPED
        self.reason: str | None = None
        self.stderr_tail = ""
        self.client: LspClient | None = None
        self.starts = 0
        self.started_at: float | None = None
        self._lock = anyio.Lock()
        self._tg: anyio.abc.TaskGroup | None = None
        self._stop_requested = anyio.Event()
        self._supervisor_done: anyio.Event | None = None

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

    def _emit(self, event: Event) -> None:
        self.events.emit(event)

    # --- use -----------------------------------------------------------------------------------------------------

    async def ensure_running(self) -> LspClient:
        """The running client; starts (or restarts) the server first when needed."""
        client = self.client
        if self.status is ServerStatus.RUNNING and client is not None and client.alive:
            return client
        async with self._lock:
            client = self.client
            if self.status is ServerStatus.RUNNING and client is not None and client.alive:
                return client
            if self._supervisor_done is not None:  # the previous run is still winding down after a crash
                with anyio.move_on_after(self.config.shutdown_timeout_sec + 5):
                    await self._supervisor_done.wait()
            if self._tg is None:
                raise RuntimeError("enter the LspServerLifecycle (async with) before using it")
            ready = anyio.Event()
            self._stop_requested = anyio.Event()
            self._supervisor_done = anyio.Event()
            self._tg.start_soon(self._supervise, ready, self._supervisor_done)
            await ready.wait()
            if self.status is ServerStatus.RUNNING and self.client is not None:
                return self.client
            raise LspStartupError(self.name, self.reason or "unknown reason", stderr_tail=self.stderr_tail)

    async def stop(self) -> None:
        """Stop the server (shutdown, exit, then the kill after ``shutdown_timeout_sec``)."""
        done = self._supervisor_done
        if done is None:
            return
        self._stop_requested.set()
        with anyio.move_on_after(self.config.shutdown_timeout_sec + 10):
            await done.wait()

    async def restart(self) -> LspClient:
        await self.stop()
        return await self.ensure_running()

    # --- the supervisor ------------------------------------------------------------------------------------------

    async def _supervise(self, ready: anyio.Event, done: anyio.Event) -> None:
        restart = self.starts > 0
        self.starts += 1
        self.status, self.reason = ServerStatus.STARTING, None
        self._emit(LspServerStarting(server=self.name, restart=restart))
        client = LspClient(
            self.name,
            self.config,
            workspace=self.workspace,
            host_env=self._host_env,
            stderr_log=self._stderr_log,
        )
        failure: str | None = None
        try:
            async with client:
                self.client = client
                self.status, self.started_at = ServerStatus.RUNNING, time.time()
                self._emit(
                    LspServerRunning(
                        server=self.name, pid=client.child.pid, position_encoding=client.position_encoding
                    )
                )
                ready.set()
                assert client.rpc is not None
                await _until_first(client.rpc.wait_closed, self._stop_requested.wait)
                if client.rpc.closed:
                    failure = client.rpc.close_reason
        except LspStartupError as exc:
            failure = exc.reason
        except Exception as exc:
            failure = f"{type(exc).__name__}: {exc}"
        finally:
            self.client = None
            self.stderr_tail = client.child.stderr.text(2000) if client.child.started else ""
            if failure is not None:
                self.status, self.reason = ServerStatus.FAILED, failure
                self._emit(
                    LspServerFailed(server=self.name, reason=failure, stderr_tail=self.stderr_tail[-600:])
                )
            else:
                self.status = ServerStatus.STOPPED
                self._emit(LspServerStopped(server=self.name))
            ready.set()
            if self._supervisor_done is done:
                self._supervisor_done = None
            done.set()

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
        }
