"""Pure permission decisions (Y1-Y5, Y7): approval and sandbox policies, rules, the Approver interface."""

from kairox.config import ApprovalPolicy, SandboxPolicy
from kairox.policy._approval import (
    ApprovalAnswer,
    ApprovalRequest,
    ApprovalScope,
    Approver,
    NonInteractiveApprover,
)
from kairox.policy._decision import Decision, DecisionSource, Verdict
from kairox.policy._engine import PolicyEngine, PolicySettings, effective_profile, runs_unsandboxed
from kairox.policy._paths import (
    PROTECTED_DIRS,
    PROTECTED_FILES,
    SHELL_RC_FILES,
    PathPattern,
    protected_reason,
    resolve_path,
)
from kairox.policy._rules import ParsedRule, Rule, RuleAction, RuleLike, RuleRef, parse_rule
from kairox.policy._shell import ShellCommand, split_command

__all__ = [
    "PROTECTED_DIRS",
    "PROTECTED_FILES",
    "SHELL_RC_FILES",
    "ApprovalAnswer",
    "ApprovalPolicy",
    "ApprovalRequest",
    "ApprovalScope",
    "Approver",
    "Decision",
    "DecisionSource",
    "NonInteractiveApprover",
    "ParsedRule",
    "PathPattern",
    "PolicyEngine",
    "PolicySettings",
    "Rule",
    "RuleAction",
    "RuleLike",
    "RuleRef",
    "SandboxPolicy",
    "ShellCommand",
    "Verdict",
    "effective_profile",
    "parse_rule",
    "protected_reason",
    "resolve_path",
    "runs_unsandboxed",
    "split_command",
]
