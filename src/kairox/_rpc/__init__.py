"""Child processes, Content-Length framed connections (JSON-RPC and the DAP on top of one shared base) and the
supervision of a server behind one: shared by LSP, DAP, MCP stdio and hook commands."""

from kairox._rpc._connection import FramedConnection
from kairox._rpc._errors import RpcConnectionClosedError, RpcError, RpcResponseError, RpcTimeoutError
from kairox._rpc._guarded import guarded_argv
from kairox._rpc._jsonrpc import JsonRpcEndpoint
from kairox._rpc._launch import closed_reason, resolved_command, server_process
from kairox._rpc._process import ChildProcess, child_environment
from kairox._rpc._status import ServerStatus, usable_servers
from kairox._rpc._supervisor import ServerLifecycle, until_first

__all__ = [
    "ChildProcess",
    "FramedConnection",
    "JsonRpcEndpoint",
    "RpcConnectionClosedError",
    "RpcError",
    "RpcResponseError",
    "RpcTimeoutError",
    "ServerLifecycle",
    "ServerStatus",
    "child_environment",
    "closed_reason",
    "guarded_argv",
    "resolved_command",
    "server_process",
    "until_first",
    "usable_servers",
]
