"""``build_extension_context``: the seed's pipeline from a workspace to an :class:`ExtensionContext` (E1).

configuration -> plugins -> their contributions merged -> MCP servers started (while skills are scanned) ->
skills -> ToolRegistry (builtin + plugin + MCP + skill + LSP + DAP) -> prompt context. Everything started is
closed again, in reverse order, by one ``AsyncExitStack`` in the task that entered it, also when start-up
fails halfway.
"""

import asyncio
import contextlib
import dataclasses
import os
from collections import Counter
from collections.abc import AsyncIterator, Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kairox._util._files import tighten
from kairox._util._names import normalize_tool_name
from kairox.config import KairoxConfig, KeyOrigin, Layer, McpServerConfig, ResolvedConfig, join_key, resolve_config
from kairox.errors import Diagnostic, ExtensionLoadFailure, Severity
from kairox.events import EventSink, FanoutSink, RecordingSink
from kairox.policy import Approver, NonInteractiveApprover
from kairox.runtime._events import (
    ExtensionContextClosed,
    ExtensionContextReady,
    PluginsLoaded,
    RegistryBuilt,
    SkillsReady,
)
from kairox.runtime._memory import gather_memory, instruction_text
from kairox.runtime._prompt import PluginLine, ServerLine, render_prompt_context
from kairox.runtime._servers import ServerBoard, held_text
from kairox.sandbox import SandboxSettings
from kairox.tools import ToolSpec

if TYPE_CHECKING:
    from kairox.dap import DapToolProvider
    from kairox.hooks import HookRegistry
    from kairox.lsp import LspToolProvider
    from kairox.mcp import McpResource, McpServerManager
    from kairox.plugins import PluginRouting, PluginSet
    from kairox.registry import ToolRegistry
    from kairox.runtime._agents import AgentSet
    from kairox.skills import SkillRegistry


@dataclass(frozen=True, kw_only=True, slots=True)
class RuntimeOptions:
    """What a front end passes: the global options of the command line, and what to start."""

    workspace: Path | None = None
    profile: str | None = None
    overrides: Sequence[str] = ()
    cwd: Path | None = None
    start_mcp: bool = True
    """Start MCP servers (``kairox skills list`` does not need them, and never imports the MCP SDK)."""
    raise_on_required: bool = True
    """Stop with :class:`McpStartupError` when a ``required``
    MCP server fails (``kairox doctor`` reports it instead)."""
    wait_for_mcp: bool = False
    """Wait for every MCP server also when its tools are cached (one-shot commands that report what servers say)."""
    hold_mcp_background: bool = False
    """Servers listed from the cache start when ``context.mcp.start_background()`` is called (an agent session:
    once its first model request is out), not on entering."""
    for_tools: tuple[str, ...] | None = None
    """Start only the MCP servers these tools can come from (``mcp__<server>__...``); None: every server. A call of
    ``fs.read`` starts none, a call of ``mcp__notes__search`` starts ``notes`` only."""


