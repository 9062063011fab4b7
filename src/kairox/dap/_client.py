"""``DapClient``: one debug adapter, over its stdio (``python -m debugpy.adapter``) or over TCP (an adapter
listening for a client, as ``debugpy --listen 127.0.0.1:PORT`` does).

Launch and attach follow the order adapters such as debugpy need: ``initialize`` -> ``launch``/``attach``
(whose reply comes late) -> the ``initialized`` event -> ``setBreakpoints`` / ``setExceptionBreakpoints`` ->
``configurationDone`` -> the ``launch``/``attach`` reply.
"""

import asyncio
import contextlib
import math
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from types import TracebackType
from typing import Any, Self

import anyio

from kairox._rpc._errors import RpcConnectionClosedError, RpcError, RpcTimeoutError
from kairox._rpc._launch import closed_reason, server_process
from kairox._rpc._process import ChildProcess
from kairox._rpc._supervisor import until_first
from kairox._util._json import JsonObject
from kairox.config import DapServerConfig, SecretScrubber
from kairox.dap._connection import DapConnection
from kairox.dap._errors import DapAttachError, DapStartupError
from kairox.sandbox import state_environment

_DISCONNECT_TIMEOUT = 3.0
ATTACH_CONNECT_WAIT = 1.0
"""Seconds a refused ``dap.attach`` connection is tried again (a program started a moment ago may still be opening
its listener); then the attach fails. Capped by the adapter's ``request_timeout_sec``."""
ATTACH_ANSWER_WAIT = 5.0
"""Seconds what listens on the attach port has to accept the connection and answer ``initialize`` (debugpy answers
in milliseconds): what stays silent longer is no debug adapter. Capped by the adapter's ``request_timeout_sec``."""


