"""Installing a catalog entry (M9, M11): pre-flight, the gate's question, the package fetched, a dry run, the entry
written. Shared by every front end.

Order matters: nothing is fetched or started before the gate allowed the write, and nothing is written before
the dry run has said whether the server works (a failed one is written disabled with the diagnostic, or not at
all with ``require_ready``).
"""

import enum
import json
import math
import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kairox._util._json import JsonObject
from kairox.catalog import CatalogCache, InstallPlan, PreflightCheck, PreflightReport, preflight
from kairox.config import Layer, McpServerConfig, ResolvedConfig, join_key, set_value, write_own
from kairox.events import EventSink, NullSink
from kairox.policy import Approver, PolicyEngine, Verdict
from kairox.registry import SessionApprovals, registry_settings
from kairox.runtime._events import CatalogInstallFinished
from kairox.tools import Access, PermissionProfile, ToolSource, ToolSpec, object_schema


class InstallStage(enum.StrEnum):
    """The steps of an install, in their order; a front end renders each as it arrives."""

    PREFLIGHT = "preflight"
    """What the entry needs (runtimes, variables, platform), one step per check."""
    APPROVAL = "approval"
    """The gate is asked about the write of the configuration file."""
    FETCH = "fetch"
    """The package is fetched into the runner's cache (started, then done or failed)."""
    DRY_RUN = "dry_run"
    """The server is started as Kairox will run it and its tools listed (started, then ready or failed)."""
    WRITE = "write"
    """The entry was written (enabled, or disabled with the dry run's diagnostic)."""
    START = "start"
    """A front end with a running session starts the new server in it (the GUI)."""


@dataclass(frozen=True, kw_only=True, slots=True)
class InstallStep:
    """One progress step of :func:`install_catalog_entry`: which stage, what to show, and for a finished step (a
    pre-flight check, a fetch, a dry run) whether it went well."""

    stage: InstallStage
    message: str
    ok: bool | None = None
    """None while the step runs (a start); True or False once it is done."""
    check: PreflightCheck | None = None
    """The pre-flight check a ``PREFLIGHT`` step reports."""

    def to_json(self) -> JsonObject:
        return {
            "step": str(self.stage),
            "message": self.message,
            "ok": self.ok,
            "check": self.check.to_json() if self.check else None,
        }


def check_step(check: PreflightCheck) -> InstallStep:
    """A pre-flight check as a step: ``[ok]``, ``[missing]`` (blocking) or ``[unset]`` (an optional variable)."""
    mark = "ok" if check.ok else ("missing" if check.blocking else "unset")
    text = f"[{mark}] {check.kind} {check.name}: {check.detail}" + (
        f" ({check.fix})" if not check.ok and check.fix else ""
    )
    return InstallStep(stage=InstallStage.PREFLIGHT, message=text, ok=check.ok, check=check)


Progress = Callable[[InstallStep], None]
Tick = Callable[[float], None]
"""Called about once a second while a long step runs, with the seconds since it started."""
PREFETCH_TIMEOUT_SEC = 900.0

INSTALL_SPEC = ToolSpec(
    name="mcp.catalog.install",
    description="Write an MCP server entry from the catalog into a configuration file.",
    input_schema=object_schema(
        {
            "path": {"type": "string"},
            "server": {"type": "string"},
            "entry": {"type": "string"},
            "command": {"type": "string"},
        },
        ["path", "server", "entry"],
    ),
    source=ToolSource.BUILTIN,
    permission=PermissionProfile(access=Access.WRITE, path_args=("path",)),
)
"""How the gate sees an install: a write of the configuration file (a protected path, so it always asks)."""


class InstallOutcome(enum.StrEnum):
    INSTALLED = "installed"
    """Written and enabled; the dry run listed the tools."""
    WRITTEN_DISABLED = "written_disabled"
    """Written with ``enabled = false`` and the diagnostic, because the dry run failed."""
    NOT_READY = "not_ready"
    """The dry run failed and ``require_ready`` was set: nothing written."""
    PREFLIGHT_FAILED = "preflight_failed"
    """A runtime is missing or too old: nothing fetched, started or written."""
    DENIED = "denied"
    """The gate (a rule, the approver, no terminal) refused the write: nothing written."""
    EXISTS = "exists"
    """A server of that name is already configured in that file: nothing written."""


