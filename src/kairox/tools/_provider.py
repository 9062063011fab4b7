"""The interface every tool source implements, and the hook interface the registry calls around a call."""

import abc
import enum
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from types import TracebackType
from typing import Protocol, Self

from kairox._util._json import JsonObject
from kairox.errors import Diagnostic
from kairox.tools._model import CallContext, ToolCall, ToolResult, ToolSpec

ToolsChangedListener = Callable[["ToolProvider", Sequence[ToolSpec]], Awaitable[None] | None]


class ToolProvider(abc.ABC):
    """A source of tools (built-ins, one MCP server, one plugin, the skill tool, LSP, DAP).

    Used as an async context: entering starts whatever the provider needs, exiting stops it, in the same
    task. ``list_tools`` gives the current specs; ``call_tool`` receives the registry name of a spec it listed.
    A provider whose tool list changes (MCP ``list_changed``) calls ``_tools_changed`` and the registry replaces
    all of its tools at once.
    """

    origin: str
    """Stable name of this source, e.g. ``builtin``, the MCP server's name, ``plugin:<name>``."""

    def __init__(self) -> None:
        self._listeners: list[ToolsChangedListener] = []
        self.diagnostics: list[Diagnostic] = []

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        return None

    @abc.abstractmethod
    async def list_tools(self) -> Sequence[ToolSpec]: ...

    @abc.abstractmethod
    async def call_tool(self, name: str, arguments: JsonObject, context: CallContext) -> ToolResult: ...

    def on_tools_changed(self, listener: ToolsChangedListener) -> None:
        self._listeners.append(listener)

    async def _tools_changed(self, specs: Sequence[ToolSpec]) -> None:
        for listener in list(self._listeners):
            outcome = listener(self, specs)
            if outcome is not None:
                await outcome


class HookDecision(enum.StrEnum):
    ALLOW = "allow"
    ASK = "ask"
    DENY = "deny"


@dataclass(frozen=True, kw_only=True, slots=True)
class PreToolUseOutcome:
    """What the ``pre_tool_use`` hooks said about a call, combined (deny beats ask beats allow)."""

    decision: HookDecision | None = None
    """``None`` when no hook expressed an opinion."""
    reason: str | None = None
    updated_input: JsonObject | None = None
    additional_context: str | None = None
    diagnostics: tuple[Diagnostic, ...] = ()


@dataclass(frozen=True, kw_only=True, slots=True)
class PostToolUseOutcome:
    additional_context: str | None = None
    block_reason: str | None = None
    """A hook said the result should not go to the model as it is; the reason is appended."""
    diagnostics: tuple[Diagnostic, ...] = field(default=())


class ToolHooks(Protocol):
    """What the registry calls around every tool call; ``kairox.hooks`` implements it.

    The ``listens_*`` questions let the registry skip a hook point no hook would answer: they must be True whenever
    the matching call could do anything (decide, change input, add context, emit an event)."""

    def listens_pre_tool_use(self, tool: str) -> bool: ...

    def listens_post_tool_use(self, tool: str) -> bool: ...

    async def pre_tool_use(self, call: ToolCall, spec: ToolSpec) -> PreToolUseOutcome: ...

    async def post_tool_use(self, call: ToolCall, spec: ToolSpec, result: ToolResult) -> PostToolUseOutcome: ...
