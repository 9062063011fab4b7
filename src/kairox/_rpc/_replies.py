"""Answering a request the peer sent, for every JSON-RPC endpoint (LSP, DAP's JSON-RPC cousins, MCP): the
handler's result, the JSON-RPC error it raised, or an internal error; an unknown method is "method not found".
Standard library only, so an MCP host that answers its servers loads nothing else of ``_rpc`` for it."""

import logging
from collections.abc import Awaitable, Callable
from typing import Any

log = logging.getLogger(__name__)

RequestHandler = Callable[[Any], Awaitable[Any]]
"""Answers a request from the peer: gets ``params``, returns the ``result`` (or raises :class:`MethodError`)."""

INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603


class MethodError(Exception):
    """Raised by a request handler to answer with a JSON-RPC error."""

    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(message)
        self.code, self.message, self.data = code, message, data


async def reply_to(
    request_id: Any, method: str, params: Any, handler: RequestHandler | None, *, peer: str
) -> dict[str, Any]:
    """The response to one request of ``peer``, ready to send."""
    reply: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id}
    if handler is None:
        reply["error"] = {"code": METHOD_NOT_FOUND, "message": f"method not found: {method}"}
        return reply
    try:
        reply["result"] = await handler(params)
    except MethodError as exc:
        reply["error"] = {"code": exc.code, "message": exc.message}
        if exc.data is not None:
            reply["error"]["data"] = exc.data
    except Exception as exc:
        log.exception("handler of %s from %s failed", method, peer)
        reply["error"] = {"code": INTERNAL_ERROR, "message": f"{type(exc).__name__}: {exc}"}
    return reply
