"""The Approver interface (Y5): who answers when the policy says ``ask``."""

import enum
from dataclasses import dataclass, field
from typing import Protocol

from kairox._util import JsonObject


class ApprovalScope(enum.StrEnum):
    ONCE = "once"
    SESSION = "session"
    """Approve this tool (with these arguments' pattern) for the rest of the session."""
    ALWAYS = "always"
    """Approve and persist an allow rule in the user layer."""


@dataclass(frozen=True, kw_only=True, slots=True)
class ApprovalRequest:
    tool: str
    arguments: JsonObject = field(default_factory=dict)
    reason: str
    """Why the policy asks (the rule, the protected path, the sandbox)."""
    rule: str | None = None
    """The rule the approval would persist with ``ALWAYS`` (e.g. ``shell.exec(git push*)``)."""


@dataclass(frozen=True, kw_only=True, slots=True)
class ApprovalAnswer:
    approved: bool
    scope: ApprovalScope = ApprovalScope.ONCE
    reason: str | None = None

    @classmethod
    def deny(cls, reason: str) -> "ApprovalAnswer":
        return cls(approved=False, reason=reason)


class Approver(Protocol):
    """Asks a person. The CLI prompts, the TUI and web GUI show a dialog, a non-interactive run denies."""

    async def request_approval(self, request: ApprovalRequest) -> ApprovalAnswer: ...


class NonInteractiveApprover:
    """Used without a terminal: every ``ask`` becomes a denial with the reason "approval required"."""

    async def request_approval(self, request: ApprovalRequest) -> ApprovalAnswer:
        return ApprovalAnswer.deny(f"approval required: {request.reason}")
