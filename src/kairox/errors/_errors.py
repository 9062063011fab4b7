from dataclasses import dataclass


class KairoxError(Exception):
    """Root of every error Kairox raises. ``hint`` says what the user can do next."""

    def __init__(self, message: str, *, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint

    def __str__(self) -> str:
        return f"{self.message}\n  hint: {self.hint}" if self.hint else self.message


# --- configuration -----------------------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True, slots=True)
class ConfigProblem:
    """One problem in one configuration file."""

    file: str
    line: int | None
    key: str
    message: str
    hint: str | None = None
    layer: str | None = None

    def __str__(self) -> str:
        where = f"{self.file}:{self.line}" if self.line else self.file
        text = f"{where}: {self.key}: {self.message}" if self.key else f"{where}: {self.message}"
        return f"{text} ({self.hint})" if self.hint else text


class ConfigError(KairoxError):
    """Configuration could not be used."""


class ConfigWriteError(ConfigError):
    """A configuration file could not be edited."""


class TrustError(KairoxError):
    """The workspace trust store could not be read or written."""


# --- tools -------------------------------------------------------------------------------------------------


class ToolError(KairoxError):
    """A tool could not be registered or called."""


class ToolNotFoundError(ToolError):
    def __init__(self, name: str) -> None:
        super().__init__(f"no tool named {name!r}", hint="`kairox tools list` shows the tools")
        self.name = name


class ToolCallError(ToolError):
    """A tool call failed in its provider; the registry turns this into a tool error result."""

    def __init__(self, *, tool: str, reason: str, server: str | None = None, hint: str | None = None) -> None:
        where = f"{tool} on {server}" if server else tool
        super().__init__(f"{where} failed: {reason}", hint=hint)
        self.tool, self.server, self.reason = tool, server, reason


class SandboxUnavailableError(KairoxError):
    """The OS sandbox the policy asks for cannot be started; Kairox fails closed."""


# --- MCP ---------------------------------------------------------------------------------------------------


class McpError(KairoxError):
    """An MCP server misbehaved or could not be reached."""


class McpStartupError(McpError):
    """A required MCP server did not reach Ready."""

    def __init__(self, server: str, reason: str, *, stderr_tail: str = "") -> None:
        super().__init__(
            f"MCP server {server!r} did not start: {reason}",
            hint=f"`kairox mcp status` shows its stderr; set mcp_servers.{server}.required = false to go on without it",
        )
        self.server, self.reason, self.stderr_tail = server, reason, stderr_tail
