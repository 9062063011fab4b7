"""MCP servers as Kairox tools: configuration, one supervised client per server, lifecycle events.

Only this package imports the ``mcp`` SDK; its types stop at this package's edge.
"""

from typing import TYPE_CHECKING

from kairox._util._lazy import lazy_exports

if TYPE_CHECKING:
    from kairox._rpc import ServerLifecycle, ServerStatus
    from kairox.config import MCP_JSON, McpJsonFile, read_mcp_json, workspace_mcp_servers
    from kairox.mcp._adapter import McpToolAdapter, permission_for
    from kairox.mcp._client import McpClient, McpServerState
    from kairox.mcp._connect import open_server_transport
    from kairox.mcp._connection import FailureCause
    from kairox.mcp._content import McpResource, McpTool
    from kairox.mcp._events import (
        McpProtocolViolation,
        McpServerFailed,
        McpServerLog,
        McpServerReady,
        McpServerRestarting,
        McpServerStarting,
        McpServerStopped,
        McpStartupSummary,
        McpToolProgress,
        McpToolsChanged,
    )
    from kairox.mcp._features import (
        ClientFeatures,
        ElicitationAnswer,
        ElicitationHandler,
        ElicitationRequest,
        OAuthLogin,
        SamplingAnswer,
        SamplingHandler,
        SamplingRequest,
        apply_schema_defaults,
        decline_elicitation,
    )
    from kairox.mcp._manager import McpServerManager
    from kairox.mcp._sources import ConfiguredServer, configured_servers, server_confiner

__all__ = [
    "MCP_JSON",
    "ClientFeatures",
    "ConfiguredServer",
    "ElicitationAnswer",
    "ElicitationHandler",
    "ElicitationRequest",
    "FailureCause",
    "McpClient",
    "McpJsonFile",
    "McpProtocolViolation",
    "McpResource",
    "McpServerFailed",
    "McpServerLog",
    "McpServerManager",
    "McpServerReady",
    "McpServerRestarting",
    "McpServerStarting",
    "McpServerState",
    "McpServerStopped",
    "McpStartupSummary",
    "McpTool",
    "McpToolAdapter",
    "McpToolProgress",
    "McpToolsChanged",
    "OAuthLogin",
    "SamplingAnswer",
    "SamplingHandler",
    "SamplingRequest",
    "ServerLifecycle",
    "ServerStatus",
    "apply_schema_defaults",
    "configured_servers",
    "decline_elicitation",
    "open_server_transport",
    "permission_for",
    "read_mcp_json",
    "server_confiner",
    "workspace_mcp_servers",
]

# names load their module when first read: a host that only runs McpClient does not import the manager, the
# tool adapter or the .mcp.json reader
if not TYPE_CHECKING:
    __getattr__, __dir__ = lazy_exports(
        __name__,
        {
            "kairox.config": ("MCP_JSON", "McpJsonFile", "read_mcp_json", "workspace_mcp_servers"),
            "._adapter": ("McpToolAdapter", "permission_for"),
            "._client": ("McpClient", "McpServerState"),
            "._connect": ("open_server_transport",),
            "._content": ("McpResource", "McpTool"),
            "._events": (
                "McpProtocolViolation",
                "McpServerFailed",
                "McpServerLog",
                "McpServerReady",
                "McpServerRestarting",
                "McpServerStarting",
                "McpServerStopped",
                "McpStartupSummary",
                "McpToolProgress",
                "McpToolsChanged",
            ),
            "._features": (
                "ClientFeatures",
                "ElicitationAnswer",
                "ElicitationHandler",
                "ElicitationRequest",
                "OAuthLogin",
                "SamplingAnswer",
                "SamplingHandler",
                "SamplingRequest",
                "apply_schema_defaults",
                "decline_elicitation",
            ),
            "kairox._rpc": ("ServerLifecycle", "ServerStatus"),
            "._connection": ("FailureCause",),
            "._manager": ("McpServerManager",),
            "._sources": ("ConfiguredServer", "configured_servers", "server_confiner"),
        },
    )
