"""What the gate decided about one call, why, and which rule (with its file and line) said so."""

import enum
from dataclasses import asdict, dataclass

from kairox.policy._rules import RuleRef


class Verdict(enum.StrEnum):
    ALLOW = "allow"
    ASK = "ask"
    DENY = "deny"


class DecisionSource(enum.StrEnum):
    """Which part of the policy decided."""

    HOOK = "hook"
    RULE = "rule"
    PROTECTED_PATH = "protected_path"
    SANDBOX = "sandbox"
    MODE = "mode"
    """The tool's permission profile against the approval and sandbox policies."""
    SESSION = "session"
    """An approval given earlier in this session."""
    APPROVER = "approver"
    REGISTRY = "registry"
    """The tool is disabled or hidden."""


@dataclass(frozen=True, kw_only=True, slots=True)
class Decision:
    verdict: Verdict
    reason: str
    source: DecisionSource
    rule: RuleRef | None = None
    suggested_rule: str | None = None
    """For ``ask``: the allow rule an "always" answer would persist; None when no rule could skip this ask."""

    @classmethod
    def allow(cls, reason: str, *, source: DecisionSource, rule: RuleRef | None = None) -> "Decision":
        return cls(verdict=Verdict.ALLOW, reason=reason, source=source, rule=rule)

    @classmethod
    def ask(
        cls, reason: str, *, source: DecisionSource, rule: RuleRef | None = None, suggested_rule: str | None = None
    ) -> "Decision":
        return cls(verdict=Verdict.ASK, reason=reason, source=source, rule=rule, suggested_rule=suggested_rule)

    @classmethod
    def deny(cls, reason: str, *, source: DecisionSource, rule: RuleRef | None = None) -> "Decision":
        return cls(verdict=Verdict.DENY, reason=reason, source=source, rule=rule)

    @property
    def where(self) -> str | None:
        """``file:line`` of the deciding rule, when a rule decided."""
        return self.rule.where if self.rule else None

    def to_json(self) -> dict[str, object]:
        rule = self.rule
        return {
            "decision": str(self.verdict),
            "reason": self.reason,
            "source": str(self.source),
            "rule": None if rule is None else {**asdict(rule), "action": str(rule.action)},
            "suggested_rule": self.suggested_rule,
        }
