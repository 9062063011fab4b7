"""``DapClient``: one debug adapter, over its stdio (``python -m debugpy.adapter``) or over TCP (an adapter
listening for a client, as ``debugpy --listen 127.0.0.1:PORT`` does).

Launch and attach follow the order adapters such as debugpy need: ``initialize`` -> ``launch``/``attach``
(whose reply comes late) -> the ``initialized`` event -> ``setBreakpoints`` / ``setExceptionBreakpoints`` ->
``configurationDone`` -> the ``launch``/``attach`` reply.
"""

import asyncio
import contextlib
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from types import TracebackType
from typing import Any, Self

import anyio

from kairox._rpc import ChildProcess, RpcError, closed_reason, server_process
from kairox._util import JsonObject
from kairox.config import DapServerConfig
from kairox.dap._connection import DapConnection
from kairox.dap._errors import DapStartupError

_DISCONNECT_TIMEOUT = 3.0
_EXIT_WAIT = 0.5
"""Seconds to wait for the adapter's exit code once its output ended, for the reason of the failure."""


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
            )
        self._writer: asyncio.StreamWriter | None = None
        self.dap: DapConnection | None = None
        self.capabilities: JsonObject = {}
        self.disconnected = False

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
        peer = f"debug adapter {self.name!r}"
        if self.child is not None:
            try:
                if self._sandbox:
                    self.child.check_runnable()  # the adapter's own command, before bwrap stands in front of it
                    self.child.argv = [*self._sandbox, *self.child.argv]
                await self.child.start()
            except OSError as exc:
                raise DapStartupError(
                    self.name, f"cannot run {self.child.argv[0]!r}: {exc.strerror or exc}"
                ) from exc
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
            )
        except BaseException as exc:
            await self._close()
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

    async def _connect(self, host: str, port: int) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
        # the program may still be starting its listener: retry a refused connection until the timeout
        deadline = time.monotonic() + self.config.request_timeout_sec
        while True:
            try:
                return await asyncio.wait_for(
                    asyncio.open_connection(host, port), max(deadline - time.monotonic(), 0.1)
                )
            except ConnectionRefusedError as exc:
                if time.monotonic() >= deadline:
                    raise DapStartupError(self.name, f"nothing listens on {host}:{port}: {exc}") from exc
                await anyio.sleep(0.05)
            except (OSError, TimeoutError) as exc:
                raise DapStartupError(self.name, f"cannot connect to {host}:{port}: {exc}") from exc

    async def _closed_reason(self) -> str:
        if self.child is None:
            return "the adapter closed the TCP connection"
        await self.child.wait(_EXIT_WAIT)  # the output usually ends as the process does: give its exit code
        return closed_reason(self.child, "the adapter")

    # --- session -------------------------------------------------------------------------------------------------

    async def request(
        self, command: str, arguments: JsonObject | None = None, *, timeout: float | None = None
    ) -> Any:
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
        deadline = time.monotonic() + self.config.request_timeout_sec
        while not any(e.get("event") == "initialized" for e in dap.events):
            if reply.done():  # an early answer is a failure (debugpy answers launch after configurationDone)
                await dap.response(command, reply)
                break
            if dap.closed or time.monotonic() > deadline:
                await dap.response(command, reply, timeout=max(deadline - time.monotonic(), 0.01))
                break
            await dap.wait_event({"initialized"}, since=0, timeout=0.05)
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