class DapClient:
    """``async with DapClient("debugpy", config, workspace=root) as client:``; enter and exit in the same task."""

    def __init__(
        self,
        name: str,
        config: DapServerConfig,
        *,
        workspace: Path,
        connect: tuple[str, int] | None = None,
        host_env: Mapping[str, str] | None = None,
        stderr_log: Path | None = None,
        base_dir: Path | None = None,
        cwd: Path | None = None,
        sandbox: Sequence[str] = (),
        state_dir: Path | None = None,
    ) -> None:
        self.name = name
        self.config = config
        self.workspace = workspace.resolve()
        self.connect = connect
        self._sandbox = list(sandbox)
        """What the adapter's command runs under: bwrap and its arguments up to ``--``; empty for none."""
        self.child: ChildProcess | None = None
        if connect is None:
            self.child = server_process(
                config.command,
                config.args,
                config.env,
                cwd=cwd or self.workspace,
                base_dir=base_dir or self.workspace,
                host_env=host_env,
                stderr_log=stderr_log,
                scrub_stderr=SecretScrubber.for_server(
                    config, environ=dict(host_env) if host_env is not None else None
                ),
            )
            if state_dir is not None:
                # its caches in its own folder; HOME stays the user's: the debuggee inherits the adapter's
                # environment, and sees what a shell.exec command would
                self.child.env = state_environment(self.child.env, state_dir, given=config.env.keys(), move_home=False)
        self._writer: asyncio.StreamWriter | None = None
        self.dap: DapConnection | None = None
        self.capabilities: JsonObject = {}
        self.disconnected = False
        self.failure: DapStartupError | None = None
        """Why entering failed, as raised (the supervisor keeps only its reason)."""

    @property
    def pid(self) -> int | None:
        return self.child.pid if self.child is not None and self.child.started else None

    @property
    def stderr_tail(self) -> str:
        return self.child.stderr.text(2000) if self.child is not None and self.child.started else ""

    @property
    def alive(self) -> bool:
        return self.dap is not None and not self.dap.closed

    # --- lifetime ------------------------------------------------------------------------------------------------

    async def __aenter__(self) -> Self:
        try:
            return await self._enter()
        except DapStartupError as exc:
            self.failure = exc
            raise

    async def _enter(self) -> Self:
        peer = f"debug adapter {self.name!r}"
        if self.child is not None:
            try:
                if self._sandbox:
                    self.child.check_runnable()  # the adapter's own command, before bwrap stands in front of it
                    self.child.argv = [*self._sandbox, *self.child.argv]
                await self.child.start()
            except OSError as exc:
                raise DapStartupError(self.name, f"cannot run {self.child.argv[0]!r}: {exc.strerror or exc}") from exc
            reader, writer = self.child.stdout, self.child.stdin
        else:
            assert self.connect is not None
            host, port = self.connect
            reader, writer = await self._connect(host, port)
            self._writer = writer
        self.dap = DapConnection(
            reader,
            writer,
            peer=peer,
            timeout=self.config.request_timeout_sec,
            closed_reason=self._closed_reason,
        )
        await self.dap.__aenter__()
        # an adapter started here may take long under load; what listens on an attach port answers at once or never
        answer_wait = None if self.connect is None else self._attach_wait(ATTACH_ANSWER_WAIT)
        try:
            body = await self.dap.request(
                "initialize",
                {
                    "clientID": "kairox",
                    "clientName": "Kairox",
                    "adapterID": self.name,
                    "pathFormat": "path",
                    "linesStartAt1": True,
                    "columnsStartAt1": True,
                    "supportsVariableType": True,
                    "supportsRunInTerminalRequest": False,
                    "locale": "en",
                },
                timeout=answer_wait,
            )
        except BaseException as exc:
            self.disconnected = True  # no session to end: a silent peer would only hold the close up
            await self._close()
            if self.connect is not None and isinstance(exc, RpcTimeoutError):
                raise self._no_adapter(
                    f"accepted the connection but did not answer the DAP initialize request within {answer_wait:g}s"
                ) from exc
            if self.connect is not None and isinstance(exc, RpcConnectionClosedError):
                raise self._no_adapter("closed the connection without answering the DAP initialize request") from exc
            if isinstance(exc, RpcError):
                raise DapStartupError(self.name, exc.message, stderr_tail=self.stderr_tail) from exc
            raise
        self.capabilities = body if isinstance(body, dict) else {}
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self._close()

    async def _close(self) -> None:
        with anyio.CancelScope(shield=True):
            if not self.disconnected and self.alive:
                await self.disconnect(terminate=self.connect is None)
            if self.child is not None:
                await self.child.stop()
            elif self._writer is not None:
                self._writer.close()
                with contextlib.suppress(Exception):
                    await asyncio.wait_for(self._writer.wait_closed(), 2.0)
        if self.dap is not None:  # outside the shield: the reader's task group was entered before it
            await self.dap.__aexit__(None, None, None)

    def _attach_wait(self, wait: float) -> float:
        return min(wait, self.config.request_timeout_sec)

    def _no_adapter(self, what: str) -> DapAttachError:
        assert self.connect is not None
        host, port = self.connect
        return DapAttachError(
            self.name,
            f"{host}:{port}",
            f"{host}:{port} {what}",
            hint=f"check that the program runs and waits for a debugger on port {port}, e.g. started with "
            f"`python -m debugpy --listen {host}:{port} --wait-for-client app.py`, and that nothing else uses the port",
        )

    async def _connect(self, host: str, port: int) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
        # a program started a moment ago may still be opening its listener: a refusal is tried again, briefly
        refused_until = time.monotonic() + self._attach_wait(ATTACH_CONNECT_WAIT)
        connect_wait = self._attach_wait(ATTACH_ANSWER_WAIT)
        while True:
            try:
                return await asyncio.wait_for(asyncio.open_connection(host, port), connect_wait)
            except ConnectionRefusedError as exc:
                if time.monotonic() >= refused_until:
                    raise self._no_adapter(
                        "refused the connection: nothing listens there (tried "
                        f"for {self._attach_wait(ATTACH_CONNECT_WAIT):g}s)"
                    ) from exc
                await anyio.sleep(0.05)
            except TimeoutError as exc:
                raise self._no_adapter(f"did not accept the connection within {connect_wait:g}s") from exc
            except OSError as exc:
                raise self._no_adapter(f"cannot be reached: {exc.strerror or exc}") from exc

    async def _closed_reason(self) -> str:
        if self.child is None:
            return "the adapter closed the TCP connection"
        return await closed_reason(self.child, "the adapter")

    # --- session -------------------------------------------------------------------------------------------------

    async def request(self, command: str, arguments: JsonObject | None = None, *, timeout: float | None = None) -> Any:
        if self.dap is None:
            raise RuntimeError("the client has not been started")
        return await self.dap.request(command, arguments, timeout=timeout)

    async def start_session(
        self,
        command: str,
        arguments: JsonObject,
        *,
        breakpoints: Mapping[Path, list[JsonObject]],
        exception_filters: list[str],
    ) -> dict[Path, list[JsonObject]]:
        """``launch`` or ``attach`` in the order adapters need; returns the breakpoints as the adapter set them."""
        assert self.dap is not None
        dap = self.dap
        reply = await dap.send(command, arguments)
        # the adapter asks for the configuration with the initialized event; an answer before it is a failure
        # (debugpy answers launch and attach only after configurationDone): wait for whichever comes first
        limit = self.config.request_timeout_sec
        with anyio.move_on_after(limit):
            # wait_event returns too when the connection closes
            await until_first(
                lambda: dap.wait_event({"initialized"}, since=0, timeout=math.inf), lambda: asyncio.wait({reply})
            )
        if not any(e.get("event") == "initialized" for e in dap.events):
            if not reply.done() and not dap.closed:
                raise RpcTimeoutError(dap.peer, command, limit)
            await dap.response(command, reply)  # the failure, or the connection's end
        placed: dict[Path, list[JsonObject]] = {}
        for path, wanted in breakpoints.items():
            placed[path] = await self.set_breakpoints(path, wanted)
        with contextlib.suppress(RpcError):
            await dap.request("setExceptionBreakpoints", {"filters": exception_filters})
        if self.capabilities.get("supportsConfigurationDoneRequest"):
            await dap.request("configurationDone")
        await dap.response(command, reply)
        return placed

    async def set_breakpoints(self, path: Path, breakpoints: list[JsonObject]) -> list[JsonObject]:
        """Replace the breakpoints of ``path``; each is ``{"line": N}`` with an optional ``condition``."""
        body = await self.request(
            "setBreakpoints",
            {
                "source": {"path": str(path), "name": path.name},
                "breakpoints": breakpoints,
                "lines": [bp["line"] for bp in breakpoints],
            },
        )
        found = body.get("breakpoints") if isinstance(body, dict) else None
        return [b for b in found if isinstance(b, dict)] if isinstance(found, list) else []

    async def disconnect(self, *, terminate: bool) -> None:
        """End the session; with ``terminate`` the debuggee ends too."""
        self.disconnected = True
        with contextlib.suppress(RpcError):
            await self.request(
                "disconnect", {"terminateDebuggee": terminate, "restart": False}, timeout=_DISCONNECT_TIMEOUT
            )
