"""The ToolRegistry: the one gate every tool call passes (R2, R3, R5, R7).

Order of a call: look up; validate the arguments; ``pre_tool_use`` hooks; the policy; approval when the policy
asks; the call under its timeout; ``post_tool_use`` hooks; the output cap; events all along. Problems of the
call (unknown tool, bad arguments, denial, timeout, a provider that raises) come back as a ``ToolResult`` with
``is_error`` and a message the model can read; ``call`` never raises for them.
"""

import asyncio
import contextvars
import fnmatch
import json
import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from kairox._util._files import open_private, private_folder
from kairox._util._json import JsonObject
from kairox._util._names import suggest
from kairox.config import ApprovalPolicy, SandboxPolicy
from kairox.errors import Diagnostic, ExtensionLoadFailure, KairoxError
from kairox.events import EventSink, NullSink
from kairox.policy import (
    Approver,
    Decision,
    DecisionSource,
    PolicyEngine,
    PolicySettings,
    RuleRef,
    Verdict,
    starts_sandboxed,
)
from kairox.registry._adapters import (
    ADAPTERS,
    ModelProvider,
    SchemaAdapterError,
    drop_model_nulls,
    wire_name,
    wire_names,
)
from kairox.registry._approvals import PersistRule, SessionApprovals
from kairox.registry._events import ToolCallFinished, ToolCallRequested, ToolsChanged, decided_event, event_arguments
from kairox.registry._validation import ArgumentValidator, schema_validator
from kairox.sandbox import SandboxSettings
from kairox.tools import (
    Access,
    CallContext,
    EmbeddedResource,
    TextContent,
    ToolCall,
    ToolHooks,
    ToolProvider,
    ToolResult,
    ToolSource,
    ToolSpec,
)

_SOURCE_RANK = {
    ToolSource.BUILTIN: 0,
    ToolSource.PLUGIN: 1,
    ToolSource.SKILL: 2,
    ToolSource.MCP: 3,
    ToolSource.LSP: 4,
    ToolSource.DAP: 5,
}
"""Who keeps a name two sources both claim: built-ins first, then by source, then by origin name."""


def renamed_diagnostic(name: str, wire: str, client: str) -> Diagnostic:
    """A tool offered under another wire name because its plain one was taken."""
    return Diagnostic(
        kind="tool",
        name=name,
        source=client,
        reason=f"its wire name {wire_name(name)!r} is already used by another tool; {client} sees it as {wire!r}",
        hint="rename or disable one of the two tools to get the plain name back",
    )


@dataclass(frozen=True, kw_only=True, slots=True)
class RegistrySettings:
    policy: PolicySettings
    sandbox: SandboxSettings = field(default_factory=SandboxSettings)
    disabled: tuple[str, ...] = ()
    """Tool names or ``*`` patterns hidden from the model (``tools.disabled``)."""
    default_timeout_sec: float = 120.0
    output_limit_chars: int = 30_000
    spill_dir: Path | None = None


@dataclass(slots=True)
class _Entry:
    """One tool and its plan: what every call of it needs, worked out when the tools or the settings change
    (never per call). ``_rebuild`` makes new entries for both, so nothing here outlives what it was made from."""

    spec: ToolSpec
    provider: ToolProvider
    validator: ArgumentValidator | None
    unsafe: str | None
    hidden: str | None = None
    """Why the model does not see it."""
    timeout: float = 0.0
    """The spec's own timeout, else the registry's default."""
    unreadable: Callable[[Path], str | None] | None = None
    """The read filter by the rules' paths (``_read_filter``), or None when no rule could refuse a read; each call
    gets it with the checks for other names and hidden histories added (``_call_filter``)."""


CALL_APPROVALS: contextvars.ContextVar[SessionApprovals] = contextvars.ContextVar("kairox_call_approvals")
"""The grants and approver of the call running now: a tool that runs calls of its own (``task``) passes them on."""


