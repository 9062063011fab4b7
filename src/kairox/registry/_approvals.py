"""What happens when the policy says ``ask``: a session grant, or the Approver, and "always" saved as a rule.

Grants are exact. A session grant covers the call that was approved (same tool, same arguments) or the rule
the person picked from the offered grants, and it is bound to the tool definition's fingerprint, so a tool
redefined under the same name asks again. Asks that come from an explicit ask rule, a protected path, a hook, a
command the parser cannot see or arguments the policy could not read all of are asked every time: no grant
silences them.
"""

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from kairox._util._json import JsonObject
from kairox.config import SandboxPolicy
from kairox.errors import Diagnostic, KairoxError, Severity
from kairox.events import Event
from kairox.policy import (
    ApprovalAnswer,
    ApprovalRequest,
    ApprovalScope,
    Approver,
    Decision,
    DecisionSource,
    GrantOption,
    ParsedRule,
    PolicyEngine,
    Rule,
    RuleLayer,
    parse_rule,
)
from kairox.registry._events import ToolCallApprovalAnswered, decided_event
from kairox.tools import ToolSpec

PersistRule = Callable[[str, RuleLayer], None]
"""Writes an allow rule into a config layer (what an "always" approval does)."""


class RuleNotSavedError(KairoxError):
    """A rule writer was asked to write a layer it does not write (a project file of an untrusted workspace)."""

    def __init__(self, rule: str, layer: RuleLayer, reason: str, *, hint: str | None = None) -> None:
        super().__init__(
            f"the allow rule {rule!r} was not saved in the {layer} layer: {reason}; it holds for this session",
            hint=hint
            or f"trust the workspace (`kairox trust`) and answer again, or save it in the {RuleLayer.USER} layer",
        )
        self.rule, self.layer, self.reason = rule, layer, reason


@dataclass(frozen=True, slots=True)
class RuleWriter:
    """A :data:`PersistRule` that says which layers it will not write, and why: those layers are not offered, and
    an "always" answer naming one is granted for the session only. It refuses them itself too, so nothing reaches
    ``write`` for them."""

    write: PersistRule
    refused: Mapping[RuleLayer, str] = field(default_factory=dict)
    """Each layer it does not write, with the reason the person is told."""
    hints: Mapping[RuleLayer, str] = field(default_factory=dict)
    """What to do instead, for a refused layer where trusting the workspace would not help."""

    def __call__(self, rule: str, layer: RuleLayer) -> None:
        if layer in self.refused:
            raise RuleNotSavedError(rule, layer, self.refused[layer], hint=self.hints.get(layer))
        self.write(rule, layer)


_GRANTABLE = frozenset({DecisionSource.MODE, DecisionSource.SANDBOX})
"""Asks a grant may answer: those that come from the tool's profile against the modes. An explicit ask rule, a
protected path, a hook and a command the parser cannot see ask every time."""


@dataclass(frozen=True, slots=True)
class _Grant:
    tool: str
    fingerprint: str
    rule: ParsedRule | None
    """The picked rule; None for the exact call."""
    arguments: str | None
    """The exact call's arguments, canonical JSON; None for a rule grant."""
    paths: tuple[str, ...] = ()
    """The files the exact call named, resolved when it was approved: the same arguments naming other files
    (a symlink re-pointed since) are another call."""


def _canonical(arguments: JsonObject) -> str:
    return json.dumps(arguments, sort_keys=True, ensure_ascii=False, default=str)


def _resolved(spec: ToolSpec, arguments: JsonObject, engine: PolicyEngine) -> tuple[str, ...]:
    return tuple(map(str, engine.call_paths(spec, arguments)))


