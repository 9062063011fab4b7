"""``kairox serve``: the whole registry as one MCP server, every call through the permission gate (G1); ``kairox
proxy``: one upstream under its own names, behind the same gate.

Only this package and ``kairox.mcp`` import the ``mcp`` SDK; only this package and ``kairox.web`` starlette.
"""

from kairox.gateway._proxy import ProxyTarget, serve_proxy
from kairox.gateway._serve import GatewayConfigError, HttpOptions, parse_listen, serve_http, serve_stdio
from kairox.gateway._server import GatewayOptions
from kairox.gateway._store import Store
from kairox.gateway._users import OidcOptions, Users

__all__ = [
    "GatewayConfigError",
    "GatewayOptions",
    "HttpOptions",
    "OidcOptions",
    "ProxyTarget",
    "Store",
    "Users",
    "parse_listen",
    "serve_http",
    "serve_proxy",
    "serve_stdio",
]