@dataclass(frozen=True, kw_only=True, slots=True)
class DryRunTool:
    name: str
    description: str
    tokens: int
    """An estimate of what the tool's definition costs in the model's context (characters / 4)."""

    def to_json(self) -> JsonObject:
        return {"name": self.name, "description": self.description, "tokens": self.tokens}


@dataclass(frozen=True, kw_only=True, slots=True)
class DryRunReport:
    ready: bool
    tools: tuple[DryRunTool, ...] = ()
    error: str | None = None
    stderr_tail: str = ""
    duration_sec: float = 0.0

    @property
    def tokens(self) -> int:
        return sum(t.tokens for t in self.tools)

    def to_json(self) -> JsonObject:
        return {
            "ready": self.ready,
            "tools": [t.to_json() for t in self.tools],
            "tokens": self.tokens,
            "error": self.error,
            "stderr_tail": self.stderr_tail,
            "duration_sec": self.duration_sec,
        }


@dataclass(frozen=True, kw_only=True, slots=True)
class InstallOptions:
    layer: Layer = Layer.USER
    require_ready: bool = False
    prefetch: bool = True


@dataclass(frozen=True, kw_only=True, slots=True)
class InstallReport:
    outcome: InstallOutcome
    plan: InstallPlan
    file: Path
    preflight: PreflightReport
    reason: str | None = None
    dry_run: DryRunReport | None = None
    prefetch: str | None = None
    """What fetching the package did (``npm exec ...: done in 4.2 s``), when it ran."""
    notes: tuple[str, ...] = field(default_factory=tuple)

    @property
    def written(self) -> bool:
        return self.outcome in (InstallOutcome.INSTALLED, InstallOutcome.WRITTEN_DISABLED)

    def to_json(self) -> JsonObject:
        return {
            "outcome": str(self.outcome),
            "written": self.written,
            "file": str(self.file),
            "reason": self.reason,
            "plan": self.plan.to_json(),
            "preflight": self.preflight.to_json(),
            "prefetch": self.prefetch,
            "dry_run": self.dry_run.to_json() if self.dry_run else None,
            "notes": list(self.notes),
        }


def estimate_tokens(definition: JsonObject) -> int:
    return math.ceil(len(json.dumps(definition, ensure_ascii=False, separators=(",", ":"))) / 4)


async def dry_run_server(
    name: str,
    config: McpServerConfig,
    *,
    resolved: ResolvedConfig,
    events: EventSink | None = None,
    environ: dict[str, str] | None = None,
) -> DryRunReport:
    """Start the server as Kairox will run it, list its tools, stop it."""
    from kairox._rpc._status import ServerStatus
    from kairox.mcp import ClientFeatures, McpClient, McpToolAdapter

    started = time.monotonic()
    once = config.model_copy(update={"max_restarts": 0, "enabled": True})
    features = ClientFeatures(roots=(resolved.workspace,))
    from kairox.sandbox import ServerConfinement, server_profile

    # as Kairox will run it: confined, under the default profile of a server the user adds
    profile = server_profile(
        "mcp_servers",
        name,
        once,
        layer="user",
        where=None,
        base_dir=resolved.workspace,
        workspace=resolved.workspace,
        home=resolved.home,
    )
    confinement = ServerConfinement(
        profile=profile, sandbox=registry_settings(resolved).sandbox, home=resolved.home, workspace=resolved.workspace
    )
    client = McpClient(
        name,
        once,
        workspace=resolved.workspace,
        home=resolved.home,
        events=events or NullSink(),
        features=features,
        environ=environ,
        confinement=confinement if once.transport == "stdio" else None,
    )
    tools: list[DryRunTool] = []
    async with client:
        if client.status == ServerStatus.READY:
            for spec in await McpToolAdapter(client, resource_tools=False).list_tools():
                tool = str(spec.meta.get("mcp_tool") or spec.name)
                definition = {"name": spec.name, "description": spec.description, "input_schema": spec.input_schema}
                tools.append(DryRunTool(name=tool, description=spec.description, tokens=estimate_tokens(definition)))
        ready = client.status == ServerStatus.READY
        reason = client.reason
        tail = client.stderr_tail
    return DryRunReport(
        ready=ready,
        tools=tuple(tools),
        error=None if ready else reason or "did not reach Ready",
        stderr_tail="" if ready else tail,
        duration_sec=round(time.monotonic() - started, 2),
    )