class SessionApprovals:
    """Answers ``ask`` decisions for one session: from this session's grants, else by asking the Approver.

    A registry holds one for its own calls; a front end that serves several people (``kairox serve``) passes one
    per client session to ``ToolRegistry.call``.
    """

    def __init__(
        self,
        approver: Approver,
        *,
        persist_rule: PersistRule | None,
        emit: Callable[[Event], None],
        parent: "SessionApprovals | None" = None,
    ) -> None:
        self.approver = approver
        self.persist_rule = persist_rule
        self._emit = emit
        self.parent = parent
        """A subagent's grants: the session's (``parent``) answer its calls too, and a grant its person gives for
        the whole session goes there; its own end with it."""
        self.grants: list[_Grant] = []
        self.diagnostics: list[Diagnostic] = []

    def granted(self, spec: ToolSpec, arguments: JsonObject, engine: PolicyEngine) -> _Grant | None:
        if self.parent is not None and (found := self.parent.granted(spec, arguments, engine)) is not None:
            return found
        fingerprint = spec.fingerprint()
        key: str | None = None
        for grant in self.grants:
            if grant.tool != spec.name or grant.fingerprint != fingerprint:
                continue
            if grant.rule is None:
                key = key or _canonical(arguments)
                if grant.arguments == key and grant.paths == _resolved(spec, arguments, engine):
                    return grant
            elif engine.matches_any([grant.rule], spec, arguments) is not None:
                return grant
        return None

    def request_for(
        self, call_id: str, spec: ToolSpec, arguments: JsonObject, decision: Decision, engine: PolicyEngine
    ) -> ApprovalRequest:
        """The question a person is asked about this call: why, and what each grant would cover."""
        grantable = decision.source in _GRANTABLE
        options: list[GrantOption] = []
        if grantable:
            options = _grant_options(spec, arguments, engine)
        persistable = grantable and decision.source is DecisionSource.MODE and self.persist_rule is not None
        persist_options = [o for o in options if o.persistable] if persistable else []
        command = engine.command_line(spec, arguments)
        return ApprovalRequest(
            tool=spec.name,
            arguments=arguments,
            reason=decision.reason,
            rule=persist_options[0].rule if persist_options else None,
            call_id=call_id,
            source=str(decision.source),
            asked_by=None if decision.rule is None else str(decision.rule),
            command=command,
            grants=tuple(options),
            layers=self._layers() if persist_options else (),
            targets=engine.path_targets(spec, arguments),
        )

    def _layers(self) -> tuple[RuleLayer, ...]:
        """The layers an "always" answer may write: every one the rule writer does not refuse."""
        refused = self.persist_rule.refused if isinstance(self.persist_rule, RuleWriter) else {}
        return tuple(layer for layer in RuleLayer if layer not in refused)

    async def resolve(
        self,
        call_id: str,
        spec: ToolSpec,
        arguments: JsonObject,
        decision: Decision,
        engine: PolicyEngine,
    ) -> Decision:
        """Turn an ``ask`` into ``allow`` or ``deny``; emits the decided (and answered) events."""
        if decision.source in _GRANTABLE:
            grant = self.granted(spec, arguments, engine)
            if grant is not None:
                what = "this exact call" if grant.rule is None else grant.rule.ref.pattern
                granted = Decision.allow(f"approved earlier in this session ({what})", source=DecisionSource.SESSION)
                self._emit(decided_event(call_id, spec.name, granted))
                return granted
        request = self.request_for(call_id, spec, arguments, decision, engine)
        try:
            answer = await self.approver.request_approval(request)
        except Exception as exc:
            answer = ApprovalAnswer.deny(f"the approver failed: {exc}")
        scope, persisted, reason = ApprovalScope.ONCE, None, answer.reason
        if answer.approved and answer.scope is not ApprovalScope.ONCE:
            option = _chosen(request, answer)
            if option is not None:  # a grant the request did not offer is never given: the answer counts once
                scope = answer.scope
                wide = answer.whole_session or answer.scope is ApprovalScope.ALWAYS
                keeper = self.parent if wide and self.parent is not None else self
                keeper._remember(spec, arguments, option, engine)
                if answer.scope is ApprovalScope.ALWAYS:
                    if option.persistable and answer.layer in request.layers:
                        persisted = self._persist(option.rule, answer.layer)
                    else:  # "always" was not offered for this grant or layer: it holds for the session
                        scope = ApprovalScope.SESSION
                        if option.persistable:
                            reason = reason or self._not_saved(option.rule, answer.layer)
        self._emit(
            ToolCallApprovalAnswered(
                call_id=call_id,
                tool=spec.name,
                approved=answer.approved,
                scope=str(scope),
                reason=reason,
                persisted_rule=persisted,
            )
        )
        if answer.approved:
            final = Decision.allow(
                f"approved ({scope}): {decision.reason}", source=DecisionSource.APPROVER, rule=decision.rule
            )
        else:
            message = answer.reason or f"not approved: {decision.reason}"
            final = Decision.deny(message, source=DecisionSource.APPROVER, rule=decision.rule)
        self._emit(decided_event(call_id, spec.name, final))
        return final

    def _remember(self, spec: ToolSpec, arguments: JsonObject, option: GrantOption, engine: PolicyEngine) -> None:
        fingerprint = spec.fingerprint()
        if option.exact:
            paths = _resolved(spec, arguments, engine)
            self.grants.append(
                _Grant(tool=spec.name, fingerprint=fingerprint, rule=None, arguments=_canonical(arguments), paths=paths)
            )
            return
        parsed = parse_rule(Rule(action="allow", pattern=option.rule, layer="session"))
        self.grants.append(_Grant(tool=spec.name, fingerprint=fingerprint, rule=parsed, arguments=None))

    async def escalate(
        self,
        call_id: str,
        spec: ToolSpec,
        arguments: JsonObject,
        mode: SandboxPolicy,
        engine: PolicyEngine,
    ) -> bool:
        """``on_failure``: the call failed inside the sandbox; ask whether to run it once more without one."""
        unguarded = (
            ""
            if engine.read_mask is None
            else " (outside it, fs.read deny and ask rules do not hold: it could read what they hide)"
        )
        decision = Decision.ask(
            f"{spec.name} failed inside the {mode} sandbox; run it again without the sandbox{unguarded}?",
            source=DecisionSource.SANDBOX,
        )
        self._emit(decided_event(call_id, spec.name, decision))
        request = ApprovalRequest(
            tool=spec.name,
            arguments=arguments,
            reason=decision.reason,
            call_id=call_id,
            source=str(decision.source),
            command=engine.command_line(spec, arguments),
            unsandboxed=True,
            targets=engine.path_targets(spec, arguments),
        )
        try:
            answer = await self.approver.request_approval(request)
        except Exception as exc:
            answer = ApprovalAnswer.deny(f"the approver failed: {exc}")
        self._emit(
            ToolCallApprovalAnswered(
                call_id=call_id,
                tool=spec.name,
                approved=answer.approved,
                scope=str(ApprovalScope.ONCE),
                reason=answer.reason,
            )
        )
        verdict = (
            Decision.allow(f"approved: {decision.reason}", source=DecisionSource.APPROVER)
            if answer.approved
            else Decision.deny(answer.reason or "not approved", source=DecisionSource.APPROVER)
        )
        self._emit(decided_event(call_id, spec.name, verdict))
        return answer.approved

    def _not_saved(self, rule: str, layer: RuleLayer) -> str | None:
        """Say why "always" in a layer the request did not offer saved nothing (a refused layer), as a diagnostic
        and as the answered event's reason."""
        writer = self.persist_rule
        if not isinstance(writer, RuleWriter) or layer not in writer.refused:
            return None
        error = RuleNotSavedError(rule, layer, writer.refused[layer], hint=writer.hints.get(layer))
        self.diagnostics.append(
            Diagnostic(kind="policy_rule", name=rule, reason=error.message, severity=Severity.WARNING, hint=error.hint)
        )
        return f"{error.message} ({error.hint})"

    def _persist(self, rule: str, layer: RuleLayer) -> str | None:
        assert self.persist_rule is not None
        try:
            self.persist_rule(rule, layer)
        except Exception as exc:
            self.diagnostics.append(
                Diagnostic(
                    kind="policy_rule",
                    name=rule,
                    reason=f"could not save the allow rule in the {layer} layer: {exc}",
                    severity=Severity.WARNING,
                    hint="add it to policy.rules.allow by hand",
                )
            )
            return None
        return rule