@dataclass(kw_only=True)
class ExtensionContext:
    """Everything an agent needs: the gate with every tool, the prompt text, and what failed."""

    resolved: ResolvedConfig
    registry: "ToolRegistry"
    prompt_context: str
    events: RecordingSink
    plugins: "PluginSet"
    routing: "PluginRouting"
    skills: "SkillRegistry"
    hooks: "HookRegistry"
    lsp: "LspToolProvider"
    dap: "DapToolProvider"
    mcp: "McpServerManager | None" = None
    servers: ServerBoard | None = None
    """Every configured server (MCP, LSP, DAP) as every front end shows it, kept current by the context's events."""
    diagnostics: list[Diagnostic] = field(default_factory=list)
    agents: "AgentSet" = field(default_factory=lambda: _no_agents())
    """The agents a ``task`` call can start (subagents)."""

    @property
    def config(self) -> KairoxConfig:
        return self.resolved.config

    def tools(self) -> list[ToolSpec]:
        """The model-visible tools, by name."""
        return sorted(self.registry.visible_tools(), key=lambda s: s.name)

    def failures(self) -> list[Diagnostic]:
        return [d for d in self.diagnostics if d.severity is Severity.ERROR]

    # --- what front ends ask of the MCP servers: they never reach into the managers -----------------------------

    @property
    def takes_servers(self) -> bool:
        """Whether an MCP server added now starts in this session (it manages MCP servers)."""
        return self.mcp is not None

    def mcp_config(self, name: str) -> McpServerConfig | None:
        """The configuration MCP server ``name`` runs with in this session; None when the session does not run it
        (held back by trust, or not configured)."""
        client = None if self.mcp is None else self.mcp.clients.get(name)
        return None if client is None else client.config

    def mcp_resources(self) -> list[tuple[str, "McpResource"]]:
        """Every resource (and template) the session's MCP servers list, with the server's name."""
        clients = {} if self.mcp is None else self.mcp.clients
        return [(name, resource) for name, client in sorted(clients.items()) for resource in client.resources]

    def starting(self) -> list[str]:
        """The MCP servers whose start is under way."""
        return [view.name for view in (self.servers.views("mcp") if self.servers else []) if view.status == "starting"]

    def to_json(self) -> dict[str, Any]:
        return {
            "prompt_context": self.prompt_context,
            "tools": [{"name": s.name, "source": str(s.source), "origin": s.origin} for s in self.tools()],
            "diagnostics": [d.to_json() for d in self.diagnostics],
        }


def _no_agents() -> "AgentSet":
    from kairox.runtime._agents import AgentSet

    return AgentSet()


def mcp_failure_hint(name: str, config: McpServerConfig, cause: str | None, variable: str | None = None) -> str:
    """What to do about a server that did not start, chosen by the typed cause of its failure
    (:class:`kairox.mcp.FailureCause`): a variable to export, a start-up time, a remote server's url or
    authorization, or a stdio server's command."""
    if cause == "unset_variable" and variable:
        return f"export {variable} (or give a default in the entry with ${{{variable}:-value}}), then try again"
    if cause == "startup_timeout":
        return f"raise mcp_servers.{name}.startup_timeout_sec"
    if config.transport != "stdio":
        return (
            f"check mcp_servers.{name}.url and its authorization: "
            f"`kairox mcp login {name}`, headers or bearer_token_env_var"
        )
    return f"run `kairox mcp status {name}` for its stderr; check mcp_servers.{name}.command"


def _mcp_diagnostics(
    manager: "McpServerManager", servers: dict[str, Any], resolved: ResolvedConfig, board: ServerBoard
) -> list[Diagnostic]:
    from kairox._rpc._status import ServerStatus
    from kairox.runtime._servers import split_where, trust_hold

    found: list[Diagnostic] = []
    for name, client in manager.clients.items():
        where = split_where("", servers[name].where if name in servers else None)
        source, line = where.file, where.line
        if client.status == ServerStatus.FAILED:
            tail = (client.stderr_tail or "").strip().splitlines()[-3:]
            found.append(
                ExtensionLoadFailure(
                    kind="mcp_server",
                    name=name,
                    # scrubbed as the server view is: a server's stderr may quote its own secrets
                    reason=board.scrub(
                        (client.reason or "failed") + (f" (stderr: {' | '.join(tail)})" if tail else "")
                    ),
                    source=source,
                    line=line,
                    hint=mcp_failure_hint(name, client.config, client.cause, client.cause_variable),
                )
            )
        if client.confinement_warning is not None:
            found.append(
                Diagnostic(
                    kind="mcp_server",
                    name=name,
                    reason=client.confinement_warning,
                    source=source,
                    line=line,
                    hint=(
                        "install bubblewrap (apt-get install bubblewrap) so it runs confined, or "
                        'set sandbox = "none" in its entry to say it runs unconfined on purpose'
                    ),
                )
            )
        if client.status.waits_for_trust:
            hold = trust_hold(resolved, "mcp", name, pending=True)
            assert hold is not None
            found.append(
                Diagnostic(
                    kind="mcp_server",
                    name=name,
                    reason=f"{hold[0].label}: {hold[1]}",
                    severity=Severity.INFO,
                    source=source,
                    line=line,
                    hint="run `kairox trust` in the workspace to start it",
                )
            )
    return found


