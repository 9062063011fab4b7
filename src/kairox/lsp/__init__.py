"""Language servers as tools: ``LspClient`` (one server over stdio), ``LspServerLifecycle`` (lazy start, warm,
restart after a crash, status events) and ``LspToolProvider`` (the ``lsp.*`` tools, routed by file pattern)."""

from kairox._rpc import ServerStatus
from kairox.lsp._client import OFFERED_ENCODINGS, LspClient, OpenDocument, PushedDiagnostics
from kairox.lsp._errors import LspError, LspLocationError, LspNoServerError, LspStartupError
from kairox.lsp._events import LspServerFailed, LspServerRunning, LspServerStarting, LspServerStopped
from kairox.lsp._lifecycle import LspServerLifecycle
from kairox.lsp._provider import LspToolProvider, server_log
from kairox.lsp._specs import LSP_PERMISSION, lsp_tool_specs
from kairox.lsp._text import matches_pattern, path_to_uri, to_model_column, to_server_character, uri_to_path

__all__ = [
    "LSP_PERMISSION",
    "OFFERED_ENCODINGS",
    "LspClient",
    "LspError",
    "LspLocationError",
    "LspNoServerError",
    "LspServerFailed",
    "LspServerLifecycle",
    "LspServerRunning",
    "LspServerStarting",
    "LspServerStopped",
    "LspStartupError",
    "LspToolProvider",
    "OpenDocument",
    "PushedDiagnostics",
    "ServerStatus",
    "lsp_tool_specs",
    "matches_pattern",
    "path_to_uri",
    "server_log",
    "to_model_column",
    "to_server_character",
    "uri_to_path",
]
