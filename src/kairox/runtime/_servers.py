"""The one view of every configured server (MCP, LSP, DAP alike) and the board that keeps it current.

Every front end shows servers from here: the TUI's server table and ``/mcp`` panel, the GUI's ``/api/servers``,
``kairox mcp status`` and ``kairox lsp status``. What a status means is decided once, in this module: a server held
back by trust (an untrusted project's, or one changed since ``kairox trust``) is never "disabled" or "starting",
a disabled one never "failed", and a language server that has not been needed yet is "idle", not "stopped".

The board reads the configuration (which servers exist, where they were configured, whether trust holds them
back), the running context (MCP clients, language servers, the registry's offered tools) and lifecycle events,
matched by their stable ``kind`` (``mcp.server.ready``); it imports none of the packages that define them, so a
front end can seed it before the MCP SDK has loaded.
"""

import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Protocol

from kairox._rpc._status import ServerStatus
from kairox.config import ResolvedConfig, join_key, redact_tree
from kairox.events import Event

if TYPE_CHECKING:
    from kairox.config import SecretScrubber
    from kairox.mcp import McpClient, McpServerManager
    from kairox.mcp._sources import ConfiguredServer


class LanguageServerState(Protocol):
    """What the board reads of one language server: its status, how often it started, and why it failed."""

    @property
    def status(self) -> ServerStatus: ...
    @property
    def starts(self) -> int: ...
    @property
    def reason(self) -> str | None: ...
    @property
    def stderr_tail(self) -> str: ...


class _LanguageServers(Protocol):
    @property
    def servers(self) -> Mapping[str, LanguageServerState]: ...


class _VisibleTools(Protocol):
    def visible_tools(self) -> Iterable[Any]: ...


class RunningServers(Protocol):
    """What :meth:`ServerBoard.sync` reads of a running extension context (``ExtensionContext`` is one): the
    configuration it started with, its MCP servers, the tools the model sees, and its language servers."""

    @property
    def resolved(self) -> ResolvedConfig: ...
    @property
    def mcp(self) -> "McpServerManager | None": ...
    @property
    def registry(self) -> _VisibleTools: ...
    @property
    def lsp(self) -> _LanguageServers: ...


SECTIONS = {"mcp": "mcp_servers", "lsp": "lsp_servers", "dap": "dap_servers"}
"""Server kind -> its configuration table."""
_ORDER = {"mcp": 0, "lsp": 1, "dap": 2}
STDERR_TAIL_CHARS = 4000


@dataclass(frozen=True, kw_only=True, slots=True)
class ServerOrigin:
    """Where a server was configured."""

    layer: str
    """``user``, ``project``, ``local``, ``cli`` ..., ``.mcp.json`` or ``plugin:<name>``."""
    file: str | None = None
    line: int | None = None

    def where(self) -> str:
        if self.file is not None:
            return f"{self.file}:{self.line}" if self.line else self.file
        return self.layer

    def to_json(self) -> dict[str, Any]:
        return {"layer": self.layer, "file": self.file, "line": self.line}


@dataclass(frozen=True, kw_only=True, slots=True)
class ServerTool:
    name: str
    description: str = ""
    enabled: bool = True
    """Whether ``enabled_tools`` / ``disabled_tools`` let the model see it."""