def build_hooks(
    resolved: ResolvedConfig,
    routing: "PluginRouting",
    *,
    approver: Approver | None,
    events: EventSink | None = None,
    sandbox: "SandboxSettings | None" = None,
) -> "HookRegistry":
    """The session's hooks: ``[hooks]`` of the configuration, then the active plugins' (approved by hash)."""
    from kairox.hooks import HookApprovalStore, HookRegistry
    from kairox.registry import registry_settings

    return HookRegistry.from_config(
        resolved.config.hooks,
        routing.hooks,
        workspace=resolved.workspace,
        sandbox=sandbox or registry_settings(resolved).sandbox,
        approver=approver,
        approvals=HookApprovalStore(resolved.home),
        events=events,
    )


@dataclass(frozen=True, kw_only=True, slots=True)
class PluginStage:
    resolved: ResolvedConfig
    """The configuration with the plugins' MCP and LSP servers merged in (provenance ``plugin:<name>``)."""
    plugins: "PluginSet"
    routing: "PluginRouting"
    diagnostics: tuple[Diagnostic, ...]


def load_plugins(resolved: ResolvedConfig) -> PluginStage:
    """Find the plugins and route their contributions; their servers join the configuration."""
    from kairox.plugins import discover_from_resolved, route_plugins

    plugin_set = discover_from_resolved(resolved)
    routing = route_plugins(
        plugin_set.plugins, mcp_servers=resolved.config.mcp_servers, lsp_servers=resolved.config.lsp_servers
    )
    for section, chosen in (("mcp_servers", routing.mcp_servers), ("lsp_servers", routing.lsp_servers)):
        entries = {e.name: e for e in routing.server_entries if f"{section}.{e.name}" in routing.provenance}
        origins = {
            name: KeyOrigin(
                layer=Layer.PLUGIN,
                file=Path(entries[name].source) if name in entries else None,
                source=routing.provenance[f"{section}.{name}"],
            )
            for name in chosen
        }
        resolved = resolved.with_servers(section, chosen, origins)
    return PluginStage(
        resolved=resolved,
        plugins=plugin_set,
        routing=routing,
        diagnostics=(*plugin_set.diagnostics, *routing.diagnostics),
    )


def load_skills(
    resolved: ResolvedConfig, routing: "PluginRouting", *, events: EventSink | None = None
) -> "SkillRegistry":
    """Every skill of the workspace, the plugins' included (namespaced ``<plugin>:<name>``)."""
    from kairox.skills import registry_from_config

    return registry_from_config(
        resolved, plugin_roots=routing.skill_roots, events=events, exclude=routing.disabled_skills
    )


