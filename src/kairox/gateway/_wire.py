"""Kairox's tools, results, skills and upstream resources in the MCP SDK's types."""

import fnmatch
from collections.abc import Sequence
from typing import Any

import mcp_types as types

from kairox.skills import SkillDef
from kairox.tools import (
    AudioContent,
    Content,
    EmbeddedResource,
    ImageContent,
    ResourceLink,
    TextContent,
    ToolResult,
    ToolSpec,
)

RESOURCE_PREFIX = "kairox://mcp/"
"""Upstream resources are served as ``kairox://mcp/<server>/<the server's own URI>``."""


def selected(names: tuple[str, str], expose: Sequence[str], hide: Sequence[str]) -> bool:
    """Whether a tool (registry name, wire name) passes ``--expose`` (any, when given) and ``--hide`` (none)."""
    if expose and not any(fnmatch.fnmatchcase(n, p) for p in expose for n in names):
        return False
    return not any(fnmatch.fnmatchcase(n, p) for p in hide for n in names)


def tool_to_mcp(spec: ToolSpec, wire: str) -> types.Tool:
    hints = spec.annotations
    annotations = types.ToolAnnotations(
        title=hints.title, read_only_hint=hints.read_only_hint, destructive_hint=hints.destructive_hint,
        idempotent_hint=hints.idempotent_hint, open_world_hint=hints.open_world_hint,
    )
    schema = dict(spec.input_schema)
    schema.setdefault("type", "object")
    return types.Tool(
        name=wire,
        title=hints.title,
        description=spec.description,
        input_schema=schema,
        output_schema=spec.output_schema,
        annotations=annotations if annotations.model_dump(exclude_none=True) else None,
        _meta={"kairox/name": spec.name, "kairox/source": str(spec.source), **({"kairox/origin": spec.origin} if spec.origin else {})},
    )


def _content_to_mcp(item: Content) -> types.ContentBlock:
    if isinstance(item, TextContent):
        return types.TextContent(text=item.text)
    if isinstance(item, ImageContent):
        return types.ImageContent(data=item.data, mime_type=item.mime_type)
    if isinstance(item, AudioContent):
        return types.AudioContent(data=item.data, mime_type=item.mime_type)
    if isinstance(item, EmbeddedResource):
        return types.EmbeddedResource(resource=_resource_contents(item, item.uri))
    assert isinstance(item, ResourceLink)
    return types.ResourceLink(uri=item.uri, name=item.name, description=item.description, mime_type=item.mime_type)


def result_to_mcp(result: ToolResult, spec: ToolSpec | None) -> types.CallToolResult:
    structured = result.structured
    if structured is None and spec is not None and spec.output_schema is not None and not result.is_error:
        # a result the gate changed (cut, or a hook's note) lost its structure: say so rather than break the schema
        return types.CallToolResult(
            content=[*(_content_to_mcp(c) for c in result.content), types.TextContent(text="[structured content left out]")],
            is_error=True,
        )
    return types.CallToolResult(content=[_content_to_mcp(c) for c in result.content], structured_content=structured, is_error=result.is_error)


def prompt_to_mcp(skill: SkillDef) -> types.Prompt:
    return types.Prompt(
        name=skill.qualified_name,
        description=skill.description,
        arguments=[types.PromptArgument(name=a.name, description=a.description or None, required=a.required) for a in skill.arguments] or None,
    )


def resource_uri(server: str, uri: str) -> str:
    return f"{RESOURCE_PREFIX}{server}/{uri}"


def split_resource_uri(uri: str) -> tuple[str, str] | None:
    """(server, the server's URI) of a namespaced URI, or None."""
    if not uri.startswith(RESOURCE_PREFIX):
        return None
    server, sep, original = uri[len(RESOURCE_PREFIX) :].partition("/")
    return (server, original) if sep and server and original else None


def _resource_contents(item: EmbeddedResource, uri: str) -> types.TextResourceContents | types.BlobResourceContents:
    if item.blob is not None:
        return types.BlobResourceContents(uri=uri, mime_type=item.mime_type, blob=item.blob)
    return types.TextResourceContents(uri=uri, mime_type=item.mime_type, text=item.text or "")


def resource_contents(result: ToolResult, uri: str) -> list[types.TextResourceContents | types.BlobResourceContents]:
    """A read_resource tool result as ``resources/read`` contents, under the namespaced URI."""
    out: list[types.TextResourceContents | types.BlobResourceContents] = []
    for item in result.content:
        if isinstance(item, EmbeddedResource):
            out.append(_resource_contents(item, uri))
        elif isinstance(item, TextContent):
            out.append(types.TextResourceContents(uri=uri, mime_type="text/plain", text=item.text))
    return out


def prompt_arguments(skill: SkillDef, given: dict[str, str] | None) -> dict[str, Any]:
    """Prompt arguments arrive as strings: typed ones parsed back (``"3"`` -> 3 for an integer argument)."""
    declared = {a.name: a.type for a in skill.arguments}
    out: dict[str, Any] = {}
    for key, value in (given or {}).items():
        kind = declared.get(key, "string")
        try:
            if kind == "integer":
                out[key] = int(value)
            elif kind == "number":
                out[key] = float(value)
            elif kind == "boolean":
                out[key] = value.strip().lower() in ("true", "1", "yes")
            else:
                out[key] = value
        except ValueError:
            out[key] = value  # the skill's own validation says what is wrong
    return out
