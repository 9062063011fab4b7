"""Pure permission decisions (Y1-Y5, Y7): approval and sandbox policies, rules, the Approver interface.

No I/O: what a decision needs to know of files (symlinks, a script's lines, the read masks) comes from the caller's
``HostFacts`` (``PolicySettings.host``; Kairox's is ``kairox.sandbox.HOST``)."""

from kairox.policy._approval import (
    ApprovalAnswer,
    ApprovalRequest,
    ApprovalScope,
    Approver,
    GrantOption,
    NonInteractiveApprover,
    RuleLayer,
    UnattendedApprover,
    refusal_text,
    unattended_refusal,
)
from kairox.policy._decide import PolicyEngine
from kairox.policy._facts import effective_profile, mcp_read_only, starts_sandboxed
from kairox.policy._host import HostFacts
from kairox.policy._paths import resolve_path
from kairox.policy._readrules import read_mask
from kairox.policy._rules import Decision, DecisionSource, ParsedRule, Rule, RuleRef, Verdict, parse_rule
from kairox.policy._settings import PolicySettings

__all__ = [
    "ApprovalAnswer",
    "ApprovalRequest",
    "ApprovalScope",
    "Approver",
    "Decision",
    "DecisionSource",
    "GrantOption",
    "HostFacts",
    "NonInteractiveApprover",
    "ParsedRule",
    "PolicyEngine",
    "PolicySettings",
    "Rule",
    "RuleLayer",
    "RuleRef",
    "UnattendedApprover",
    "Verdict",
    "effective_profile",
    "mcp_read_only",
    "parse_rule",
    "read_mask",
    "refusal_text",
    "resolve_path",
    "starts_sandboxed",
    "unattended_refusal",
]