def prefetch_command(plan: InstallPlan) -> list[str] | None:
    """The command that fetches the package into the runner's cache, so the first start does not download."""
    package = plan.package
    if package is None or package.version is None:
        return None
    if package.registry_type == "npm":
        # the same install `npx -y PKG@VERSION` does (and the same npx cache folder), with a command that ends
        return ["npm", "exec", "--yes", f"--package={package.identifier}@{package.version}", "--", "node", "--version"]
    if package.registry_type == "oci" and plan.table.get("command") in ("docker", "podman"):
        return [str(plan.table["command"]), "pull", f"{package.identifier}:{package.version}"]
    return None


async def _prefetch(
    argv: list[str], workspace: Path, progress: Progress, tick: Tick | None, *, cache: Path | None = None
) -> tuple[bool, str]:
    """``cache``: the npm cache of the server's own state folder, which its confined starts read."""
    from kairox._rpc._process import ChildProcess

    started = time.monotonic()
    progress(InstallStep(stage=InstallStage.FETCH, message=f"fetching the package: {' '.join(argv)}"))
    try:
        env = {**os.environ, **({"npm_config_cache": str(cache)} if cache is not None else {})}
        async with ChildProcess(argv, env=env, cwd=workspace, pipe_stdin=False, pipe_stdout=False) as child:
            code = None
            while time.monotonic() - started < PREFETCH_TIMEOUT_SEC:
                code = await child.wait(1.0)
                if code is not None:
                    break
                if tick is not None:
                    tick(time.monotonic() - started)
            tail = child.stderr.text(1200).strip()
    except OSError as exc:
        return False, f"{argv[0]} could not start: {exc}"
    took = time.monotonic() - started
    if code is None:
        return False, f"{' '.join(argv)} did not finish in {PREFETCH_TIMEOUT_SEC:.0f} s"
    if code != 0:
        return False, f"{' '.join(argv)} exited with code {code}" + (f": {tail.splitlines()[-1]}" if tail else "")
    return True, f"{' '.join(argv)}: done in {took:.1f} s"


