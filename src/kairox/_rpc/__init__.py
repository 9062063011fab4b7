"""Child processes and Content-Length framed JSON-RPC, shared by LSP, DAP, MCP stdio and hook commands."""

from kairox._rpc._process import BASE_ENV_NAMES, ChildProcess, StderrTail, child_environment

__all__ = ["BASE_ENV_NAMES", "ChildProcess", "StderrTail", "child_environment"]
