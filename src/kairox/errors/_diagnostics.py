import enum
from dataclasses import asdict, dataclass
from typing import Any


class Severity(enum.StrEnum):
    ERROR = "error"
    WARNING = "warning"
    INFO = "info"


@dataclass(frozen=True, kw_only=True, slots=True)
class Diagnostic:
    """Something a loader noticed about an extension: what, where, and what to do about it."""

    kind: str
    """What was being loaded: ``config``, ``plugin``, ``skill``, ``mcp_server``, ``lsp_server``, ``hook``, ``tool``."""
    name: str
    """The extension's name (server, plugin, skill, tool), or the file name when no name is known."""
    reason: str
    severity: Severity = Severity.WARNING
    source: str | None = None
    """The file (or ``plugin:<name>``, ``server:<name>``) the problem comes from."""
    line: int | None = None
    hint: str | None = None
    """What to do next."""
    recoverable: bool = True

    def location(self) -> str:
        if self.source and self.line:
            return f"{self.source}:{self.line}"
        return self.source or self.name

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["severity"] = str(self.severity)
        data["path"] = self.source
        return data

    def __str__(self) -> str:
        text = f"{self.severity}: {self.location()}: {self.kind} {self.name!r}: {self.reason}"
        return f"{text} ({self.hint})" if self.hint else text


@dataclass(frozen=True, kw_only=True, slots=True)
class ExtensionLoadFailure(Diagnostic):
    """An extension that could not be loaded; it is left out of the model-visible tools."""

    severity: Severity = Severity.ERROR
