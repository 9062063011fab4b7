"""Debuggers as tools: ``DapToolProvider`` (the ``dap.*`` tools, one session per id), each session a debug adapter
over stdio or TCP (``_client``) behind a lifecycle that reports its status as the events below."""

from kairox.dap._events import (
    DapProgramStopped,
    DapServerFailed,
    DapServerRunning,
    DapServerStarting,
    DapServerStopped,
)
from kairox.dap._provider import DapToolProvider

__all__ = [
    "DapProgramStopped",
    "DapServerFailed",
    "DapServerRunning",
    "DapServerStarting",
    "DapServerStopped",
    "DapToolProvider",
]
