"""Hooks (H1-H3): command hooks from ``[hooks]`` and from plugins, run around sessions, turns and tool calls.
``HookRegistry`` implements the ToolRegistry's ``ToolHooks`` interface."""

from kairox.hooks._approval import HookApprovalStore
from kairox.hooks._events import HookFinished
from kairox.hooks._model import CLAUDE_TOOL_NAMES, HookEvent, HookOutcome
from kairox.hooks._registry import HookRegistry

__all__ = ["CLAUDE_TOOL_NAMES", "HookApprovalStore", "HookEvent", "HookFinished", "HookOutcome", "HookRegistry"]
