"""The one error tree of Kairox, and the diagnostic records loaders report instead of raising."""

from kairox.errors._diagnostics import Diagnostic, ExtensionLoadFailure, Severity
from kairox.errors._errors import (
    ConfigError,
    ConfigProblem,
    ConfigWriteError,
    KairoxError,
    McpStartupError,
    SandboxUnavailableError,
    ToolCallError,
    ToolNotFoundError,
    TrustError,
)

__all__ = [
    "ConfigError",
    "ConfigProblem",
    "ConfigWriteError",
    "Diagnostic",
    "ExtensionLoadFailure",
    "KairoxError",
    "McpStartupError",
    "SandboxUnavailableError",
    "Severity",
    "ToolCallError",
    "ToolNotFoundError",
    "TrustError",
]
