"""``DapServerLifecycle``: the adapter behind one debug session, owned by a supervisor task.

The supervisor enters the :class:`DapClient` (process or TCP connection) in its own task and exits it there;
each status change (``ServerStatus``) is an event. A session's adapter is not restarted: a new launch is a new
session.
"""

from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path

import anyio
import anyio.abc

from kairox._rpc import ServerStatus
from kairox.config import DapServerConfig
from kairox.dap._client import DapClient
from kairox.dap._errors import DapStartupError
from kairox.dap._events import DapServerFailed, DapServerRunning, DapServerStarting, DapServerStopped
from kairox.events import EventSink, NullSink


async def _until_first(*waits: Callable[[], Awaitable[object]]) -> None:
    async with anyio.create_task_group() as group:

        async def wait(fn: Callable[[], Awaitable[object]]) -> None:
            await fn()
            group.cancel_scope.cancel()

        for fn in waits:
            group.start_soon(wait, fn)


class DapServerLifecycle:
    """Starts the adapter of session ``session`` in ``task_group`` and stops it on :meth:`stop`."""

    def __init__(
        self,
        server: str,
        config: DapServerConfig,
        *,
        session: str,
        workspace: Path,
        task_group: anyio.abc.TaskGroup,
        events: EventSink | None = None,
        connect: tuple[str, int] | None = None,
        host_env: Mapping[str, str] | None = None,
        stderr_log: Path | None = None,
        base_dir: Path | None = None,
    ) -> None:
        self.server = server
        self.base_dir = base_dir
        self.config = config
        self.session = session
        self.workspace = workspace
        self.events: EventSink = events or NullSink()
        self.connect = connect
        self._host_env = host_env
        self._stderr_log = stderr_log
        self._tg = task_group
        self.status = ServerStatus.STOPPED
        self.reason: str | None = None
        self.stderr_tail = ""
        self.client: DapClient | None = None
        self._stop_requested = anyio.Event()
        self._done: anyio.Event | None = None

    async def start(self) -> DapClient:
        """Start the adapter and initialize it; raises :class:`DapStartupError` when that fails."""
        if self._done is not None:
            raise RuntimeError(f"debug session {self.session!r} was started already")
        ready, self._done = anyio.Event(), anyio.Event()
        self._tg.start_soon(self._supervise, ready, self._done)
        await ready.wait()
        if self.status is ServerStatus.RUNNING and self.client is not None:
            return self.client
        raise DapStartupError(self.server, self.reason or "unknown reason", stderr_tail=self.stderr_tail)

    async def stop(self) -> None:
        """Disconnect (ending a launched program) and stop the adapter."""
        if self._done is None:
            return
        self._stop_requested.set()
        with anyio.move_on_after(15):
            await self._done.wait()

    async def _supervise(self, ready: anyio.Event, done: anyio.Event) -> None:
        self.status = ServerStatus.STARTING
        self.events.emit(DapServerStarting(server=self.server, session=self.session))
        client = DapClient(
            self.server,
            self.config,
            workspace=self.workspace,
            connect=self.connect,
            host_env=self._host_env,
            stderr_log=self._stderr_log,
            base_dir=self.base_dir,
        )
        failure: str | None = None
        try:
            async with client:
                self.client = client
                self.status = ServerStatus.RUNNING
                self.events.emit(DapServerRunning(server=self.server, session=self.session, pid=client.pid))
                ready.set()
                assert client.dap is not None
                await _until_first(client.dap.wait_closed, self._stop_requested.wait)
                ended = any(e.get("event") == "terminated" for e in client.dap.events)
                if client.dap.closed and not (client.disconnected or ended or self._stop_requested.is_set()):
                    failure = client.dap.close_reason
        except DapStartupError as exc:
            failure = exc.reason
        except Exception as exc:
            failure = f"{type(exc).__name__}: {exc}"
        finally:
            self.stderr_tail = client.stderr_tail
            if failure is not None:
                self.status, self.reason = ServerStatus.FAILED, failure
                self.events.emit(
                    DapServerFailed(
                        server=self.server,
                        session=self.session,
                        reason=failure,
                        stderr_tail=self.stderr_tail[-600:],
                    )
                )
            else:
                self.status = ServerStatus.STOPPED
                self.events.emit(DapServerStopped(server=self.server, session=self.session))
            ready.set()
            done.set()
