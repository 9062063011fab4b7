"""``McpServerManager``: every enabled server started concurrently, each on its own clock (M4)."""

import functools
import os
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Self

import anyio
import anyio.abc

from kairox._rpc._status import ServerStatus
from kairox.config import McpServerConfig
from kairox.errors import KairoxError, McpStartupError
from kairox.events import EventSink, NullSink
from kairox.mcp._adapter import McpToolAdapter
from kairox.mcp._client import McpClient, McpServerState
from kairox.mcp._events import McpStartupSummary
from kairox.mcp._features import ClientFeatures
from kairox.mcp._sources import server_confiner

if TYPE_CHECKING:
    from kairox.mcp._sources import ConfiguredServer
    from kairox.sandbox import SandboxSettings, ServerConfinement


def _cores() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return max(1, os.cpu_count() or 1)


class McpServerManager:
    """``async with McpServerManager(servers, workspace=...) as manager:`` starts the servers.

    Entering returns when every started server is Ready or Failed (each under its own
    ``startup_timeout_sec``, all at once, so start-up takes as long as the slowest, not the sum). A failed
    server never blocks the others; if a ``required`` one failed, entering raises :class:`McpStartupError`
    after all have settled and everything started is stopped again. Leaving stops every server, in the
    task that entered.

    An eager server whose tool list is cached is not waited for: it starts in the background, at most
    ``background_starts`` of them at a time (the cores: fifty spawns at once starve the session of the CPU),
    from entering, or with ``hold_background`` from :meth:`start_background` (an agent session calls it once
    its first model request is out). A call of one of its tools starts it at once and waits for it.
    """

    def __init__(
        self,
        servers: Mapping[str, McpServerConfig],
        *,
        workspace: Path,
        home: Path | None = None,
        events: EventSink | None = None,
        features: ClientFeatures | None = None,
        environ: Mapping[str, str] | None = None,
        is_pending: Callable[[str], bool] | None = None,
        held_reason: Callable[[str], str] | None = None,
        base_dirs: Mapping[str, Path] | None = None,
        raise_on_required: bool = True,
        wait_for_all: bool = False,
        confine: "Callable[[str, McpServerConfig], ServerConfinement | None] | None" = None,
        hold_background: bool = False,
        background_starts: int | None = None,
    ) -> None:
        self.events: EventSink = events or NullSink()
        self.raise_on_required = raise_on_required
        """Whether a failed ``required`` server makes entering raise (``kairox doctor`` reports it instead)."""
        self.wait_for_all = wait_for_all
        """Wait for every started server also when its tools are cached (commands that report servers' state)."""
        self.workspace = workspace
        self._is_pending = is_pending or (lambda name: False)
        # one copy of the environment for every client (fifty servers need not each decode os.environ)
        snapshot = dict(os.environ) if environ is None else environ
        self._held_reason = held_reason or (
            lambda name: "held back by trust: declared by an untrusted project; `kairox trust` starts it"
        )
        """Why trust holds a pending server back, in the words of the runtime's server view (``pending re-trust:
        ...`` in a trusted workspace whose entry changed since)."""
        self._home, self._features, self._environ = home, features, environ
        self._confine = confine or (lambda name, config: None)
        """The sandbox profile each stdio server starts under (none given: servers start unconfined)."""
        self.clients: dict[str, McpClient] = {
            name: self._new_client(name, config, environ=snapshot, base_dir=(base_dirs or {}).get(name))
            for name, config in servers.items()
        }
        self.adapters: dict[str, McpToolAdapter] = {}
        self._task_group: anyio.abc.TaskGroup | None = None
        self.hold_background = hold_background
        """The background starts wait for :meth:`start_background` (else they begin on entering)."""
        self.background_starts = background_starts or _cores()
        """How many background starts run at once."""
        self._background_go = anyio.Event()
        self._background_scope = anyio.CancelScope()

    def _new_client(
        self, name: str, config: McpServerConfig, *, environ: Mapping[str, str] | None, base_dir: Path | None
    ) -> McpClient:
        return McpClient(
            name,
            config,
            workspace=self.workspace,
            home=self._home,
            events=self.events,
            features=self._features,
            environ=environ,
            base_dir=base_dir,
            confinement=self._confine(name, config) if config.transport == "stdio" else None,
        )

    @classmethod
    def from_configured(
        cls,
        servers: "Mapping[str, ConfiguredServer]",
        *,
        workspace: Path,
        home: Path | None = None,
        events: EventSink | None = None,
        features: ClientFeatures | None = None,
        wait_for_all: bool = False,
        sandbox: "SandboxSettings | None" = None,
        held_reason: Callable[[str], str] | None = None,
    ) -> "McpServerManager":
        """The servers :func:`configured_servers` found, with their trust state and base folders; with the
        policy's ``sandbox``, each stdio server runs confined under its profile. ``held_reason(name)``: why trust
        holds a pending one back."""
        return cls(
            {name: server.config for name, server in servers.items()},
            workspace=workspace,
            home=home,
            events=events,
            features=features or ClientFeatures(roots=(workspace,)),
            is_pending=lambda name: servers[name].pending_trust,
            held_reason=held_reason,
            base_dirs={name: server.base_dir for name, server in servers.items()},
            wait_for_all=wait_for_all,
            confine=server_confiner(servers, sandbox=sandbox, workspace=workspace, home=home),
        )

    async def __aenter__(self) -> Self:
        started = time.monotonic()
        self._task_group = anyio.create_task_group()
        await self._task_group.__aenter__()
        disabled: list[str] = []
        pending: list[str] = []
        background: list[str] = []
        for name, client in self.clients.items():
            if not client.config.enabled:
                client.skipped(ServerStatus.DISABLED, "disabled in the configuration")
                disabled.append(name)
            elif self._is_pending(name):
                client.skipped(ServerStatus.HELD_BACK, self._held_reason(name))
                pending.append(name)
            else:
                self.adapters[name] = McpToolAdapter(client)
                if client.config.startup == "lazy" and client.from_cache and not client.config.required:
                    # its cached tools are listed now; the first call of one of them starts it
                    client.reason = 'starts on first use (startup = "lazy")'
                    client.lazy_start = functools.partial(self.start_one, name)
                    continue
                if client.from_cache and not client.config.required and not self.wait_for_all:
                    # listed from the cache: it comes up in the background (required ones are waited for); a
                    # call before its turn starts it at once
                    client.reason = "starts in the background"
                    client.lazy_start = functools.partial(self.start_one, name)
                    background.append(name)
                    continue
                client._prepare()
                self._task_group.start_soon(client.run)
        if background:
            self._task_group.start_soon(self._start_in_background, background)
        if not self.hold_background:
            self.start_background()
        try:
            for client in self.clients.values():
                if client.lazy_start is not None:
                    continue  # lazy, or listed from the cache and started in the background
                await client.settled.wait()
        except BaseException:
            await self._close()
            raise
        if not self.clients:
            return self  # a manager kept for servers added later: there was no start-up to sum up
        ready = tuple(n for n, c in self.clients.items() if c.status == ServerStatus.READY)
        failed = tuple(n for n, c in self.clients.items() if c.status == ServerStatus.FAILED)
        self.events.emit(
            McpStartupSummary(
                ready=ready,
                failed=failed,
                disabled=tuple(disabled),
                pending_trust=tuple(pending),
                duration_sec=round(time.monotonic() - started, 3),
            )
        )
        broken = [self.clients[n] for n in failed if self.clients[n].config.required]
        if broken and self.raise_on_required:
            first = broken[0]
            await self._close()
            raise McpStartupError(first.name, first.reason or "failed", stderr_tail=first.stderr_tail)
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self._close()

    def start_background(self) -> None:
        """Let the background starts begin (again is fine)."""
        self._background_go.set()

    async def _start_in_background(self, names: list[str]) -> None:
        limiter = anyio.CapacityLimiter(self.background_starts)

        async def start(name: str) -> None:
            async with limiter:
                if self._task_group is None or self.clients[name].lazy_start is None:
                    return  # leaving, or a call (or the /mcp panel) started it meanwhile
                await self.start_one(name)  # holds its place until the server is Ready or Failed

        with self._background_scope:  # cancelled on leaving: a start not begun by then never begins
            await self._background_go.wait()
            async with anyio.create_task_group() as group:
                for name in names:
                    group.start_soon(start, name)

    async def _close(self) -> None:
        if self._task_group is None:
            return
        self._background_scope.cancel()
        for client in self.clients.values():
            client.request_stop()
        task_group, self._task_group = self._task_group, None
        # exit in the entering task: anyio cancel scopes belong to one task
        await task_group.__aexit__(None, None, None)

    def states(self) -> list[McpServerState]:
        return [client.state() for client in self.clients.values()]

    def providers(self) -> list[McpToolAdapter]:
        """One tool provider per started server (a failed server's provider lists no tools); the peer bench harness
        (``../shared/bench-peers``) adds them to a registry."""
        return list(self.adapters.values())

    async def list_tools(self) -> dict[str, list[str]]:
        """Registry tool names per server, for ``kairox mcp tools`` and the prompt context."""
        return {name: [spec.name for spec in await adapter.list_tools()] for name, adapter in self.adapters.items()}

    # --- one server at a time, while the others keep running (the front ends' /mcp panels) ----------------

    def is_running(self, name: str) -> bool:
        """Whether the server's supervisor runs (Starting, Ready, or waiting to restart after a crash)."""
        client = self._require(name)
        return name in self.adapters and client.winding_down and client.lazy_start is None

    def _require(self, name: str) -> McpClient:
        if name not in self.clients:
            raise KairoxError(f"no MCP server named {name!r}", hint=f"servers: {', '.join(self.clients) or '(none)'}")
        return self.clients[name]

    async def stop_one(self, name: str, *, timeout_sec: float = 30.0) -> None:
        """Stop one server; the others keep running. Its tools leave the model's list."""
        client = self._require(name)
        if not self.is_running(name):
            if client.lazy_start is not None:  # lazy, or waiting for its background start: it stays down
                client.lazy_start = None
                client._done = anyio.Event()  # no supervisor is coming: calls see a stopped server
                client._done.set()
                client.skipped(ServerStatus.STOPPED, "stopped by the user before it started")
            return
        with anyio.fail_after(timeout_sec):
            await client.stop()

    async def start_one(self, name: str) -> McpToolAdapter:
        """Start one configured server that is stopped, failed, disabled or pending trust, and wait until it is
        Ready or Failed. Returns its tool provider: a new one must be added to the registry by the caller."""
        client = self._require(name)
        if self._task_group is None:
            raise KairoxError(
                "the MCP servers are not running", hint="start one inside `async with McpServerManager(...)`"
            )
        if self.is_running(name):
            return self.adapters[name]
        client.lazy_start = None
        adapter = self.adapters.get(name) or McpToolAdapter(client)
        self.adapters[name] = adapter
        await client._start_in(self._task_group)
        return adapter

    async def restart(self, name: str) -> McpToolAdapter:
        """Stop the server (when it runs) and start it again with its current configuration."""
        await self.stop_one(name)
        return await self.start_one(name)

    async def add_one(self, name: str, config: McpServerConfig, *, base_dir: Path | None = None) -> McpToolAdapter:
        """Add a server to the running manager and start it (unless its configuration disables it)."""
        if name in self.clients:
            raise KairoxError(
                f"an MCP server named {name!r} is already configured", hint="restart it, or pick another name"
            )
        self.clients[name] = self._new_client(name, config, environ=self._environ, base_dir=base_dir)
        if not config.enabled:
            self.clients[name].skipped(ServerStatus.DISABLED, "disabled in the configuration")
            adapter = McpToolAdapter(self.clients[name])
            self.adapters[name] = adapter
            return adapter
        return await self.start_one(name)

    async def reconfigure(self, name: str, config: McpServerConfig) -> None:
        """Take a changed configuration of a server (``enabled_tools`` / ``disabled_tools``, ``enabled``): its
        tool list is filtered again at once; settings of the process apply from the next start."""
        client = self._require(name)
        client.config = config
        adapter = self.adapters.get(name)
        if adapter is not None:
            await adapter._client_tools_changed(client.tools)
