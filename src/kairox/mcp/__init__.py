"""MCP servers as Kairox tools: configuration, one supervised client per server, lifecycle events.

Only this package imports the ``mcp`` SDK; its types stop at this package's edge.
"""

from kairox.config import MCP_JSON, McpJsonFile, read_mcp_json, workspace_mcp_servers
from kairox.mcp._adapter import McpToolAdapter, permission_for
from kairox.mcp._client import McpClient, McpServerState
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
from kairox.mcp._lifecycle import ServerLifecycle, ServerStatus
from kairox.mcp._manager import McpServerManager
from kairox.mcp._sources import ConfiguredServer, configured_servers

__all__ = [
    "MCP_JSON",
    "ClientFeatures",
    "ConfiguredServer",
    "ElicitationAnswer",
    "ElicitationHandler",
    "ElicitationRequest",
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
    "permission_for",
    "read_mcp_json",
    "workspace_mcp_servers",
]
