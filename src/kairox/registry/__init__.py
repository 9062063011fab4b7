"""The ToolRegistry: the one permission gate every tool call passes (R2-R5, R7)."""

from kairox.registry._adapters import ModelProvider, wire_name
from kairox.registry._approvals import SessionApprovals
from kairox.registry._events import (
    ToolCallApprovalAnswered,
    ToolCallDecided,
    ToolCallFinished,
    ToolCallRequested,
    ToolsChanged,
    event_arguments,
)
from kairox.registry._factory import build_registry, registry_settings, user_layer_writer
from kairox.registry._registry import CALL_APPROVALS, RegistrySettings, ToolRegistry, renamed_diagnostic
from kairox.registry._search import TOOL_SEARCH, ToolIndex, ToolSearch, search_threshold_tokens

__all__ = [
    "CALL_APPROVALS",
    "TOOL_SEARCH",
    "ModelProvider",
    "RegistrySettings",
    "SessionApprovals",
    "ToolCallApprovalAnswered",
    "ToolCallDecided",
    "ToolCallFinished",
    "ToolCallRequested",
    "ToolIndex",
    "ToolRegistry",
    "ToolSearch",
    "ToolsChanged",
    "build_registry",
    "event_arguments",
    "registry_settings",
    "renamed_diagnostic",
    "search_threshold_tokens",
    "user_layer_writer",
    "wire_name",
]
