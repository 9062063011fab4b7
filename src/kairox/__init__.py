"""Kairox: the extension layer for LLM coding agents.

The names below are Kairox's public API for embedding it; they follow semantic versioning. Everything else is
importable from its package (``kairox.registry``, ``kairox.mcp`` ...) but may change in any release.

Open a workspace's extension context (config, tools behind the gate, prompt context, diagnostics, events)::

    import kairox

    async with kairox.build_extension_context(workspace, approver=my_approver, events=my_sink) as context:
        definitions, _ = context.registry.definitions(kairox.ModelProvider.OPENAI)    # or ANTHROPIC
        result = await context.registry.call(kairox.ToolCall(name="fs.read", arguments={"path": "README.md"}))
        system_prompt = context.prompt_context

or an agent session over it, with Kairox's model client (from the configuration) or your own ``ModelClient``::

    async with kairox.open_session(workspace, client=my_client, approver=my_approver) as session:
        turn = await session.run_turn("Where is Cart.total defined?")

or, as every Kairox front end does, the context with a session when a model is configured and without one
otherwise (``opened.session`` is None then, ``opened.setup_problem`` says why)::

    async with kairox.open_workspace(workspace, approver=my_approver) as opened:
        context, session = opened.context, opened.session

Leaving any of these blocks stops every server Kairox started. ``docs/embedding.md`` has worked examples.

``import kairox`` stays light: each name loads its package when it is first read (PEP 562), so ``kairox --help``
starts fast. A class, once read from here, reports itself as ``kairox.Name`` (in reprs and tracebacks) when its own
annotations are all real types, so ``typing.get_type_hints`` and pickling resolve it the same way.
"""

import sys

from kairox._version import __version__

TYPE_CHECKING = False  # not typing's: importing typing would double the cost of `import kairox`
if TYPE_CHECKING:
    from typing import Any

    from kairox.agent import (
        AgentSession,
        ModelClient,
        ModelRequest,
        ResponseEnd,
        TextDelta,
        ToolCallPart,
        Usage,
        open_session,
        open_workspace,
    )
    from kairox.errors import KairoxError
    from kairox.events import Event, EventSink
    from kairox.policy import ApprovalAnswer, ApprovalRequest, Approver
    from kairox.registry import ModelProvider, ToolCallDecided, ToolRegistry
    from kairox.runtime import ExtensionContext, build_extension_context
    from kairox.tools import ToolCall, ToolResult

_EXPORTS: dict[str, tuple[str, ...]] = {
    "kairox.runtime": ("ExtensionContext", "build_extension_context"),
    "kairox.registry": ("ModelProvider", "ToolCallDecided", "ToolRegistry"),
    "kairox.tools": ("ToolCall", "ToolResult"),
    "kairox.policy": ("ApprovalAnswer", "ApprovalRequest", "Approver"),
    "kairox.events": ("Event", "EventSink"),
    "kairox.agent": (
        "AgentSession",
        "ModelClient",
        "ModelRequest",
        "ResponseEnd",
        "TextDelta",
        "ToolCallPart",
        "Usage",
        "open_session",
        "open_workspace",
    ),
    "kairox.errors": ("KairoxError",),
}
_WHERE = {name: module for module, names in _EXPORTS.items() for name in names}

__all__ = [
    "AgentSession",
    "ApprovalAnswer",
    "ApprovalRequest",
    "Approver",
    "Event",
    "EventSink",
    "ExtensionContext",
    "KairoxError",
    "ModelClient",
    "ModelProvider",
    "ModelRequest",
    "ResponseEnd",
    "TextDelta",
    "ToolCall",
    "ToolCallDecided",
    "ToolCallPart",
    "ToolRegistry",
    "ToolResult",
    "Usage",
    "__version__",
    "build_extension_context",
    "open_session",
    "open_workspace",
]


def __getattr__(name: str) -> "Any":
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module 'kairox' has no attribute {name!r}")
    __import__(module)  # the import statement's own path, which -X importtime reports
    value = getattr(sys.modules[module], name)
    if isinstance(value, type) and _names_resolve_anywhere(value):
        value.__module__ = __name__
    globals()[name] = value  # later reads are plain attribute reads
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_WHERE})


def _names_resolve_anywhere(cls: type) -> bool:
    """Whether the class's own annotations are real types, not strings: ``typing.get_type_hints`` resolves strings
    in the module ``__module__`` names, so only such a class may say it lives in ``kairox``."""
    import inspect  # loaded with the first name read, never by `import kairox`

    annotations = inspect.get_annotations(cls)
    return not any(isinstance(hint, str) for hint in annotations.values())