@contextlib.asynccontextmanager
async def build_extension_context(
    workspace: Path | None = None,
    cli: RuntimeOptions | None = None,
    *,
    approver: Approver | None = None,
    events: EventSink | None = None,
    resolved: ResolvedConfig | None = None,
) -> AsyncIterator[ExtensionContext]:
    """Run the pipeline and yield the context; leaving the block stops every server it started."""
    options = cli or RuntimeOptions()
    recorder = RecordingSink()
    sink = FanoutSink([recorder, *([events] if events is not None else [])])
    approver = approver or NonInteractiveApprover()
    diagnostics: list[Diagnostic] = []

    # 1. configuration
    if resolved is None:
        resolved = resolve_config(
            workspace or options.workspace,
            cli_overrides=options.overrides,
            profile=options.profile,
            cwd=options.cwd,
            events=sink,
        )
    diagnostics += [
        ExtensionLoadFailure(
            kind="config",
            name=p.key or Path(p.file).name,
            reason=p.message,
            source=p.file,
            line=p.line,
            hint=p.hint,
            recoverable=False,
        )
        for p in resolved.problems
    ]
    diagnostics += resolved.diagnostics
    tighten(resolved.home)  # what the home keeps (conversations, logs, tokens) is the person's alone

    # 2. plugins, and their contributions merged into the configuration with plugin provenance
    from kairox.plugins import plugin_tool_providers

    stage = load_plugins(resolved)
    resolved, plugin_set, routing = stage.resolved, stage.plugins, stage.routing
    diagnostics += stage.diagnostics
    from kairox.mcp import configured_servers
    from kairox.runtime._agents import load_agents

    agents = load_agents(resolved, plugin_set)
    diagnostics += agents.diagnostics

    # which MCP servers there are, each with its sandbox profile: worked out once for the board and the manager
    configured, mcp_problems = configured_servers(resolved)
    # the board sees each event before the caller's sink does: a front end that reads it on an event reads it current
    board = ServerBoard(resolved, starting=options.start_mcp, servers=configured)
    sink.sinks.insert(1, board)
    sink.emit(
        PluginsLoaded(
            active=tuple(p.name for p in plugin_set.active()),
            found=len(plugin_set.plugins),
            diagnostics=len(plugin_set.diagnostics),
        )
    )

    async with contextlib.AsyncExitStack() as stack:
        # 3. MCP servers start while the skills are scanned in a worker thread
        from kairox.registry import registry_settings
        from kairox.skills import SkillToolProvider

        # the gate's settings, worked out once: the servers' sandbox comes from them, and the gate below
        settings = registry_settings(resolved)
        loop = asyncio.get_running_loop()
        from kairox.sandbox import EgressProxy

        # the session's own egress proxy, stopped after its servers; refusals reach the sink in the loop's thread
        egress = EgressProxy(report=lambda event: loop.call_soon_threadsafe(sink.emit, event))
        stack.callback(egress.close)
        settings = dataclasses.replace(settings, sandbox=dataclasses.replace(settings.sandbox, egress=egress.route))
        # a plain executor future, not a task: nothing here must outlive the exit stack's task
        skills_future = loop.run_in_executor(None, lambda: load_skills(resolved, routing, events=sink))
        manager = None
        servers: dict[str, Any] = {}
        try:
            if options.start_mcp:
                from kairox.mcp import ClientFeatures, McpServerManager, server_confiner

                servers = configured
                if options.for_tools is not None:
                    servers = {name: s for name, s in servers.items() if _serves_any(name, options.for_tools)}
                diagnostics += mcp_problems
                diagnostics += [d for s in servers.values() if s.profile is not None for d in s.profile.diagnostics]
                # a manager even without servers, so one can be added to the running session (a catalog install)
                manager = McpServerManager(
                    {name: s.config for name, s in servers.items()},
                    workspace=resolved.workspace,
                    home=resolved.home,
                    events=sink,
                    features=ClientFeatures(roots=(resolved.workspace,)),
                    is_pending=lambda name: servers[name].pending_trust,
                    held_reason=lambda name: held_text(resolved, "mcp", name),
                    base_dirs={name: s.base_dir for name, s in servers.items()},
                    raise_on_required=options.raise_on_required,
                    wait_for_all=options.wait_for_mcp,
                    hold_background=options.hold_mcp_background,
                    # each stdio server in the sandbox shell.exec commands get, under its entry's profile
                    confine=server_confiner(
                        servers,
                        sandbox=settings.sandbox,
                        workspace=resolved.workspace,
                        home=resolved.home,
                    ),
                )
                await stack.enter_async_context(manager)
        finally:
            skills = await skills_future
        from kairox.runtime._mcp_skills import mcp_skills

        remote, fetch = mcp_skills(manager.clients if manager is not None else {}, resolved.home)
        if remote:
            skills.add_skills(remote)
        diagnostics += skills.diagnostics
        sink.emit(SkillsReady(offered=len(skills.offered()), total=len(skills.entries())))

        # 4. the gate, with every source
        from kairox.dap import DapToolProvider
        from kairox.lsp import LspToolProvider
        from kairox.plugins import narrow_policy
        from kairox.registry import build_registry, user_layer_writer
        from kairox.tools import BuiltinSettings

        hooks = build_hooks(resolved, routing, approver=approver, events=sink, sandbox=settings.sandbox)
        diagnostics += hooks.diagnostics
        # a manifest's permissions only narrow: they add ask rules for its own tools, never allow rules
        narrowing = tuple(
            rule
            for name, permissions in sorted(routing.permissions.items())
            for rule in narrow_policy(settings.policy, permissions, plugin=name).rules
        )
        if narrowing:
            settings = dataclasses.replace(
                settings, policy=dataclasses.replace(settings.policy, rules=(*settings.policy.rules, *narrowing))
            )
        registry = await build_registry(
            settings,
            approver=approver,
            hooks=hooks,
            events=sink,
            builtins=BuiltinSettings.from_config(resolved.config.tools),
            persist_rule=user_layer_writer(resolved),
        )
        for provider in plugin_tool_providers(routing.tools, routing.permissions):
            await registry.add_provider(await stack.enter_async_context(provider))
        # the MCP servers' tools join with the language servers', debug adapters' and skills' below: one rebuild
        # plans 2,000 MCP tools once, where one per step planned them again for each
        adapters = list(manager.adapters.values()) if manager is not None else []
        if manager is not None:
            for adapter in adapters:
                diagnostics += adapter.diagnostics
            diagnostics += _mcp_diagnostics(manager, servers, resolved, board)

        # server names are keyed like the resolver keys them (quoted when not one word: lsp_servers."a.b")
        def keyed(section: str, names: Iterable[str]) -> tuple[set[str], dict[str, Path]]:
            keys = {name: join_key((section, name)) for name in names}
            return {n for n, k in keys.items() if resolved.is_pending(k)}, {
                n: resolved.base_dir(k) for n, k in keys.items()
            }

        lsp_pending, lsp_dirs = keyed("lsp_servers", resolved.config.lsp_servers)
        dap_pending, dap_dirs = keyed("dap_servers", resolved.config.dap_servers)
        from kairox.sandbox import entry_confinement

        def confiner(section: str) -> Any:
            # each language server and debug adapter under its entry's profile, held to who wrote the entry
            def confine(name: str, config: Any) -> Any:
                return entry_confinement(resolved, section, name, config, settings.sandbox)

            return confine

        for section, entries in (
            ("lsp_servers", resolved.config.lsp_servers),
            ("dap_servers", resolved.config.dap_servers),
        ):
            diagnostics += [
                d
                for name, entry in entries.items()
                for d in entry_confinement(resolved, section, name, entry, settings.sandbox).profile.diagnostics
            ]
        lsp = LspToolProvider(
            resolved.config.lsp_servers,
            workspace=resolved.workspace,
            events=sink,
            pending=lsp_pending,
            held={name: held_text(resolved, "lsp", name) for name in lsp_pending},
            base_dirs=lsp_dirs,
            log_dir=resolved.home / "logs",
            confine=confiner("lsp_servers"),
        )
        dap = DapToolProvider(
            resolved.config.dap_servers,
            workspace=resolved.workspace,
            events=sink,
            pending=dap_pending,
            base_dirs=dap_dirs,
            held={name: held_text(resolved, "dap", name) for name in dap_pending},
            confine=confiner("dap_servers"),
        )
        skill_tool = SkillToolProvider(skills, registered=lambda: [s.name for s in registry.tools()], events=sink)
        skill_tool.fetch = fetch
        await registry.add_providers(
            [
                *adapters,
                await stack.enter_async_context(lsp),
                await stack.enter_async_context(dap),
                skill_tool,
            ]
        )
        diagnostics += registry.diagnostics
        visible = registry.visible_tools()
        sink.emit(
            RegistryBuilt(tools=len(visible), sources=dict(sorted(Counter(str(s.source) for s in visible).items())))
        )

        # 5. the prompt context, with the servers as the board has them once it is synced with what runs
        board.sync(_Running(resolved=resolved, mcp=manager, registry=registry, lsp=lsp), servers=configured)
        statuses = _status_records(board, manager)
        settings_text = resolved.config.instructions
        prompt = render_prompt_context(
            workspace=resolved.workspace,
            trusted=resolved.trusted,
            profile=resolved.profile,
            model=resolved.config.model,
            plugins=[
                PluginLine(name=p.name, version=p.version, description=p.manifest.description)
                for p in plugin_set.active()
            ],
            servers=[ServerLine(name=n, tools=s["tools"], status=s["status"]) for n, s in statuses.items()],
            skills_catalog=skills.catalog(resolved.config.skills.prompt_budget_chars).text,
            instructions=instruction_text(
                resolved.base_dir("instructions.files"),
                settings_text,
                confine_to=_untrusted_confinement(resolved),
                unreadable=_read_rules(registry),
            ),
            memory=gather_memory(
                resolved.workspace, options.cwd or Path(os.getcwd()), settings_text, unreadable=_read_rules(registry)
            ),
            pending_trust=len(resolved.pending),
        )
        context = ExtensionContext(
            resolved=resolved,
            registry=registry,
            prompt_context=prompt,
            events=recorder,
            plugins=plugin_set,
            routing=routing,
            skills=skills,
            hooks=hooks,
            lsp=lsp,
            dap=dap,
            mcp=manager,
            servers=board,
            diagnostics=_dedupe(diagnostics),
            agents=agents,
        )
        sink.emit(
            ExtensionContextReady(tools=len(visible), diagnostics=len(context.diagnostics), prompt_chars=len(prompt))
        )
        yield context
    # after the exit stack: every server has stopped
    sink.emit(ExtensionContextClosed(workspace=str(resolved.workspace)))


