"""``kairox serve --search``: three tools instead of thousands (R2, G1).

A client is served ``kairox_search_tools`` (the served tools best matching a task, with their full definitions
and why they matched), ``kairox_add_tools`` (list these tools from now on for this session; the client hears
``notifications/tools/list_changed``) and ``kairox_remove_tools`` (list them no more), plus the tools it added.
The index holds only what the gateway serves: a hidden, ``--hide``-den or name-denied tool is never found. A
found tool is called through the gate like any other, and may be called by its name without being added (a
stateless 2026-revision client keeps no session to add to).
"""

import json
from collections.abc import Mapping, Sequence
from typing import Any

import mcp_types as types

from kairox.registry import ToolIndex
from kairox.tools import ToolSpec

SEARCH_TOOL = "kairox_search_tools"
ADD_TOOL = "kairox_add_tools"
REMOVE_TOOL = "kairox_remove_tools"
META_TOOLS = (SEARCH_TOOL, ADD_TOOL, REMOVE_TOOL)
MAX_RESULTS = 20

_NAMES = {
    "type": "array",
    "items": {"type": "string"},
    "minItems": 1,
    "description": "Tool names as kairox_search_tools returned them.",
}


def meta_tools() -> list[types.Tool]:
    """The three tools a ``--search`` gateway always lists."""
    read_only = types.ToolAnnotations(read_only_hint=True, open_world_hint=False)
    edits_the_list = types.ToolAnnotations(
        read_only_hint=False, destructive_hint=False, idempotent_hint=True, open_world_hint=False
    )
    return [
        types.Tool(
            name=SEARCH_TOOL,
            description=(
                "Find the tools for a task among every tool this server offers (MCP servers, language servers, "
                "plugins, Kairox's own). Returns the best matches with their full definitions and the words that "
                "matched. Call a found tool by its name, or add it with kairox_add_tools to have it listed."
            ),
            input_schema={
                "type": "object",
                "properties": {
                    "query": {
                        "type": "string",
                        "description": "What the tool should do, in a few words (e.g. 'create a github issue').",
                    },
                    "limit": {
                        "type": "integer",
                        "minimum": 1,
                        "maximum": MAX_RESULTS,
                        "description": "How many tools to return (default 5).",
                    },
                },
                "required": ["query"],
            },
            annotations=read_only,
        ),
        *(
            types.Tool(
                name=name,
                description=f"{what} for this session; the client is told the list changed.",
                input_schema={"type": "object", "properties": {"names": _NAMES}, "required": ["names"]},
                annotations=edits_the_list,
            )
            for name, what in (
                (ADD_TOOL, "List these tools (names from kairox_search_tools) in tools/list"),
                (REMOVE_TOOL, "Stop listing these tools (added with kairox_add_tools)"),
            )
        ),
    ]


class ServedIndex:
    """The search index over the served tools, built again only when what is served changed."""

    def __init__(self) -> None:
        self._index: ToolIndex | None = None
        self._key: tuple[tuple[str, int], ...] = ()
        self._specs: tuple[ToolSpec, ...] = ()
        self._wire: dict[str, str] = {}

    def search(self, served: Mapping[str, ToolSpec], query: str, limit: int) -> list[tuple[str, Any]]:
        """(wire name, ``ToolMatch``) of the best ``limit`` served tools for ``query``."""
        # the registry replaces a changed tool's spec whole: the
        # same spec objects under the same names are the same tools
        key = tuple((wire, id(spec)) for wire, spec in served.items())
        if self._index is None or key != self._key:
            self._specs = tuple(served.values())  # held, so the ids in the key stay theirs
            self._index, self._key = ToolIndex(list(served.values())), key
            self._wire = {spec.name: wire for wire, spec in served.items()}
        return [(self._wire[m.spec.name], m) for m in self._index.search(query, limit=limit)]


def text_result(payload: dict[str, Any], *, is_error: bool = False) -> types.CallToolResult:
    """A result whose text is the JSON of ``payload`` and whose structured form is ``payload`` itself."""
    return types.CallToolResult(
        content=[types.TextContent(text=json.dumps(payload, ensure_ascii=False))],
        structured_content=payload,
        is_error=is_error,
    )


def error_result(message: str) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(text=message)], is_error=True)


def names_argument(arguments: Mapping[str, Any], tool: str) -> list[str] | str:
    """The ``names`` list of an add/remove call, or the error message for the client."""
    names = arguments.get("names")
    if isinstance(names, str):
        names = [names]
    if not isinstance(names, list) or not names or not all(isinstance(n, str) and n for n in names):
        return f"{tool} needs `names`: a list of tool names as {SEARCH_TOOL} returned them"
    return list(dict.fromkeys(names))


def unknown_names(names: Sequence[str], served: Mapping[str, ToolSpec]) -> list[str]:
    return [name for name in names if name not in served]
