"""Language servers as tools: ``LspClient`` (one server over stdio), ``LspServerLifecycle`` (lazy start, warm,
restart after a crash, status events) and ``LspToolProvider`` (the ``lsp.*`` tools, routed by file pattern)."""

from kairox.lsp._errors import LspStartupError
from kairox.lsp._events import LspServerFailed, LspServerRunning, LspServerStarting, LspServerStopped
from kairox.lsp._lifecycle import LspServerLifecycle
from kairox.lsp._provider import LspToolProvider, server_log
from kairox.lsp._text import matches_pattern

__all__ = [
    "LspServerFailed",
    "LspServerLifecycle",
    "LspServerRunning",
    "LspServerStarting",
    "LspServerStopped",
    "LspStartupError",
    "LspToolProvider",
    "matches_pattern",
    "server_log",
]