@dataclass(frozen=True, kw_only=True, slots=True)
class ServerView:
    """One server as every front end shows it."""

    kind: str
    """``mcp``, ``lsp`` or ``dap``."""
    name: str
    status: ServerStatus
    reason: str | None = None
    """Why it is in that status when that needs saying: the failure, what trust holds back and what to run, that
    it is disabled and where."""
    enabled: bool = True
    transport: str = "stdio"
    target: str = ""
    """The command line or URL, with secrets redacted."""
    origin: ServerOrigin | None = None
    required: bool = False
    tools: tuple[ServerTool, ...] = ()
    """The server's own tools (MCP), each marked whether the model is offered it."""
    tool_count: int = 0
    """Tools the model sees from this server (for MCP: the resource helpers Kairox adds included)."""
    resource_tools: int = 0
    stderr_tail: str = ""
    protocol_version: str | None = None
    since: float | None = None
    """When it last became ready (seconds since the epoch)."""
    confinement: dict[str, Any] | None = None
    """How the server's process is confined (``confined``, ``sandbox``, ``network``, ``writable_roots``, or the
    ``reason`` it is not), when known; ``describe_confinement`` words it."""

    @property
    def label(self) -> str:
        return self.status.label

    @property
    def confinement_text(self) -> str | None:
        """The confinement in words (``confined: workspace_write, network on, writes ...``), when known."""
        if self.confinement is None:
            return None
        from kairox.sandbox import describe_confinement

        return describe_confinement(self.confinement)

    def to_json(self, *, tool_list: bool = True) -> dict[str, Any]:
        """The API's shape. ``tool_list=False``: ``tools`` is the count the model sees (``kairox mcp status``)."""
        return {
            "kind": self.kind,
            "name": self.name,
            "status": str(self.status),
            "label": self.label,
            "reason": self.reason,
            "error": self.reason if self.status is not ServerStatus.READY else None,
            "enabled": self.enabled,
            "transport": self.transport,
            "target": self.target,
            "required": self.required,
            "provenance": self.origin.to_json() if self.origin is not None else None,
            "tools": [{"name": t.name, "description": t.description, "enabled": t.enabled} for t in self.tools]
            if tool_list
            else self.tool_count,
            "tool_count": self.tool_count,
            "resource_tools": self.resource_tools,
            "stderr_tail": self.stderr_tail[-STDERR_TAIL_CHARS:],
            "protocol_version": self.protocol_version,
            "confinement": self.confinement,
            "confinement_text": self.confinement_text,
        }


# --- what the configuration says ---------------------------------------------------------------------------------


def trust_hold(resolved: ResolvedConfig, kind: str, name: str, *, pending: bool) -> tuple[ServerStatus, str] | None:
    """Whether trust holds server ``name`` back, as which status, and why: the one answer every front end shows."""
    if not pending:
        return None
    key = join_key((SECTIONS[kind], name))
    item = next(
        (p for p in resolved.pending if p.key == key or key.startswith(p.key + ".") or p.key.startswith(key + ".")),
        None,
    )
    if resolved.trusted:
        reason = item.reason if item is not None else "added or changed since this workspace was trusted"
        status = ServerStatus.PENDING_RETRUST
    else:
        reason = item.reason if item is not None else "declared by a project file of an untrusted workspace"
        status = ServerStatus.HELD_BACK
    if "kairox trust" not in reason:
        reason += "; run `kairox trust` in the workspace to start it"
    return status, reason


def held_text(resolved: ResolvedConfig, kind: str, name: str) -> str:
    """Why trust holds server ``name`` back, as a tool's answer or a status line says it: the status's words, then
    the reason (``pending re-trust: language server `py` in kairox.toml:4 changed since ...; run `kairox trust` to
    review``)."""
    hold = trust_hold(resolved, kind, name, pending=True)
    assert hold is not None
    return f"{hold[0].label}: {hold[1]}"


def _origin(resolved: ResolvedConfig, kind: str, name: str) -> ServerOrigin | None:
    key = join_key((SECTIONS[kind], name))
    origin = resolved.origin(key)
    if origin is None:  # a table's own key may be missing; its first leaf says where it is
        origin = next((o for k, o in sorted(resolved.provenance.items()) if k.startswith(key + ".")), None)
    if origin is None:
        return None
    layer = origin.source if str(origin.layer) == "plugin" and origin.source else str(origin.layer)
    return ServerOrigin(layer=layer, file=str(origin.file) if origin.file else None, line=origin.line)


def split_where(layer: str, where: str | None) -> ServerOrigin:
    """``file:12`` -> file and line; a ``where`` without a line is the file alone."""
    if where is None:
        return ServerOrigin(layer=layer)
    head, _, tail = where.rpartition(":")
    return (
        ServerOrigin(layer=layer, file=head, line=int(tail))
        if head and tail.isdigit()
        else ServerOrigin(layer=layer, file=where)
    )