def _read_rules(registry: "ToolRegistry") -> Callable[[Path], str | None]:
    """The read rules of ``fs.read`` for prompt context: what the model may not read, it is not shown (Y10)."""
    from kairox.tools import BUILTIN_SPECS

    fs_read = next(spec for spec in BUILTIN_SPECS if spec.name == "fs.read")
    elsewhere = registry.policy.reads_elsewhere()  # another name of a hidden file, a hidden history

    def unreadable(path: Path) -> str | None:
        rule = registry.policy.read_refusal(fs_read, path)
        if rule is not None:
            return str(rule)
        return None if elsewhere is None else elsewhere(path)

    return unreadable


def _serves_any(server: str, tools: tuple[str, ...]) -> bool:
    prefix = f"mcp__{normalize_tool_name(server)}__"
    return any(tool.startswith(prefix) for tool in tools)


def _untrusted_confinement(resolved: ResolvedConfig) -> Path | None:
    """The workspace, when an untrusted project file lists ``instructions.files``: it may not name files outside."""
    origin = resolved.origin("instructions.files")
    if resolved.trusted or origin is None or origin.file is None:
        return None
    project_files = {resolved.layer_file(Layer.PROJECT), resolved.layer_file(Layer.LOCAL)}
    return resolved.workspace if origin.file in project_files else None


