"""Child processes, Content-Length framed connections (JSON-RPC and the DAP on top of one shared base) and the
supervision of a server behind one: shared by LSP, DAP, MCP stdio and hook commands."""

from typing import TYPE_CHECKING

from kairox._util._lazy import lazy_exports

if TYPE_CHECKING:
    from kairox._rpc._connection import FramedConnection
    from kairox._rpc._errors import RpcConnectionClosedError, RpcError, RpcResponseError, RpcTimeoutError
    from kairox._rpc._framing import FramingProblem, MessageReader, MessageWriter, encode_message
    from kairox._rpc._guarded import GUARD_SCRIPT, guarded_argv
    from kairox._rpc._jsonrpc import JsonRpcEndpoint, NotificationHandler
    from kairox._rpc._launch import closed_reason, command_path, resolved_command, server_process
    from kairox._rpc._process import BASE_ENV_NAMES, ChildProcess, StderrTail, child_environment
    from kairox._rpc._replies import INTERNAL_ERROR, METHOD_NOT_FOUND, MethodError, RequestHandler, reply_to
    from kairox._rpc._status import ServerStatus, is_pending, usable_servers
    from kairox._rpc._supervisor import ServerLifecycle, until_first

__all__ = [
    "BASE_ENV_NAMES",
    "GUARD_SCRIPT",
    "INTERNAL_ERROR",
    "METHOD_NOT_FOUND",
    "ChildProcess",
    "FramedConnection",
    "FramingProblem",
    "JsonRpcEndpoint",
    "MessageReader",
    "MessageWriter",
    "MethodError",
    "NotificationHandler",
    "RequestHandler",
    "RpcConnectionClosedError",
    "RpcError",
    "RpcResponseError",
    "RpcTimeoutError",
    "ServerLifecycle",
    "ServerStatus",
    "StderrTail",
    "child_environment",
    "closed_reason",
    "command_path",
    "encode_message",
    "guarded_argv",
    "is_pending",
    "reply_to",
    "resolved_command",
    "server_process",
    "until_first",
    "usable_servers",
]

# names load their module when first read: an MCP stdio client takes the child process without the supervisor
# or the JSON-RPC endpoint
if not TYPE_CHECKING:
    __getattr__, __dir__ = lazy_exports(
        __name__,
        {
            "._connection": ("FramedConnection",),
            "._errors": ("RpcConnectionClosedError", "RpcError", "RpcResponseError", "RpcTimeoutError"),
            "._framing": ("FramingProblem", "MessageReader", "MessageWriter", "encode_message"),
            "._guarded": ("GUARD_SCRIPT", "guarded_argv"),
            "._jsonrpc": ("JsonRpcEndpoint", "NotificationHandler"),
            "._replies": ("INTERNAL_ERROR", "METHOD_NOT_FOUND", "MethodError", "RequestHandler", "reply_to"),
            "._launch": ("closed_reason", "command_path", "resolved_command", "server_process"),
            "._process": ("BASE_ENV_NAMES", "ChildProcess", "StderrTail", "child_environment"),
            "._status": ("ServerStatus", "is_pending", "usable_servers"),
            "._supervisor": ("ServerLifecycle", "until_first"),
        },
    )
