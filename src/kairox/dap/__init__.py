"""Debuggers as tools: ``DapClient`` (one debug adapter over stdio or TCP), ``DapServerLifecycle`` (the adapter
behind one session, with status events) and ``DapToolProvider`` (the ``dap.*`` tools, one session per id)."""

from kairox._rpc import ServerStatus
from kairox.dap._client import DapClient
from kairox.dap._connection import DapConnection
from kairox.dap._errors import DapError, DapRequestError, DapSessionError, DapStartupError
from kairox.dap._events import (
    DapProgramStopped,
    DapServerFailed,
    DapServerRunning,
    DapServerStarting,
    DapServerStopped,
)
from kairox.dap._lifecycle import DapServerLifecycle
from kairox.dap._provider import DapToolProvider
from kairox.dap._session import DebugSession
from kairox.dap._specs import ATTACH_PERMISSION, LAUNCH_PERMISSION, SESSION_PERMISSION, dap_tool_specs

__all__ = [
    "ATTACH_PERMISSION",
    "LAUNCH_PERMISSION",
    "SESSION_PERMISSION",
    "DapClient",
    "DapConnection",
    "DapError",
    "DapProgramStopped",
    "DapRequestError",
    "DapServerFailed",
    "DapServerLifecycle",
    "DapServerRunning",
    "DapServerStarting",
    "DapServerStopped",
    "DapSessionError",
    "DapStartupError",
    "DapToolProvider",
    "DebugSession",
    "ServerStatus",
    "dap_tool_specs",
]