def _target(config: Any) -> str:
    """The command line or URL, redacted as ``config show`` redacts it."""
    shown = redact_tree(
        {
            "command": getattr(config, "command", None),
            "args": list(getattr(config, "args", []) or []),
            "url": getattr(config, "url", None),
        }
    )
    if shown.get("url"):
        return str(shown["url"])
    return " ".join(str(part) for part in [shown.get("command") or "", *shown["args"]]).strip()


def configured_views(
    resolved: ResolvedConfig, *, starting: bool = False, servers: "Mapping[str, ConfiguredServer] | None" = None
) -> list[ServerView]:
    """Every configured server before anything runs. ``starting``: MCP servers that will start are shown starting
    (a front end that is about to open the context), else stopped. ``servers``: the MCP servers of ``resolved``
    when the caller has already worked them out (``configured_servers``)."""
    if servers is None:
        from kairox.mcp._sources import configured_servers

        servers = configured_servers(resolved)[0]
    views: list[ServerView] = []
    for name, server in servers.items():
        config = server.config
        origin = _origin(resolved, "mcp", name) if server.layer != ".mcp.json" else None
        views.append(
            _settle(
                resolved,
                ServerView(
                    kind="mcp",
                    name=name,
                    status=ServerStatus.STARTING if starting else ServerStatus.STOPPED,
                    enabled=config.enabled,
                    transport=config.transport,
                    target=_target(config),
                    origin=origin or split_where(server.layer, server.where),
                    required=config.required,
                ),
                pending=server.pending_trust,
            )
        )
    for kind in ("lsp", "dap"):
        section = SECTIONS[kind]
        for name, config in getattr(resolved.config, section).items():
            view = ServerView(
                kind=kind,
                name=name,
                status=ServerStatus.IDLE,
                enabled=bool(getattr(config, "enabled", True)),
                target=_target(config),
                origin=_origin(resolved, kind, name),
            )
            views.append(_settle(resolved, view, pending=resolved.is_pending(join_key((section, name)))))
    return views


def _settle(resolved: ResolvedConfig, view: ServerView, *, pending: bool) -> ServerView:
    """What the configuration decides before any live state: trust first, then ``enabled``."""
    hold = trust_hold(resolved, view.kind, view.name, pending=pending)
    if hold is not None:
        return replace(view, status=hold[0], reason=hold[1], tools=(), tool_count=0, resource_tools=0)
    if not view.enabled:
        where = f" ({view.origin.where()})" if view.origin is not None else ""
        return replace(
            view,
            status=ServerStatus.DISABLED,
            reason=f"disabled in the configuration{where}",
            tool_count=0,
            resource_tools=0,
        )
    return view


# --- the board -----------------------------------------------------------------------------------------------------


def lifecycle_change(event: Event) -> tuple[str, str, ServerStatus] | None:
    """``(kind, server, status)`` of a lifecycle event (``mcp.server.ready`` ...: each says its status), else None."""
    status, kind = getattr(event, "status", None), event.kind.partition(".")[0]
    if not isinstance(status, ServerStatus) or kind not in SECTIONS:
        return None
    return kind, str(getattr(event, "server", "")), status


