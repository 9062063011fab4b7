"""The ToolRegistry: the one permission gate every tool call passes (R2-R5, R7)."""

from kairox.registry._adapters import (
    ModelProvider,
    SchemaAdapterError,
    anthropic_definition,
    drop_model_nulls,
    gemini_definition,
    openai_definition,
    wire_name,
    wire_names,
)
from kairox.registry._approvals import PersistRule, RuleNotSavedError, RuleWriter, SessionApprovals
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
from kairox.registry._search import (
    TOOL_FIELDS,
    TOOL_SEARCH,
    ToolIndex,
    ToolMatch,
    ToolSearch,
    search_threshold_tokens,
    tool_document,
    tool_search_definition,
)

__all__ = [
    "CALL_APPROVALS",
    "TOOL_FIELDS",
    "TOOL_SEARCH",
    "ModelProvider",
    "PersistRule",
    "RegistrySettings",
    "RuleNotSavedError",
    "RuleWriter",
    "SchemaAdapterError",
    "SessionApprovals",
    "ToolCallApprovalAnswered",
    "ToolCallDecided",
    "ToolCallFinished",
    "ToolCallRequested",
    "ToolIndex",
    "ToolMatch",
    "ToolRegistry",
    "ToolSearch",
    "ToolsChanged",
    "anthropic_definition",
    "build_registry",
    "drop_model_nulls",
    "event_arguments",
    "gemini_definition",
    "openai_definition",
    "registry_settings",
    "renamed_diagnostic",
    "search_threshold_tokens",
    "tool_document",
    "tool_search_definition",
    "user_layer_writer",
    "wire_name",
    "wire_names",
]
