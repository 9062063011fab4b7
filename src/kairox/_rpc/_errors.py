"""Errors of a framed connection to a child server (LSP, DAP): the peer answered with an error, was too slow,
or went away."""

from typing import Any

from kairox.errors import KairoxError


class RpcError(KairoxError):
    """A request to a server over a framed connection did not produce a result."""

    def __init__(self, peer: str, message: str, *, hint: str | None = None) -> None:
        super().__init__(message, hint=hint)
        self.peer = peer


class RpcResponseError(RpcError):
    """The server answered the request with an error."""

    def __init__(self, peer: str, method: str, code: int, message: str, data: Any = None) -> None:
        super().__init__(peer, f"{peer} answered {method} with error {code}: {message}")
        self.method, self.code, self.reason, self.data = method, code, message, data


class RpcTimeoutError(RpcError):
    """The server did not answer in time."""

    def __init__(self, peer: str, method: str, timeout: float, *, action: str = "answer") -> None:
        super().__init__(
            peer,
            f"{peer} did not {action} {method} within {timeout:g}s",
            hint="the server may be busy indexing or stuck; raise its request_timeout_sec or restart it",
        )
        self.method, self.timeout = method, timeout


class RpcConnectionClosedError(RpcError):
    """The connection ended (the server exited or closed its output) before an answer came."""

    def __init__(self, peer: str, method: str | None, reason: str) -> None:
        what = f"before answering {method}" if method else ""
        super().__init__(
            peer,
            " ".join(part for part in (f"{peer} closed the connection", what) if part) + f": {reason}",
            hint="the server is restarted on the next request; what it wrote on stderr ends the reason, and its log",
        )
        self.method, self.reason = method, reason
