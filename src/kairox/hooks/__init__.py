"""Hooks (H1-H3): command hooks from ``[hooks]`` and from plugins, run around sessions, turns and tool calls.
``HookRegistry`` implements the ToolRegistry's ``ToolHooks`` interface."""

from kairox.hooks._approval import HookApprovalStore, hook_hash, hook_key
from kairox.hooks._events import HookFinished
from kairox.hooks._model import (
    CLAUDE_TOOL_NAMES,
    TOOL_EVENTS,
    HookEvent,
    HookOutcome,
    HookResult,
    HookSpec,
    PluginHookLike,
    matches,
)
from kairox.hooks._registry import HookRegistry, combine, hooks_from_config, hooks_from_plugins
from kairox.hooks._runner import OUTPUT_CAP_BYTES, parse_answer, run_hook

__all__ = [
    "CLAUDE_TOOL_NAMES",
    "OUTPUT_CAP_BYTES",
    "TOOL_EVENTS",
    "HookApprovalStore",
    "HookEvent",
    "HookFinished",
    "HookOutcome",
    "HookRegistry",
    "HookResult",
    "HookSpec",
    "PluginHookLike",
    "combine",
    "hook_hash",
    "hook_key",
    "hooks_from_config",
    "hooks_from_plugins",
    "matches",
    "parse_answer",
    "run_hook",
]
