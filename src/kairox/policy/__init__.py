"""Pure permission decisions (Y1-Y5, Y7): approval and sandbox policies, rules, the Approver interface.

No I/O: what a decision needs to know of files (symlinks, a script's lines, the read masks) comes from the caller's
``HostFacts`` (``PolicySettings.host``; Kairox's is ``kairox.sandbox.HOST``)."""

from kairox.config import ApprovalPolicy, SandboxPolicy
from kairox.policy._approval import (
    ApprovalAnswer,
    ApprovalRequest,
    ApprovalScope,
    Approver,
    GrantOption,
    NonInteractiveApprover,
    PathTarget,
    RuleLayer,
    UnattendedApprover,
    refusal_text,
    unattended_refusal,
)
from kairox.policy._arguments import path_like_arguments
from kairox.policy._decide import PolicyEngine
from kairox.policy._decision import Decision, DecisionSource, Verdict
from kairox.policy._facts import effective_profile, mcp_read_only, runs_unsandboxed, starts_sandboxed
from kairox.policy._host import HostFacts, ReadMaskLike
from kairox.policy._paths import (
    PROTECTED_DIRS,
    PROTECTED_FILES,
    SHELL_RC_FILES,
    PathPattern,
    parse_pattern,
    protected_reason,
    resolve_path,
)
from kairox.policy._readrules import read_mask, read_patterns
from kairox.policy._rules import ParsedRule, Rule, RuleAction, RuleLike, RuleRef, parse_rule
from kairox.policy._settings import PolicySettings
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
    "GrantOption",
    "HostFacts",
    "NonInteractiveApprover",
    "ParsedRule",
    "PathPattern",
    "PathTarget",
    "PolicyEngine",
    "PolicySettings",
    "ReadMaskLike",
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
    "mcp_read_only",
    "parse_pattern",
    "parse_rule",
    "path_like_arguments",
    "protected_reason",
    "read_mask",
    "read_patterns",
    "refusal_text",
    "resolve_path",
    "runs_unsandboxed",
    "split_command",
    "starts_sandboxed",
    "unattended_refusal",
]
