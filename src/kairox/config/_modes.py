"""The policy modes other layers name without needing the config models: when the user is asked, and what the
sandbox lets commands and writes touch."""

import enum


class ApprovalPolicy(enum.StrEnum):
    """When the user is asked before a tool runs."""

    UNTRUSTED = "untrusted"
    """Ask for everything except known read-only tools."""
    ON_REQUEST = "on_request"
    """Ask when a rule or the sandbox says so (default)."""
    ON_FAILURE = "on_failure"
    """Run sandboxed without asking; ask before retrying a failure outside the sandbox."""
    NEVER = "never"
    """Never ask: what would be asked is denied."""


class SandboxPolicy(enum.StrEnum):
    """What commands and writes may touch."""

    READ_ONLY = "read_only"
    WORKSPACE_WRITE = "workspace_write"
    DANGER_FULL_ACCESS = "danger_full_access"