def _configured_here(file: Path, name: str) -> bool:
    import tomllib

    try:
        data = tomllib.loads(file.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    servers = data.get("mcp_servers")
    return isinstance(servers, dict) and name in servers


async def install_catalog_entry(
    resolved: ResolvedConfig,
    plan: InstallPlan,
    *,
    approver: Approver,
    options: InstallOptions | None = None,
    events: EventSink | None = None,
    progress: Progress | None = None,
    tick: Tick | None = None,
    report: PreflightReport | None = None,
    environ: dict[str, str] | None = None,
) -> InstallReport:
    """Install ``plan`` into the ``options.layer`` file: pre-flight, ask, fetch, dry run, write, each reported to
    ``progress`` as an :class:`InstallStep`. ``environ`` (the host's environment with the variables a front end
    was given) is what pre-flight checks and the dry run gets; nothing of it is written: the entry refers to the
    variables by name."""
    options = options or InstallOptions()
    sink = events or NullSink()
    say = progress or (lambda step: None)
    file = resolved.layer_file(options.layer)
    say(
        InstallStep(
            stage=InstallStage.PREFLIGHT,
            message=f"checking what {plan.entry.id} {plan.entry.version} needs: {plan.command_line}",
        )
    )
    checked = report or preflight(plan, environ=environ)
    for check in checked.checks:
        say(check_step(check))

    def done(outcome: InstallOutcome, reason: str | None = None, **extra: Any) -> InstallReport:
        result = InstallReport(outcome=outcome, plan=plan, file=file, preflight=checked, reason=reason, **extra)
        tools = len(result.dry_run.tools) if result.dry_run else 0
        sink.emit(
            CatalogInstallFinished(
                entry=plan.entry.id,
                version=plan.entry.version,
                server=plan.name,
                file=str(file),
                outcome=str(outcome),
                tools=tools,
                reason=reason,
            )
        )
        return result

    if checked.runtime_problems:
        missing = "; ".join(f"{c.detail} ({c.fix})" if c.fix else c.detail for c in checked.runtime_problems)
        return done(InstallOutcome.PREFLIGHT_FAILED, missing)
    if _configured_here(file, plan.name):
        return done(
            InstallOutcome.EXISTS,
            f"{file} already has an MCP server named {plan.name!r}; choose another "
            f"with --name or remove it first (`kairox mcp remove {plan.name}`)",
        )

    # the write goes through the gate like any tool's write: a configuration file is protected, so it asks
    arguments: JsonObject = {
        "path": str(file),
        "server": plan.name,
        "entry": plan.entry.id,
        "command": plan.command_line,
    }
    say(
        InstallStep(
            stage=InstallStage.APPROVAL, message=f"the gate decides the write of [mcp_servers.{plan.name}] into {file}"
        )
    )
    engine = PolicyEngine(registry_settings(resolved).policy)
    decision = engine.decide(INSTALL_SPEC, arguments)
    if decision.verdict is Verdict.ASK:
        approvals = SessionApprovals(approver, persist_rule=None, emit=sink.emit)
        decision = await approvals.resolve("catalog-install", INSTALL_SPEC, arguments, decision, engine)
    if decision.verdict is not Verdict.ALLOW:
        return done(InstallOutcome.DENIED, decision.reason)

    fetched = None
    command = prefetch_command(plan) if options.prefetch else None
    if command is not None:
        from kairox.sandbox import server_profile

        # into the cache the server's confined starts use: its own state folder's, not the user's
        layer = "user" if file == resolved.home / "kairox.toml" else "project"
        profile = server_profile(
            "mcp_servers",
            plan.name,
            None,
            layer=layer,
            where=str(file),
            base_dir=file.parent,
            workspace=resolved.workspace,
            home=resolved.home,
        )
        from kairox.sandbox import npm_cache_configured

        cache = (
            None
            if npm_cache_configured() is not None
            else Path(os.path.realpath(resolved.home / "servers" / profile.state_name)) / "cache" / "npm"
        )
        fetched_ok, fetched = await _prefetch(command, resolved.workspace, say, tick, cache=cache)
        say(InstallStep(stage=InstallStage.FETCH, message=fetched, ok=fetched_ok))
    config = McpServerConfig.model_validate(plan.table)
    unset = [c for c in checked.problems if c.kind == "variable"]
    if unset:
        names = ", ".join(c.name for c in unset)
        result = DryRunReport(
            ready=False, error=f"not started: {names} not set ({'; '.join(c.fix or '' for c in unset)})"
        )
    else:
        say(
            InstallStep(
                stage=InstallStage.DRY_RUN,
                message=f"dry run: starting {plan.name!r} as Kairox will run it: {plan.command_line}",
            )
        )
        result = await dry_run_server(plan.name, config, resolved=resolved, events=sink, environ=environ)
    ran = f"dry run: ready, {len(result.tools)} tools" if result.ready else f"dry run: failed: {result.error}"
    say(InstallStep(stage=InstallStage.DRY_RUN, message=ran, ok=result.ready))
    if result.ready:
        CatalogCache(resolved.home).write_tools(plan.entry.id, plan.entry.version, [t.to_json() for t in result.tools])
    if not result.ready and options.require_ready:
        return done(InstallOutcome.NOT_READY, f"the dry run failed: {result.error}", dry_run=result, prefetch=fetched)

    table = dict(plan.table)
    comment = f"from the MCP catalog: {plan.entry.id} {plan.entry.version} (source {plan.entry.source})"
    if not result.ready:
        table["enabled"] = False
        comment += f"\ndisabled: the dry run failed: {' '.join((result.error or '').split())[:300]}"
        comment += f"\nfix it, then set enabled = true (`kairox mcp catalog check {plan.entry.id}` helps)"
    key = join_key(["mcp_servers", plan.name])
    write_own(resolved, file, key, lambda: set_value(file, key, table, comment=comment))
    say(
        InstallStep(
            stage=InstallStage.WRITE,
            message=f"wrote [mcp_servers.{plan.name}] to {file}" + ("" if result.ready else " (disabled)"),
            ok=True,
        )
    )
    notes: list[str] = []
    if options.layer is not Layer.USER and not resolved.trusted:
        notes.append("this workspace is not trusted, so its project servers wait until `kairox trust`")
    outcome = InstallOutcome.INSTALLED if result.ready else InstallOutcome.WRITTEN_DISABLED
    return done(
        outcome,
        None if result.ready else f"the dry run failed: {result.error}",
        dry_run=result,
        prefetch=fetched,
        notes=tuple(notes),
    )