class ServerBoard:
    """The views of one workspace's servers, keyed by (kind, name): seeded from the configuration, synced with a
    running context, changed by events (:meth:`apply` is an event sink's ``emit``)."""

    def __init__(
        self,
        resolved: ResolvedConfig,
        *,
        starting: bool = False,
        clock: Callable[[], float] = time.time,
        servers: "Mapping[str, ConfiguredServer] | None" = None,
    ) -> None:
        """``servers``: the MCP servers of ``resolved`` (``configured_servers``) when the caller has them."""
        self.resolved = resolved
        self._clock = clock
        self._views: dict[tuple[str, str], ServerView] = {}
        self.seed(resolved, starting=starting, servers=servers)

    # --- reading ---------------------------------------------------------------------------------------------

    def views(self, kind: str | None = None) -> list[ServerView]:
        """Every server (or those of one kind): MCP, then language servers, then debug adapters, by name."""
        found = [v for v in self._views.values() if kind is None or v.kind == kind]
        return sorted(found, key=lambda v: (_ORDER.get(v.kind, 9), v.name))

    def get(self, kind: str, name: str) -> ServerView | None:
        return self._views.get((kind, name))

    def to_json(self) -> list[dict[str, Any]]:
        return [view.to_json() for view in self.views()]

    # --- changing --------------------------------------------------------------------------------------------

    def seed(
        self,
        resolved: ResolvedConfig,
        *,
        starting: bool = False,
        servers: "Mapping[str, ConfiguredServer] | None" = None,
    ) -> None:
        """Start over from the configuration alone (after a restart, a trust change)."""
        self._know_secrets(resolved)
        self._views = {(v.kind, v.name): v for v in configured_views(resolved, starting=starting, servers=servers)}

    def _know_secrets(self, resolved: ResolvedConfig) -> None:
        self.resolved = resolved
        # a server's stderr or failure may quote its own environment or headers: scrubbed here, for every front end;
        # the scrubber is made when there is first something to scrub (a session whose servers are fine has none)
        self._scrubber: SecretScrubber | None = None

    def scrub(self, text: str) -> str:
        """``text`` with every secret of the configuration (and the host's) replaced, as the views show it."""
        scrubber = self._scrubber
        if scrubber is None:
            from kairox.config import SecretScrubber

            scrubber = self._scrubber = SecretScrubber.for_config(self.resolved)
        return scrubber.text(text)

    def _put(self, view: ServerView) -> ServerView:
        if view.stderr_tail or view.reason:
            view = replace(
                view,
                stderr_tail=self.scrub(view.stderr_tail),
                reason=self.scrub(view.reason) if view.reason else view.reason,
            )
        self._views[(view.kind, view.name)] = view
        return view

    def _change(self, kind: str, name: str, **changes: Any) -> ServerView:
        view = self._views.get((kind, name)) or ServerView(kind=kind, name=name, status=ServerStatus.STOPPED)
        if view.status.waits_for_trust or view.status is ServerStatus.DISABLED:
            return view  # a server that was never to start keeps saying why
        return self._put(replace(view, **changes))

    def apply(self, event: Event) -> ServerView | None:
        """Take one event; the view it changed, if any."""
        change = lifecycle_change(event)
        if change is not None:
            kind, name, status = change
            if status is ServerStatus.READY:  # its count comes with the registry's tools.changed
                return self._change(kind, name, status=status, reason=None, since=self._clock())
            if status is ServerStatus.FAILED:
                return self._change(
                    kind,
                    name,
                    status=status,
                    reason=getattr(event, "reason", None),
                    stderr_tail=getattr(event, "stderr_tail", ""),
                )
            if status is ServerStatus.STARTING:
                return self._change(kind, name, status=status, reason=None)
            return self._change(kind, name, status=status)
        origin = getattr(event, "origin", None)
        if event.kind == "tools.changed" and ("mcp", origin) in self._views:
            # one count everywhere: the tools Kairox offers from the server, its resource tools included
            return self._change("mcp", str(origin), tool_count=getattr(event, "tools", 0))
        return None

    def emit(self, event: Event) -> None:
        """The board as an event sink."""
        self.apply(event)

    def sync(
        self,
        context: RunningServers,
        resolved: ResolvedConfig | None = None,
        *,
        servers: "Mapping[str, ConfiguredServer] | None" = None,
    ) -> None:
        """Every server as the running context has it (servers that never start emit no event: disabled, held back,
        language servers waiting for their first use). ``resolved``: the configuration as it is now, when it was
        read again after a write (the context keeps what it started with); ``servers``: its MCP servers, when the
        caller has just worked them out (``configured_servers``)."""
        resolved = resolved or context.resolved
        if resolved is not self.resolved:
            self._know_secrets(resolved)
        for view in configured_views(resolved, servers=servers):
            old = self._views.get((view.kind, view.name))
            # live facts stay; what the configuration says is taken fresh
            if old is not None and not view.status.waits_for_trust and view.status is not ServerStatus.DISABLED:
                view = replace(
                    view,
                    status=old.status,
                    reason=old.reason,
                    tools=old.tools,
                    tool_count=old.tool_count,
                    resource_tools=old.resource_tools,
                    stderr_tail=old.stderr_tail,
                    since=old.since,
                    protocol_version=old.protocol_version,
                )
            self._put(view)
        if context.mcp is not None:
            self.sync_mcp(context.mcp, offered_counts(context.registry.visible_tools()))
        for name, server in context.lsp.servers.items():
            status = server.status
            if status is ServerStatus.STOPPED and server.starts == 0:
                status = ServerStatus.IDLE
            failed = status is ServerStatus.FAILED
            self._change(
                "lsp",
                name,
                status=status,
                reason=server.reason if failed else None,
                stderr_tail=server.stderr_tail if failed else "",
            )

    def sync_mcp(self, manager: "McpServerManager", offered: Mapping[str, tuple[int, int]]) -> None:
        """The MCP servers as ``manager`` runs them; ``offered``: per server, the tools the model sees and how many of
        them are the resource helpers Kairox adds (:func:`offered_counts`)."""
        for name, client in manager.clients.items():
            old = self._views.get(("mcp", name))
            if old is None:  # added while running (a catalog install)
                old = ServerView(
                    kind="mcp", name=name, status=ServerStatus.STOPPED, origin=_origin(self.resolved, "mcp", name)
                )
                pending = client.status.waits_for_trust
            else:
                pending = old.status.waits_for_trust
            # the client's configuration is the live one (a toggle reconfigures it before any file is read again)
            self._put(
                _settle(
                    self.resolved, replace(old, **_client_facts(client, offered.get(name, (0, 0)))), pending=pending
                )
            )
        for view in self.views("mcp"):  # servers this manager was not asked to start (``for_tools``)
            if view.name not in manager.clients and view.status is ServerStatus.STARTING:
                self._put(replace(view, status=ServerStatus.STOPPED))


