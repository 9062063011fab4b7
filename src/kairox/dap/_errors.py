"""Errors of the DAP client and tools."""

from kairox._rpc._errors import RpcError
from kairox.errors import KairoxError


class DapError(KairoxError):
    """A debug adapter or debug session could not do what was asked."""


class DapRequestError(RpcError):
    """The debug adapter answered a request with ``success: false``."""

    def __init__(self, peer: str, command: str, reason: str) -> None:
        super().__init__(peer, f"{peer} could not {command}: {reason}")
        self.command, self.reason = command, reason


class DapStartupError(DapError):
    """A debug adapter did not start, or did not accept the launch or attach."""

    def __init__(self, server: str, reason: str, *, stderr_tail: str = "") -> None:
        super().__init__(
            f"debug adapter {server!r} did not start: {reason}",
            hint=f"check dap_servers.{server}.command and the program; `kairox dap sessions` lists the adapters",
        )
        self.server, self.reason, self.stderr_tail = server, reason, stderr_tail


class DapAttachError(DapStartupError):
    """``dap.attach`` found no debug adapter at host:port: nothing listens there, or what does never answers."""

    def __init__(self, server: str, target: str, reason: str, *, hint: str) -> None:
        DapError.__init__(self, f"cannot attach to {target}: {reason}", hint=hint)
        self.server, self.reason, self.stderr_tail, self.target = server, reason, "", target


class DapSessionError(DapError):
    """A tool named a debug session that does not exist or is not stopped where it needs to be."""
