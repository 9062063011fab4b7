"""MCP servers as Kairox tools: configuration, one supervised client per server, lifecycle events.

Only this package imports the ``mcp`` SDK; its types stop at this package's edge.
"""

from typing import TYPE_CHECKING

from kairox._util._lazy import lazy_exports

if TYPE_CHECKING:
    from kairox._rpc._status import ServerStatus
    from kairox.mcp._adapter import McpToolAdapter, permission_for
    from kairox.mcp._client import McpClient
    from kairox.mcp._connect import open_server_transport
    from kairox.mcp._content import McpResource
    from kairox.mcp._events import (
        McpServerFailed,
        McpServerLog,
        McpServerReady,
        McpServerRestarting,
        McpServerStarting,
        McpServerStopped,
        McpToolProgress,
    )
    from kairox.mcp._features import ClientFeatures
    from kairox.mcp._manager import McpServerManager
    from kairox.mcp._sources import ConfiguredServer, configured_servers, server_confiner

__all__ = [
    "ClientFeatures",
    "ConfiguredServer",
    "McpClient",
    "McpResource",
    "McpServerFailed",
    "McpServerLog",
    "McpServerManager",
    "McpServerReady",
    "McpServerRestarting",
    "McpServerStarting",
    "McpServerStopped",
    "McpToolAdapter",
    "McpToolProgress",
    "ServerStatus",
    "configured_servers",
    "open_server_transport",
    "permission_for",
    "server_confiner",
]

# names load their module when first read: a host that only runs McpClient does not import the manager, the
# tool adapter or the .mcp.json reader
if not TYPE_CHECKING:
    __getattr__, __dir__ = lazy_exports(
        __name__,
        {
            "kairox._rpc._status": ("ServerStatus",),
            "._adapter": ("McpToolAdapter", "permission_for"),
            "._client": ("McpClient",),
            "._connect": ("open_server_transport",),
            "._content": ("McpResource",),
            "._events": (
                "McpServerFailed",
                "McpServerLog",
                "McpServerReady",
                "McpServerRestarting",
                "McpServerStarting",
                "McpServerStopped",
                "McpToolProgress",
            ),
            "._features": ("ClientFeatures",),
            "._manager": ("McpServerManager",),
            "._sources": ("ConfiguredServer", "configured_servers", "server_confiner"),
        },
    )