@dataclass(frozen=True, kw_only=True, slots=True)
class _Running:
    """What ``ServerBoard.sync`` reads of a running context, for the context being built (its prompt is rendered
    from the synced board)."""

    resolved: ResolvedConfig
    mcp: "McpServerManager | None"
    registry: "ToolRegistry"
    lsp: "LspToolProvider"


def _server_statuses(
    board: ServerBoard, manager: "McpServerManager | None", registry: "ToolRegistry"
) -> dict[str, dict[str, Any]]:
    """The MCP servers of the board as they are now, for ``kairox doctor``."""
    if manager is None:
        return {}
    from kairox.runtime._servers import offered_counts

    board.sync_mcp(manager, offered_counts(registry.visible_tools()))
    return _status_records(board, manager)


def _status_records(board: ServerBoard, manager: "McpServerManager | None") -> dict[str, dict[str, Any]]:
    """The MCP servers of a synced board, for the prompt context and ``kairox doctor``."""
    if manager is None:
        return {}
    result: dict[str, dict[str, Any]] = {}
    for view in board.views("mcp"):
        if view.name not in manager.clients:
            continue
        result[view.name] = {
            "status": str(view.status),
            "label": view.label,
            "transport": view.transport,
            "tools": view.tool_count,
            "resource_tools": view.resource_tools,
            "required": view.required,
            "error": view.reason if view.status != "ready" else None,
            "source": view.origin.where() if view.origin is not None else None,
            "confinement": manager.clients[view.name].confinement_state,
        }
    return result


def _dedupe(diagnostics: list[Diagnostic]) -> list[Diagnostic]:
    seen: set[tuple[str, str, str, str | None]] = set()
    kept: list[Diagnostic] = []
    for item in diagnostics:
        key = (item.kind, item.name, item.reason, item.source)
        if key not in seen:
            seen.add(key)
            kept.append(item)
    return kept
