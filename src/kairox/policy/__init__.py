"""Pure permission decisions (Y1-Y5, Y7): approval and sandbox policies, rules, the Approver interface."""

from kairox.config import ApprovalPolicy, SandboxPolicy
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
from kairox.policy._arguments import path_like_arguments
from kairox.policy._decision import Decision, DecisionSource, Verdict
from kairox.policy._engine import (
    PolicyEngine,
    PolicySettings,
    effective_profile,
    mcp_read_only,
    runs_unsandboxed,
    starts_sandboxed,
)
from kairox.policy._paths import (
    PROTECTED_DIRS,
    PROTECTED_FILES,
    SHELL_RC_FILES,
    PathPattern,
    protected_reason,
    resolve_path,
)
from kairox.policy._readmask import SEARCH_LIMIT, hidden_paths, read_mask
from kairox.policy._rules import ParsedRule, Rule, RuleAction, RuleLike, RuleRef, parse_rule
from kairox.policy._shell import ShellCommand, split_command

__all__ = [
    "PROTECTED_DIRS",
    "PROTECTED_FILES",
    "SEARCH_LIMIT",
    "SHELL_RC_FILES",
    "ApprovalAnswer",
    "ApprovalPolicy",
    "ApprovalRequest",
    "ApprovalScope",
    "Approver",
    "Decision",
    "DecisionSource",
    "GrantOption",
    "NonInteractiveApprover",
    "ParsedRule",
    "PathPattern",
    "PolicyEngine",
    "PolicySettings",
    "Rule",
    "RuleAction",
    "RuleLayer",
    "RuleLike",
    "RuleRef",
    "SandboxPolicy",
    "ShellCommand",
    "UnattendedApprover",
    "Verdict",
    "effective_profile",
    "hidden_paths",
    "mcp_read_only",
    "parse_rule",
    "path_like_arguments",
    "protected_reason",
    "read_mask",
    "refusal_text",
    "resolve_path",
    "runs_unsandboxed",
    "split_command",
    "starts_sandboxed",
    "unattended_refusal",
]
