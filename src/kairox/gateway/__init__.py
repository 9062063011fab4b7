"""``kairox serve``: the whole registry as one MCP server, every call through the permission gate (G1); ``kairox
proxy``: one upstream under its own names, behind the same gate.

Only this package and ``kairox.mcp`` import the ``mcp`` SDK; only this package and ``kairox.web`` starlette.
"""

from kairox.gateway._approver import ElicitingApprover
from kairox.gateway._audit import AuditLog, AuditRecord
from kairox.gateway._proxy import Proxy, ProxyTarget, open_proxy, serve_proxy
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
from kairox.gateway._store import Store, StoreError
from kairox.gateway._users import OidcOptions, Users, UsersFileError
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
    "OidcOptions",
    "Proxy",
    "ProxyTarget",
    "Store",
    "StoreError",
    "Users",
    "UsersFileError",
    "http_app",
    "open_gateway",
    "open_proxy",
    "parse_listen",
    "serve_http",
    "serve_proxy",
    "serve_stdio",
]
