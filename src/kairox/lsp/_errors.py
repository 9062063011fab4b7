"""Errors of the LSP client and tools."""

from kairox.errors import KairoxError


class LspError(KairoxError):
    """A language server could not answer."""


class LspStartupError(LspError):
    """A language server did not reach Running."""

    def __init__(self, server: str, reason: str, *, stderr_tail: str = "") -> None:
        super().__init__(
            f"language server {server!r} did not start: {reason}",
            hint=f"check lsp_servers.{server}.command; `kairox lsp status` shows its state and stderr",
        )
        self.server, self.reason, self.stderr_tail = server, reason, stderr_tail


class LspLocationError(LspError):
    """A tool's location (file, line, column or symbol name) does not point at anything."""


class LspNoServerError(LspError):
    """No configured language server answers for a file."""