class ToolRegistry:
    def __init__(
        self,
        settings: RegistrySettings,
        *,
        approver: Approver,
        hooks: ToolHooks | None = None,
        events: EventSink | None = None,
        persist_rule: PersistRule | None = None,
    ) -> None:
        self.hooks = hooks
        self.events: EventSink = events or NullSink()
        self.approvals = SessionApprovals(
            approver, persist_rule=persist_rule, emit=lambda event: self.events.emit(event)
        )
        self._providers: dict[str, ToolProvider] = {}
        self._specs: dict[str, tuple[ToolSpec, ...]] = {}
        self._load_failures: dict[str, list[Diagnostic]] = {}
        self._index_diagnostics: list[Diagnostic] = []
        self._entries: dict[str, _Entry] = {}
        self._visible: tuple[dict[str, _Entry], tuple[ToolSpec, ...]] | None = None
        self._wire: tuple[dict[str, _Entry], dict[str, str]] | None = None
        self._planned_with: PolicyEngine | None = None
        """The policy the entries' plans (hidden, read filter) were made with; another policy plans them again."""
        self._validators: dict[tuple[str, str], tuple[ToolSpec, ArgumentValidator | None, str | None]] = {}
        self._calls = 0
        self.settings = settings

    @property
    def settings(self) -> RegistrySettings:
        return self._settings

    @settings.setter
    def settings(self, settings: RegistrySettings) -> None:
        """New settings take effect at once: a new policy engine (its cached decisions go with the old one) and
        every tool's plan made again."""
        policy = PolicyEngine(settings.policy)
        if settings.sandbox.hidden is None and policy.read_mask is not None:
            # commands must not read what fs.read rules forbid: their
            # sandbox hides it (also when settings were made by hand)
            settings = replace(settings, sandbox=replace(settings.sandbox, hidden=policy.read_mask))
        self._settings = settings
        self.policy = policy
        self._engines: dict[ApprovalPolicy, PolicyEngine] = {settings.policy.approval: self.policy}
        self._rebuild()

    def narrowed(
        self,
        keep: Callable[[ToolSpec], bool],
        *,
        approvals: SessionApprovals,
        hooks: ToolHooks | None,
        events: EventSink,
    ) -> "ToolRegistry":
        """A gate for a subagent: the same settings (rules, sandbox, limits) over the visible tools ``keep`` keeps,
        served by the same providers, with the subagent's own grants, hooks and events."""
        child = ToolRegistry(self._settings, approver=approvals.approver, hooks=hooks, events=events)
        child.approvals = approvals
        for spec in self.visible_tools():
            if keep(spec):
                origin = self._entries[spec.name].provider.origin
                child._providers[origin] = self._providers[origin]
                child._specs[origin] = (*child._specs.get(origin, ()), spec)
        child._rebuild()
        return child

    def session_approvals(self, approver: Approver) -> SessionApprovals:
        """Grants and an approver for one more session sharing this registry (a client of ``kairox serve``)."""
        return SessionApprovals(
            approver, persist_rule=self.approvals.persist_rule, emit=lambda event: self.events.emit(event)
        )

    # --- registration ----------------------------------------------------------------------------------------

    async def add_provider(self, provider: ToolProvider) -> None:
        """List the provider's tools and register them; its later tools-changed notices replace them at once.

        A provider whose listing fails is recorded as a load failure and contributes no tools.
        """
        await self.add_providers([provider])

    async def add_providers(self, providers: Sequence[ToolProvider]) -> None:
        """``add_provider`` for several at once, with one rebuild (fifty MCP servers need not plan the tools of
        the first one fifty times)."""
        listed: list[tuple[str, int]] = []
        for provider in providers:
            origin = provider.origin
            self._providers[origin] = provider
            provider.on_tools_changed(self._on_tools_changed)
            try:
                specs = tuple(await provider.list_tools())
            except Exception as exc:
                self._load_failures[origin] = [
                    ExtensionLoadFailure(
                        kind="tool_provider",
                        name=origin,
                        reason=f"listing its tools failed: {exc}",
                        source=origin,
                        hint="the tools of this source are left out; see its own diagnostics",
                    )
                ]
                self._specs[origin] = ()
                continue
            self._load_failures.pop(origin, None)
            self._specs[origin] = specs
            listed.append((origin, len(specs)))
        self._rebuild()
        for origin, count in listed:
            self.events.emit(ToolsChanged(origin=origin, tools=count))

    async def _on_tools_changed(self, provider: ToolProvider, specs: Sequence[ToolSpec]) -> None:
        if self._providers.get(provider.origin) is provider:
            self.replace_origin(provider.origin, specs)

    def replace_origin(self, origin: str, specs: Sequence[ToolSpec]) -> None:
        """Replace every tool of ``origin`` with ``specs`` in one step (for ``list_changed``)."""
        if origin not in self._providers:
            raise KairoxError(f"no tool provider with origin {origin!r} is registered", hint="call add_provider first")
        self._specs[origin] = tuple(specs)
        self._rebuild()
        self.events.emit(ToolsChanged(origin=origin, tools=len(specs)))

    def _rebuild(self) -> None:
        candidates: list[tuple[int, str, ToolSpec]] = []
        for origin, specs in self._specs.items():
            for spec in specs:
                candidates.append((_SOURCE_RANK.get(spec.source, 9), origin, spec))
        candidates.sort(key=lambda candidate: candidate[:2])  # stable: each origin keeps its own order
        entries: dict[str, _Entry] = {}
        diagnostics: list[Diagnostic] = []
        # looked up once, not once per tool (fifty servers have thousands)
        providers, planned = self._providers, self._entries if self._planned_with is self.policy else {}
        default_timeout = self.settings.default_timeout_sec
        for _, origin, spec in candidates:
            kept = entries.get(spec.name)
            if kept is not None:
                diagnostics.append(
                    Diagnostic(
                        kind="tool",
                        name=spec.name,
                        source=origin,
                        reason=(
                            f"tool name {spec.name!r} is provided by both {kept.provider.origin}"
                            f" and {origin}; the one from {kept.provider.origin} is kept"
                        ),
                        hint=f"disable one of them (tools.disabled or the {origin} settings)",
                    )
                )
                continue
            provider = providers[origin]
            previous = planned.get(spec.name)
            if previous is not None and previous.spec is spec and previous.provider is provider:
                # the same tool under the same policy: its plan stands (adding 50 servers one by one stays linear)
                if previous.unsafe is not None:
                    diagnostics.append(
                        ExtensionLoadFailure(
                            kind="tool",
                            name=spec.name,
                            source=origin,
                            reason=previous.unsafe,
                            hint="the tool is left out until its provider fixes the schema",
                        )
                    )
                entries[spec.name] = previous
                continue
            validator, unsafe = self._validator(origin, spec)
            if unsafe is not None:
                diagnostics.append(
                    ExtensionLoadFailure(
                        kind="tool",
                        name=spec.name,
                        source=origin,
                        reason=unsafe,
                        hint="the tool is left out until its provider fixes the schema",
                    )
                )
            entry = _Entry(spec=spec, provider=provider, validator=validator, unsafe=unsafe)
            entry.hidden = self._hidden(entry)
            entry.timeout = spec.timeout_sec or default_timeout
            entry.unreadable = self._read_filter(spec)
            entries[spec.name] = entry
        self._entries = entries  # swapped whole: readers never see a half-replaced origin
        self._planned_with = self.policy
        self._index_diagnostics = diagnostics + self.policy.argument_diagnostics(e.spec for e in entries.values())

    def _validator(self, origin: str, spec: ToolSpec) -> tuple[ArgumentValidator | None, str | None]:
        cached = self._validators.get((origin, spec.name))
        if cached is not None and cached[0] is spec:
            return cached[1], cached[2]
        validator, unsafe = schema_validator(spec.input_schema)
        self._validators[(origin, spec.name)] = (spec, validator, unsafe)
        return validator, unsafe

    # --- queries ---------------------------------------------------------------------------------------------

    def get(self, name: str) -> ToolSpec | None:
        entry = self._entries.get(name)
        return entry.spec if entry else None

    def tools(self) -> list[ToolSpec]:
        """Every registered tool (also hidden ones), sorted by name."""
        return [self._entries[name].spec for name in sorted(self._entries)]

    def hidden_reason(self, name: str) -> str | None:
        """Why the model does not see this tool, or None when it does."""
        entry = self._entries.get(name)
        return "not registered" if entry is None else entry.hidden

    def _hidden(self, entry: _Entry) -> str | None:
        if entry.unsafe is not None:
            return entry.unsafe
        for pattern in self.settings.disabled:
            if fnmatch.fnmatchcase(entry.spec.name, pattern):
                return f"disabled by tools.disabled ({pattern!r})"
        rule = self.policy.denied_by_name(entry.spec)
        if rule is not None:
            return f"denied by {rule}"
        return None

    def visible_tools(self) -> list[ToolSpec]:
        """The tools the model may see: failed, disabled, denied-by-name and unsafe ones left out (a new list,
        worked out once per set of entries: ``_rebuild`` replaces them whole on every change)."""
        entries = self._entries
        if self._visible is None or self._visible[0] is not entries:
            self._visible = (entries, tuple(entries[n].spec for n in sorted(entries) if entries[n].hidden is None))
        return list(self._visible[1])

    @property
    def diagnostics(self) -> list[Diagnostic]:
        found: list[Diagnostic] = list(self.policy.diagnostics)
        for origin, provider in self._providers.items():
            found += self._load_failures.get(origin, [])
            found += provider.diagnostics
        return found + self._index_diagnostics + self.approvals.diagnostics

    def definitions(self, provider: ModelProvider | str) -> tuple[list[JsonObject], list[Diagnostic]]:
        """The visible tools as ``provider`` expects them; tools whose schema cannot be adapted are left out,
        tools whose wire names collide are renamed (``wire_names``) and reported."""
        adapter = ADAPTERS[ModelProvider(provider)]
        out: list[JsonObject] = []
        problems: list[Diagnostic] = []
        visible = self.visible_tools()
        names = wire_names(spec.name for spec in visible)
        for spec in visible:
            name = names[spec.name]
            if name != wire_name(spec.name):
                problems.append(renamed_diagnostic(spec.name, name, str(provider)))
            try:
                out.append(adapter(replace(spec, name=name)))
            except SchemaAdapterError as exc:
                problems.append(
                    ExtensionLoadFailure(
                        kind="tool",
                        name=spec.name,
                        source=spec.origin,
                        reason=exc.message,
                        hint=f"the tool is left out for {provider}",
                    )
                )
        return out, problems

    def wire_names(self) -> dict[str, str]:
        """The visible tools' registry names -> their unique wire names (what models and MCP clients see); worked
        out once per set of entries, like ``visible_tools``."""
        entries = self._entries
        if self._wire is None or self._wire[0] is not entries:
            self._wire = (entries, wire_names(spec.name for spec in self.visible_tools()))
        return dict(self._wire[1])

    def from_wire_name(self, name: str) -> str | None:
        """The registry name of a tool the model called by its wire name (``fs_read`` -> ``fs.read``)."""
        for registry_name, wire in self.wire_names().items():
            if wire == name:
                return registry_name
        return name if name in self._entries else None

    async def call_from_model(
        self,
        provider: ModelProvider | str,
        wire: str,
        arguments: JsonObject | str | None,
        *,
        call_id: str = "",
        approval: ApprovalPolicy | None = None,
        approvals: SessionApprovals | None = None,
    ) -> ToolResult:
        """A call as a model sent it: the wire name mapped back, the arguments as they came (an object, the JSON
        text of one as OpenAI sends it, or nothing), and (OpenAI strict) the nulls of optional properties it had to
        send removed, then through the gate like any call. Arguments that are not an object are the model's
        error, said in the result; nothing raises."""
        name = self.from_wire_name(wire) or wire
        if arguments is None or arguments == "":
            arguments = {}
        elif isinstance(arguments, str):
            try:
                arguments = json.loads(arguments)
            except ValueError as exc:
                return ToolResult.error(f"the arguments of {name} are not valid JSON ({exc}); send a JSON object")
        if not isinstance(arguments, dict):
            return ToolResult.error(
                f"the arguments of {name} must be a JSON object, not {type(arguments).__name__}; send an object"
            )
        spec = self.get(name)
        if spec is not None and ModelProvider(provider) is ModelProvider.OPENAI:
            arguments = drop_model_nulls(spec.input_schema, dict(arguments))
        return await self.call(
            ToolCall(name=name, arguments=arguments, call_id=call_id), approval=approval, approvals=approvals
        )

    def check(
        self,
        name: str,
        arguments: JsonObject | None = None,
        *,
        approval: ApprovalPolicy | None = None,
        policy: PolicyEngine | None = None,
    ) -> Decision:
        """What the policy (or ``policy``) would decide for this call, without hooks, approval or the call."""
        entry = self._entries.get(name)
        if entry is None:
            return Decision.deny(self._unknown(name), source=DecisionSource.REGISTRY)
        hidden = self.hidden_reason(name)
        if hidden is not None and self.policy.denied_by_name(entry.spec) is None:
            return Decision.deny(f"{name} is not available: {hidden}", source=DecisionSource.REGISTRY)
        return (policy or self._engine(approval)).decide(entry.spec, arguments or {})

    def _engine(self, approval: ApprovalPolicy | None) -> PolicyEngine:
        if approval is None:
            return self.policy
        engine = self._engines.get(approval)
        if engine is None:
            engine = PolicyEngine(replace(self.settings.policy, approval=approval))
            self._engines[approval] = engine
        return engine

    def _unknown(self, name: str) -> str:
        close = suggest(name, self._entries)
        return f"no tool named {name!r}" + (
            f"; did you mean {close!r}?" if close else "; `kairox tools list` shows the tools"
        )

    # --- the gate --------------------------------------------------------------------------------------------

    async def call(
        self,
        call: ToolCall,
        *,
        approval: ApprovalPolicy | None = None,
        approvals: SessionApprovals | None = None,
        policy: PolicyEngine | None = None,
    ) -> ToolResult:
        """Pass one call through the gate. ``approvals`` holds the grants and the approver of the session the
        call belongs to (a server with many clients passes one per client); the registry's own by default.
        ``policy`` decides this call instead of the registry's (a gateway user's rules merged with it)."""
        self._calls += 1
        call_id = call.call_id or f"call-{self._calls}"
        waited = [0.0]  # seconds spent waiting for the person's answer: not the call's duration
        started = time.perf_counter()
        self.events.emit(ToolCallRequested(call_id=call_id, tool=call.name, arguments=event_arguments(call.arguments)))
        approvals = approvals or self.approvals
        token = CALL_APPROVALS.set(approvals)
        try:
            result, spilled = await self._gate(call, call_id, approval, approvals, waited, policy)
        except Exception as exc:  # a fault in the gate itself: report it to the model, do not end the turn
            result, spilled = (
                ToolResult.error(
                    f"{call.name} was not completed: internal error in the tool gate: {type(exc).__name__}: {exc}"
                ),
                None,
            )
        finally:
            CALL_APPROVALS.reset(token)
        error = result.text_content()[:500] if result.is_error else None
        self.events.emit(
            ToolCallFinished(
                call_id=call_id,
                tool=call.name,
                duration_ms=round((time.perf_counter() - started - waited[0]) * 1000, 3),
                approval_wait_ms=round(waited[0] * 1000, 3),
                size_chars=text_size(result),
                is_error=result.is_error,
                error=error,
                spilled_to=None if spilled is None else str(spilled),
            )
        )
        return result

    async def _gate(
        self,
        call: ToolCall,
        call_id: str,
        approval: ApprovalPolicy | None,
        approvals: SessionApprovals,
        waited: list[float],
        policy: PolicyEngine | None,
    ) -> tuple[ToolResult, Path | None]:
        """The call through hooks, policy, approval and the tool; the time spent asking the person is added to
        ``waited[0]`` (seconds)."""
        entry = self._entries.get(call.name)
        if entry is None:
            return self._refuse(
                call_id, call.name, Decision.deny(self._unknown(call.name), source=DecisionSource.REGISTRY)
            ), None
        spec = entry.spec
        hooks = self.hooks
        hidden = entry.hidden
        if hidden is not None:
            rule = self.policy.denied_by_name(spec)
            decision = Decision.deny(
                f"{call.name} is not available: {hidden}",
                source=DecisionSource.RULE if rule else DecisionSource.REGISTRY,
                rule=rule,
            )
            return self._refuse(call_id, call.name, decision), None
        if not isinstance(call.arguments, dict):
            return ToolResult.error(
                f"the arguments of {call.name} must be an object, not {type(call.arguments).__name__}"
            ), None
        arguments = dict(call.arguments)
        problem = self._invalid(entry, arguments)  # explained only when the fast check fails
        if problem is not None:
            return ToolResult.error(problem), None
        hook, hook_reason = None, None
        if hooks is not None and hooks.listens_pre_tool_use(call.name):  # no matching hook: no payload, no task group
            try:
                outcome = await hooks.pre_tool_use(call, spec)
            except Exception as exc:  # fail closed: a broken hook must not wave a call through
                return self._refuse(
                    call_id,
                    call.name,
                    Decision.deny(f"the pre_tool_use hooks failed: {exc}", source=DecisionSource.HOOK),
                ), None
            hook, hook_reason = outcome.decision, outcome.reason
            if outcome.updated_input is not None:
                arguments = dict(outcome.updated_input)
                problem = self._invalid(entry, arguments)
                if problem is not None:
                    return ToolResult.error(
                        f"a pre_tool_use hook changed the arguments into invalid ones: {problem}"
                    ), None
                call = replace(call, arguments=arguments)
        engine = policy or (self.policy if approval is None else self._engine(approval))
        decision = engine.decide(spec, arguments, hook=hook, hook_reason=hook_reason)
        self.events.emit(decided_event(call_id, call.name, decision))
        approved: frozenset[RuleRef] = frozenset()
        if decision.verdict is Verdict.ASK:
            asked = time.perf_counter()
            decision = await approvals.resolve(call_id, spec, arguments, decision, engine)
            waited[0] += time.perf_counter() - asked
            if decision.verdict is Verdict.ALLOW and entry.unreadable is not None:
                # the person's yes answers every ask rule on this call: none may refuse it again as a read
                approved = engine.approved_rules(spec, arguments)
        if decision.verdict is not Verdict.ALLOW:
            return self._denied_result(call.name, decision), None
        result = await self._invoke(entry, call.name, arguments, call_id, approved=approved)
        if result.is_error and engine.settings.approval is ApprovalPolicy.ON_FAILURE and self._sandboxed(spec):
            asked = time.perf_counter()
            escalated = await approvals.escalate(call_id, spec, arguments, self.settings.sandbox.mode, engine)
            waited[0] += time.perf_counter() - asked
            if escalated:
                result = await self._invoke(
                    entry,
                    call.name,
                    arguments,
                    call_id,
                    sandbox=SandboxSettings(mode=SandboxPolicy.DANGER_FULL_ACCESS),
                    approved=approved,
                )
        if hooks is not None and hooks.listens_post_tool_use(call.name):
            result = await self._post_hooks(call, spec, result)
        settings = self._settings
        return cap_output(
            result, limit=settings.output_limit_chars, spill_dir=settings.spill_dir, tool=call.name, call_id=call_id
        )

    def _invalid(self, entry: _Entry, arguments: JsonObject) -> str | None:
        if entry.validator is None:
            return None
        error = entry.validator.error(arguments)
        if error is None:
            return None
        where = "arguments" + "".join(f"[{p!r}]" if isinstance(p, str) else f"[{p}]" for p in error.absolute_path)
        missing = [repr(k) for k in entry.spec.input_schema.get("required", ()) if k not in arguments]
        also = f"; required and missing: {', '.join(missing)}" if missing and error.validator != "required" else ""
        return f"invalid arguments for {entry.spec.name}: {where}: {error.message}{also}"

    def _sandboxed(self, spec: ToolSpec) -> bool:
        """Whether the call started its programs under the OS sandbox (so a retry outside it means something)."""
        return self.settings.sandbox.mode is not SandboxPolicy.DANGER_FULL_ACCESS and starts_sandboxed(spec)

    async def _invoke(
        self,
        entry: _Entry,
        name: str,
        arguments: JsonObject,
        call_id: str,
        *,
        sandbox: SandboxSettings | None = None,
        approved: frozenset[RuleRef] = frozenset(),
    ) -> ToolResult:
        settings = self._settings
        context = CallContext(
            call_id=call_id,
            workspace=settings.policy.workspace,
            sandbox=sandbox or settings.sandbox,
            unreadable=self._call_filter(entry, approved),
        )
        try:
            async with asyncio.timeout(entry.timeout):
                result = await entry.provider.call_tool(name, arguments, context)
        except TimeoutError:
            return ToolResult.error(f"{name} timed out after {entry.timeout:g}s and was cancelled")
        except KairoxError as exc:
            return ToolResult.error(str(exc))
        except Exception as exc:
            return ToolResult.error(f"{name} failed: {type(exc).__name__}: {exc}")
        if not isinstance(result, ToolResult):
            return ToolResult.error(f"{name} returned {type(result).__name__} instead of a ToolResult")
        return result

    def _read_filter(self, spec: ToolSpec) -> Callable[[Path], str | None] | None:
        """For a tool that reads files (the paths it is given, or files its server names in results): the rules on
        reading, applied to every file it finds or shows."""
        profile = spec.permission
        reads_paths = bool(profile.path_args) and (profile.access is Access.READ or profile.reads)
        # language servers and debug adapters name files in their results (locations, stack frames) that are read here
        if (not reads_paths and spec.source not in (ToolSource.LSP, ToolSource.DAP)) or not self.policy.refuses_reads(
            spec
        ):
            return None  # no rule could refuse a read: no filter, and no extra work per file or per hover

        def unreadable(path: Path) -> str | None:
            rule = self.policy.read_refusal(spec, path)
            return None if rule is None else str(rule)

        return unreadable

    def _call_filter(
        self, entry: _Entry, approved: frozenset[RuleRef] = frozenset()
    ) -> Callable[[Path], str | None] | None:
        """The entry's read filter for one call, also refusing what no rule names but the rules on reading hide all
        the same (another name of a hidden file, a hidden history), worked out once per call when met; the ask
        rules the person ``approved`` for this call refuse nothing."""
        named = entry.unreadable
        if named is None:
            return None
        if approved:
            spec, policy = entry.spec, self.policy

            def named(path: Path) -> str | None:
                rule = policy.read_refusal(spec, path, approved=approved)
                return None if rule is None else str(rule)

        elsewhere = self.policy.reads_elsewhere()
        if elsewhere is None:
            return named

        def unreadable(path: Path) -> str | None:
            return named(path) or elsewhere(path)

        return unreadable

    async def _post_hooks(self, call: ToolCall, spec: ToolSpec, result: ToolResult) -> ToolResult:
        assert self.hooks is not None
        try:
            outcome = await self.hooks.post_tool_use(call, spec, result)
        except Exception as exc:
            return replace(result, content=(*result.content, TextContent(text=f"[post_tool_use hooks failed: {exc}]")))
        extra: list[TextContent] = []
        if outcome.block_reason:
            extra.append(TextContent(text=f"[post_tool_use hook: {outcome.block_reason}]"))
        if outcome.additional_context:
            extra.append(TextContent(text=outcome.additional_context))
        return replace(result, content=(*result.content, *extra))

    # --- outcomes --------------------------------------------------------------------------------------------

    def _refuse(self, call_id: str, tool: str, decision: Decision) -> ToolResult:
        self.events.emit(decided_event(call_id, tool, decision))
        return self._denied_result(tool, decision)

    @staticmethod
    def _denied_result(tool: str, decision: Decision) -> ToolResult:
        where = f" ({decision.where})" if decision.where and decision.where not in decision.reason else ""
        text = f"{tool} was not run: {decision.reason}{where}"
        return ToolResult(content=(TextContent(text=text),), is_error=True, meta={"decision": decision.to_json()})


