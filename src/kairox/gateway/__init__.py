"""``kairox serve``: the whole registry as one MCP server, every call through the permission gate (G1).

Only this package and ``kairox.mcp`` import the ``mcp`` SDK; only this package and ``kairox.web`` starlette.
"""

from kairox.gateway._approver import ElicitingApprover
from kairox.gateway._audit import AuditLog, AuditRecord
from kairox.gateway._serve import (
    BearerToken,
    GatewayConfigError,
    HttpOptions,
    http_app,
    open_gateway,
    parse_listen,
    serve_http,
    serve_stdio,
)
from kairox.gateway._server import Gateway, GatewayEvents, GatewayOptions
from kairox.gateway._wire import RESOURCE_PREFIX

__all__ = [
    "RESOURCE_PREFIX",
    "AuditLog",
    "AuditRecord",
    "BearerToken",
    "ElicitingApprover",
    "Gateway",
    "GatewayConfigError",
    "GatewayEvents",
    "GatewayOptions",
    "HttpOptions",
    "http_app",
    "open_gateway",
    "parse_listen",
    "serve_http",
    "serve_stdio",
]
