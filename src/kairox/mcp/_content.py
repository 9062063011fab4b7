"""MCP results and tool definitions in Kairox's own types; SDK types stop here."""

import base64
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from kairox._util import JsonObject
from kairox.mcp._schemas import schema_problem
from kairox.tools import (
    AudioContent,
    Content,
    EmbeddedResource,
    ImageContent,
    ResourceLink,
    TextContent,
    ToolAnnotations,
    ToolResult,
)

if TYPE_CHECKING:  # the SDK's types load with the first connection, after its server was spawned
    import mcp_types


@dataclass(frozen=True, kw_only=True, slots=True)
class McpTool:
    """One tool as a server listed it (its own name, not the registry name)."""

    name: str
    description: str = ""
    input_schema: JsonObject = field(default_factory=lambda: {"type": "object"})
    output_schema: JsonObject | None = None
    annotations: ToolAnnotations = field(default_factory=ToolAnnotations)
    title: str | None = None
    task_support: str | None = None
    """``required`` means the server only runs it as a task; Kairox leaves such tools out."""
    meta: JsonObject = field(default_factory=dict)
    problem: str | None = None
    """Why the tool cannot be offered (its schema loops, cannot be resolved, or the server sent it malformed)."""


@dataclass(frozen=True, kw_only=True, slots=True)
class McpResource:
    uri: str
    name: str
    description: str | None = None
    mime_type: str | None = None
    template: bool = False
    """True for a resource template (``uri`` then holds the RFC 6570 template)."""


def is_offered(tool: McpTool, enabled_tools: list[str] | None, disabled_tools: list[str]) -> bool:
    """``enabled_tools`` then ``disabled_tools``; tools the server runs only as tasks are never offered."""
    if enabled_tools is not None and tool.name not in enabled_tools:
        return False
    return tool.name not in disabled_tools and tool.task_support != "required"


def tool_from_mcp(tool: "mcp_types.Tool") -> McpTool:
    hints = tool.annotations
    annotations = ToolAnnotations(
        title=hints.title if hints else None,
        read_only_hint=hints.read_only_hint if hints else None,
        destructive_hint=hints.destructive_hint if hints else None,
        idempotent_hint=hints.idempotent_hint if hints else None,
        open_world_hint=hints.open_world_hint if hints else None,
    )
    return McpTool(
        name=tool.name,
        problem=schema_problem(tool.input_schema),
        description=tool.description or "",
        input_schema=dict(tool.input_schema),
        output_schema=dict(tool.output_schema) if tool.output_schema is not None else None,
        annotations=annotations,
        title=tool.title,
        task_support=tool.execution.task_support if tool.execution is not None else None,
        meta=dict(tool.meta or {}),
    )


def _embedded(resource: "mcp_types.TextResourceContents | mcp_types.BlobResourceContents") -> EmbeddedResource:
    import mcp_types

    if isinstance(resource, mcp_types.TextResourceContents):
        return EmbeddedResource(uri=str(resource.uri), mime_type=resource.mime_type, text=resource.text)
    return EmbeddedResource(uri=str(resource.uri), mime_type=resource.mime_type, blob=resource.blob)


def content_from_mcp(block: Any) -> Content:
    """One MCP content block as a Kairox content part; an unknown block becomes a text note, not a crash."""
    import mcp_types

    if isinstance(block, mcp_types.TextContent):
        return TextContent(text=block.text)
    if isinstance(block, mcp_types.ImageContent):
        return ImageContent(data=block.data, mime_type=block.mime_type)
    if isinstance(block, mcp_types.AudioContent):
        return AudioContent(data=block.data, mime_type=block.mime_type)
    if isinstance(block, mcp_types.EmbeddedResource):
        return _embedded(block.resource)
    if isinstance(block, mcp_types.ResourceLink):
        return ResourceLink(uri=str(block.uri), name=block.name, description=block.description, mime_type=block.mime_type)
    kind = getattr(block, "type", type(block).__name__)
    return TextContent(text=f"[content of type {kind!r} that Kairox does not render]")


def result_from_mcp(result: "mcp_types.CallToolResult") -> ToolResult:
    structured = result.structured_content
    if structured is not None and not isinstance(structured, dict):
        structured = {"value": structured}  # 2026 servers may return any JSON value
    return ToolResult(
        content=tuple(content_from_mcp(block) for block in result.content),
        structured=structured,
        is_error=result.is_error,
        meta=dict(result.meta or {}),
    )


def _decoded(blob: str) -> str | None:
    """A base64 text blob as text; None when the server sent something that is not base64."""
    try:
        return base64.b64decode(blob, validate=True).decode("utf-8", errors="replace")
    except ValueError:
        return None


def resource_contents_from_mcp(result: "mcp_types.ReadResourceResult") -> ToolResult:
    parts: list[Content] = []
    for item in result.contents:
        part = _embedded(item)
        if part.text is not None:
            parts.append(TextContent(text=part.text))
        elif part.blob is not None and (part.mime_type or "").startswith("text/") and (text := _decoded(part.blob)) is not None:
            parts.append(TextContent(text=text))
        else:
            parts.append(part)
    return ToolResult(content=tuple(parts))
