"""``DapServerLifecycle``: the adapter behind one debug session, owned by a supervisor task
(:class:`kairox._rpc._supervisor.ServerLifecycle`, as language servers are).

Unlike a language server, a session's adapter is not restarted: a new launch is a new session. The client is
kept after the adapter ended, so the session's last events (output, exit code) stay readable.
"""

from collections.abc import Callable

import anyio.abc

from kairox._rpc._connection import FramedConnection
from kairox._rpc._supervisor import ServerLifecycle
from kairox._util._json import JsonObject
from kairox.dap._client import DapClient
from kairox.dap._errors import DapStartupError
from kairox.dap._events import DapServerFailed, DapServerRunning, DapServerStarting, DapServerStopped
from kairox.events import Event, EventSink

_STOP_WAIT = 15.0


class DapServerLifecycle(ServerLifecycle[DapClient]):
    """Starts the adapter of session ``session`` in ``task_group`` and stops it on :meth:`stop`; ``new_client`` makes
    its (not yet entered) :class:`DapClient` when the supervisor starts it."""

    startup_error = DapStartupError
    keep_client = True

    def __init__(
        self,
        server: str,
        new_client: Callable[[], DapClient],
        *,
        session: str,
        task_group: anyio.abc.TaskGroup,
        confinement_state: JsonObject,
        events: EventSink | None = None,
    ) -> None:
        super().__init__(events=events, stop_wait=_STOP_WAIT)
        self.confinement_state = confinement_state
        self.server = server
        self.session = session
        self._make_client = new_client
        self._tg = task_group
        self._entering: DapClient | None = None
        """The client being started: its failure is raised as it was (an attach's says what to check)."""

    async def start(self) -> DapClient:
        """Start the adapter and initialize it; raises :class:`DapStartupError` when that fails."""
        if self._done is not None:
            raise RuntimeError(f"debug session {self.session!r} was started already")
        if await self._start_in(self._tg) and self.client is not None:
            return self.client
        if self._entering is not None and self._entering.failure is not None:
            raise self._entering.failure
        raise DapStartupError(self.server, self.reason or "unknown reason", stderr_tail=self.stderr_tail)

    # --- the supervisor's parts ----------------------------------------------------------------------------------

    def _new_client(self) -> DapClient:
        self._entering = self._make_client()
        return self._entering

    def _connection(self, client: DapClient) -> FramedConnection | None:
        return client.dap

    def _crash_reason(self, client: DapClient, connection: FramedConnection) -> str | None:
        # the adapter ends the connection itself after the program ended or a disconnect: not a crash
        ended = client.dap is not None and any(e.get("event") == "terminated" for e in client.dap.events)
        if connection.closed and not (client.disconnected or ended or self._stop_requested.is_set()):
            return connection.close_reason
        return None

    def _starting(self) -> Event:
        return DapServerStarting(server=self.server, session=self.session)

    def _running(self, client: DapClient) -> Event:
        return DapServerRunning(server=self.server, session=self.session, pid=client.pid)

    def _failed(self, reason: str) -> Event:
        return DapServerFailed(
            server=self.server, session=self.session, reason=reason, stderr_tail=self.stderr_tail[-600:]
        )

    def _stopped(self) -> Event:
        return DapServerStopped(server=self.server, session=self.session)