def _server_tools(client: "McpClient") -> tuple[ServerTool, ...]:
    from kairox.mcp._content import is_offered

    config = client.config
    return tuple(
        ServerTool(
            name=t.name,
            description=t.description or "",
            enabled=is_offered(t, config.enabled_tools, config.disabled_tools),
        )
        for t in client.tools
    )


def _client_facts(client: "McpClient", offered: tuple[int, int]) -> dict[str, Any]:
    status = client.status
    if status not in (ServerStatus.READY, ServerStatus.STARTING, ServerStatus.FAILED):  # the rest is settled below
        # ``startup = "lazy"``: not broken, it starts on first use
        status = ServerStatus.IDLE if client.lazy_start is not None else ServerStatus.STOPPED
    config = client.config
    tools = _server_tools(client)
    return {
        "status": status,
        "reason": client.reason if status in (ServerStatus.FAILED, ServerStatus.STOPPED, ServerStatus.IDLE) else None,
        "enabled": config.enabled,
        "transport": config.transport,
        "target": _target(config),
        "required": config.required,
        "tools": tools,
        # what the model is offered: also the cached tools of a server not started yet (``startup = "lazy"``)
        "tool_count": offered[0],
        "resource_tools": offered[1],
        "stderr_tail": client.stderr_tail,
        "protocol_version": client.protocol_version,
        "confinement": client.confinement_state,
    }


def offered_counts(specs: Iterable[Any]) -> dict[str, tuple[int, int]]:
    """Per MCP server, from the tool specs the model sees: (tools, of them resource helpers)."""
    counts: dict[str, list[int]] = {}
    for spec in specs:
        if str(spec.source) != "mcp" or spec.origin is None:
            continue
        pair = counts.setdefault(spec.origin, [0, 0])
        pair[0] += 1
        pair[1] += "resource_helper" in spec.meta
    return {name: (pair[0], pair[1]) for name, pair in counts.items()}


async def manager_offered_counts(manager: "McpServerManager") -> dict[str, tuple[int, int]]:
    """:func:`offered_counts` of a manager that runs without a registry (``kairox mcp status``)."""
    specs = [spec for adapter in manager.adapters.values() for spec in await adapter.list_tools()]
    return offered_counts(specs)
