"""The one error tree of Kairox, and the diagnostic records loaders report instead of raising."""

from kairox.errors._diagnostics import Diagnostic, ExtensionLoadFailure, Severity
from kairox.errors._errors import (
    ApprovalRequiredError,
    ConfigError,
    ConfigParseError,
    ConfigProblem,
    ConfigValidationError,
    ConfigWriteError,
    KairoxError,
    McpError,
    McpStartupError,
    SandboxUnavailableError,
    ToolCallError,
    ToolError,
    ToolNameConflictError,
    ToolNotFoundError,
    TrustError,
)

__all__ = [
    "ApprovalRequiredError",
    "ConfigError",
    "ConfigParseError",
    "ConfigProblem",
    "ConfigValidationError",
    "ConfigWriteError",
    "Diagnostic",
    "ExtensionLoadFailure",
    "KairoxError",
    "McpError",
    "McpStartupError",
    "SandboxUnavailableError",
    "Severity",
    "ToolCallError",
    "ToolError",
    "ToolNameConflictError",
    "ToolNotFoundError",
    "TrustError",
]
