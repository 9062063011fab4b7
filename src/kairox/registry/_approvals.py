"""What happens when the policy says ``ask``: a session grant, or the Approver, and "always" saved as a rule."""

from collections.abc import Callable

from kairox._util import JsonObject
from kairox.config import SandboxPolicy
from kairox.errors import Diagnostic, Severity
from kairox.events import Event
from kairox.policy import (
    ApprovalAnswer,
    ApprovalRequest,
    ApprovalScope,
    Approver,
    Decision,
    DecisionSource,
    ParsedRule,
    PolicyEngine,
    Rule,
    parse_rule,
)
from kairox.registry._events import ToolCallApprovalAnswered, decided_event
from kairox.tools import ToolSpec

PersistRule = Callable[[str], None]
"""Writes an allow rule into the user layer (what an "always" approval does)."""


class SessionApprovals:
    """Answers ``ask`` decisions for one registry: from this session's grants, else by asking the Approver."""

    def __init__(self, approver: Approver, *, persist_rule: PersistRule | None, emit: Callable[[Event], None]) -> None:
        self.approver = approver
        self.persist_rule = persist_rule
        self._emit = emit
        self.grants: list[ParsedRule] = []
        self.diagnostics: list[Diagnostic] = []

    async def resolve(self, call_id: str, spec: ToolSpec, arguments: JsonObject, decision: Decision, engine: PolicyEngine) -> Decision:
        """Turn an ``ask`` into ``allow`` or ``deny``; emits the decided (and answered) events."""
        protected = decision.source is DecisionSource.PROTECTED_PATH
        if not protected:  # protected paths are asked about every time
            grant = engine.matches_any(self.grants, spec, arguments)
            if grant is not None:
                granted = Decision.allow(f"approved earlier in this session ({grant.ref.pattern})", source=DecisionSource.SESSION)
                self._emit(decided_event(call_id, spec.name, granted))
                return granted
        suggestion = None if protected else engine.suggest_rule(spec, arguments)
        # an allow rule only skips asks that come from the tool's profile, so only those can be approved "always"
        persistable = decision.source is DecisionSource.MODE and self.persist_rule is not None
        request = ApprovalRequest(tool=spec.name, arguments=arguments, reason=decision.reason, rule=suggestion if persistable else None)
        try:
            answer = await self.approver.request_approval(request)
        except Exception as exc:
            answer = ApprovalAnswer.deny(f"the approver failed: {exc}")
        persisted = None
        if answer.approved and suggestion is not None and answer.scope is not ApprovalScope.ONCE:
            try:
                self.grants.append(parse_rule(Rule(action="allow", pattern=suggestion, layer="session")))
            except ValueError:  # a command whose text cannot be written as a rule: approved this once only
                suggestion = None
            if suggestion is not None and answer.scope is ApprovalScope.ALWAYS and persistable:
                persisted = self._persist(suggestion)
        self._emit(
            ToolCallApprovalAnswered(
                call_id=call_id, tool=spec.name, approved=answer.approved, scope=str(answer.scope), reason=answer.reason, persisted_rule=persisted
            )
        )
        if answer.approved:
            final = Decision.allow(f"approved ({answer.scope}): {decision.reason}", source=DecisionSource.APPROVER, rule=decision.rule)
        else:
            final = Decision.deny(answer.reason or f"not approved: {decision.reason}", source=DecisionSource.APPROVER, rule=decision.rule)
        self._emit(decided_event(call_id, spec.name, final))
        return final

    async def escalate(self, call_id: str, spec: ToolSpec, arguments: JsonObject, mode: SandboxPolicy) -> bool:
        """``on_failure``: the call failed inside the sandbox; ask whether to run it once more without one."""
        decision = Decision.ask(
            f"{spec.name} failed inside the {mode} sandbox; run it again without the sandbox?", source=DecisionSource.SANDBOX
        )
        self._emit(decided_event(call_id, spec.name, decision))
        request = ApprovalRequest(tool=spec.name, arguments=arguments, reason=decision.reason)
        try:
            answer = await self.approver.request_approval(request)
        except Exception as exc:
            answer = ApprovalAnswer.deny(f"the approver failed: {exc}")
        self._emit(ToolCallApprovalAnswered(call_id=call_id, tool=spec.name, approved=answer.approved, scope=str(ApprovalScope.ONCE), reason=answer.reason))
        verdict = (
            Decision.allow(f"approved: {decision.reason}", source=DecisionSource.APPROVER)
            if answer.approved
            else Decision.deny(answer.reason or "not approved", source=DecisionSource.APPROVER)
        )
        self._emit(decided_event(call_id, spec.name, verdict))
        return answer.approved

    def _persist(self, rule: str) -> str | None:
        assert self.persist_rule is not None
        try:
            self.persist_rule(rule)
        except Exception as exc:
            self.diagnostics.append(
                Diagnostic(
                    kind="policy_rule", name=rule, reason=f"could not save the allow rule: {exc}", severity=Severity.WARNING,
                    hint="add it to policy.rules.allow by hand",
                )
            )
            return None
        return rule