# --- the output cap (R5): a result longer than the limit is spilled to a file whose path it then names ----------

_SAFE = re.compile(r"[^A-Za-z0-9_.-]")


def text_size(result: ToolResult) -> int:
    size = 0
    for part in result.content:
        if isinstance(part, TextContent | EmbeddedResource):
            size += len(part.text or "")
    return size


def cap_output(
    result: ToolResult, *, limit: int, spill_dir: Path | None, tool: str, call_id: str
) -> tuple[ToolResult, Path | None]:
    """``result`` unchanged when within ``limit`` characters; else its text cut to the limit with a note saying
    where the whole text was written (or that it was dropped, when it could not be written)."""
    size = text_size(result)
    if size <= limit:
        return result, None
    full = result.text_content()
    spilled: Path | None = None
    problem = ""
    if spill_dir is not None:
        try:
            private_folder(spill_dir)
            stamp = time.strftime("%Y%m%d-%H%M%S")
            name = _SAFE.sub("_", f"{stamp}-{tool}-{call_id or 'call'}")[:120]
            spilled = spill_dir / f"{name}.txt"
            counter = 1
            while spilled.exists():
                spilled = spill_dir / f"{name}-{counter}.txt"
                counter += 1
            with open_private(spilled, "w", encoding="utf-8") as handle:
                handle.write(full)
        except OSError as exc:
            spilled, problem = None, f" (it could not be written to {spill_dir}: {exc.strerror or exc})"
    if spilled is not None:
        note = (
            f"\n[output truncated: {size} characters, limit {limit}; the full "
            f"output is in {spilled}; read it with fs.read and a line range]"
        )
    else:
        note = f"\n[output truncated: {size} characters, limit {limit}; the rest was dropped{problem}]"
    keep = max(limit - len(note), 0)
    others = tuple(
        p
        for p in result.content
        if not isinstance(p, TextContent | EmbeddedResource) or (isinstance(p, EmbeddedResource) and p.text is None)
    )
    where = {} if spilled is None else {"spilled_to": str(spilled)}
    meta = {**result.meta, "truncated": True, "original_chars": size, **where}
    shown = full[:keep] + note
    structured = result.structured
    if structured is not None:
        # the structured form is cut with the text (it carries the same payload): the cut text and the
        # result's numbers and flags, so a host that shows only structuredContent sees what the text shows
        structured = {k: v for k, v in structured.items() if v is None or isinstance(v, bool | int | float)}
        structured.update(text=shown, output_truncated=True, original_chars=size, **where)
    capped = replace(result, content=(TextContent(text=shown), *others), structured=structured, meta=meta)
    return capped, spilled