def _chosen(request: ApprovalRequest, answer: ApprovalAnswer) -> GrantOption | None:
    if not request.grants:
        return None
    if answer.grant is None:  # "always" without a choice saves the rule the request offered; "session", the exact call
        if answer.scope is ApprovalScope.ALWAYS and request.rule is not None:
            return next(o for o in request.grants if o.rule == request.rule)
        return request.grants[0]
    return next((o for o in request.grants if o.rule == answer.grant), None)


def _covers(pattern: str, spec: ToolSpec, arguments: JsonObject, engine: PolicyEngine) -> bool:
    """Whether ``pattern``, written as an allow rule, really covers this call."""
    try:
        parsed = parse_rule(Rule(action="allow", pattern=pattern, layer="session"))
    except ValueError:
        return False
    return engine.matches_any([parsed], spec, arguments) is not None


def _grant_options(spec: ToolSpec, arguments: JsonObject, engine: PolicyEngine) -> list[GrantOption]:
    """The exact call first (the default of "for the session"), then the broader rule the engine suggests, when
    it covers this call and is not a blank cheque for a command the parser cannot fully see."""
    exact_rule = engine.exact_rule(spec, arguments)
    exact_persistable = exact_rule is not None and _covers(exact_rule, spec, arguments, engine)
    shown = exact_rule or f"{spec.name} {_canonical(arguments)}"
    options = [
        GrantOption(
            rule=shown,
            covers=f"exactly this call of {spec.name} (the same arguments)",
            exact=True,
            persistable=exact_persistable,
        )
    ]
    suggestion = engine.suggest_rule(spec, arguments)
    if suggestion and suggestion != exact_rule:
        covers = engine.describe_rule(spec, suggestion)
        if covers is not None and _covers(suggestion, spec, arguments, engine):
            options.append(GrantOption(rule=suggestion, covers=covers, persistable=True))
    return options
