"""Pure permission decisions (Y1-Y5, Y7): approval and sandbox policies, rules, the Approver interface."""

from kairox.config import ApprovalPolicy, SandboxPolicy
from kairox.policy._approval import (
    ApprovalAnswer,
    ApprovalRequest,
    ApprovalScope,
    Approver,
    NonInteractiveApprover,
)

__all__ = [
    "ApprovalAnswer",
    "ApprovalPolicy",
    "ApprovalRequest",
    "ApprovalScope",
    "Approver",
    "NonInteractiveApprover",
    "SandboxPolicy",
]
