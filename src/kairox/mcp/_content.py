"""MCP results and tool definitions in Kairox's own types, read from the wire's JSON (no SDK types here): what
the MCP schema requires is checked field by field, and a malformed part is a :class:`WireError` naming it."""

import base64
from dataclasses import dataclass, field, replace
from typing import Any

from kairox._util._json import JsonObject
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


class InvalidResult(Exception):
    """The server answered, but not with what the method returns (or broke the tool's output schema)."""


class WireError(InvalidResult, ValueError):
    """A server's message that does not have the shape the MCP schema gives it; the text names the fields."""


_STR = (str,)
_STR_OR_NONE = (str, type(None))
_DICT_OR_NONE = (dict, type(None))
_HINTS = {
    "readOnlyHint": "read_only_hint",
    "destructiveHint": "destructive_hint",
    "idempotentHint": "idempotent_hint",
    "openWorldHint": "open_world_hint",
}
_TASK_SUPPORT = ("forbidden", "optional", "required", None)


def _tool_field_problems(item: dict[str, Any]) -> list[str]:
    bad = [key for key, kinds in (("name", _STR), ("inputSchema", (dict,))) if not isinstance(item.get(key), kinds)]
    bad += [
        key
        for key, kinds in (
            ("description", _STR_OR_NONE),
            ("title", _STR_OR_NONE),
            ("outputSchema", _DICT_OR_NONE),
            ("_meta", _DICT_OR_NONE),
        )
        if not isinstance(item.get(key), kinds)
    ]
    hints = item.get("annotations")
    if not isinstance(hints, _DICT_OR_NONE):
        bad.append("annotations")
    elif hints:
        bad += [f"annotations.{key}" for key in _HINTS if not isinstance(hints.get(key), (bool, type(None)))]
        if not isinstance(hints.get("title"), _STR_OR_NONE):
            bad.append("annotations.title")
    execution = item.get("execution")
    if not isinstance(execution, _DICT_OR_NONE) or (execution and execution.get("taskSupport") not in _TASK_SUPPORT):
        bad.append("execution")
    icons = item.get("icons")
    if icons is not None and not (
        isinstance(icons, list) and all(isinstance(i, dict) and isinstance(i.get("src"), str) for i in icons)
    ):
        bad.append("icons")
    return bad


def tool_from_wire(item: Any, index: int = 0) -> McpTool:
    """One entry of a ``tools/list`` page. An entry with malformed fields comes back with its ``problem`` set (the
    listing goes on without it); a readable one with a schema Kairox cannot use carries that as its problem."""
    bad = _tool_field_problems(item) if isinstance(item, dict) else ["(tool)"]
    if bad:
        name = item.get("name") if isinstance(item, dict) else None
        label = name if isinstance(name, str) and name else f"#{index}"
        return McpTool(name=label, problem=f"the server listed it with invalid fields: {', '.join(sorted(set(bad)))}")
    schema = item["inputSchema"]
    output = item.get("outputSchema")
    return McpTool(
        name=item["name"],
        problem=schema_problem(schema),
        description=item.get("description") or "",
        input_schema=dict(schema),
        output_schema=dict(output) if output is not None else None,
        annotations=annotations_from_wire(item.get("annotations") or {}),
        title=item.get("title"),
        task_support=(item.get("execution") or {}).get("taskSupport"),
        meta=dict(item.get("_meta") or {}),
    )


def annotations_from_wire(hints: dict[str, Any]) -> ToolAnnotations:
    """A tool's ``annotations`` object (its title and hints) as Kairox's."""
    return ToolAnnotations(title=hints.get("title"), **{field: hints.get(key) for key, field in _HINTS.items()})


def tools_page(raw: Any) -> tuple[list[McpTool], str | None]:
    """A ``tools/list`` result: its tools (unreadable ones with their ``problem``) and the next cursor."""
    items = raw.get("tools") if isinstance(raw, dict) else None
    if not isinstance(items, list):
        raise WireError("the server's tools/list result has no list of tools")
    cursor = raw.get("nextCursor")
    return [tool_from_wire(item, index) for index, item in enumerate(items)], cursor if isinstance(
        cursor, str
    ) else None


def _resource_contents(item: Any, where: str) -> EmbeddedResource:
    if (
        not isinstance(item, dict)
        or not isinstance(item.get("uri"), str)
        or not isinstance(item.get("mimeType"), _STR_OR_NONE)
    ):
        raise WireError(f"{where} is not a resource with a uri")
    text, blob = item.get("text"), item.get("blob")
    if isinstance(text, str):
        return EmbeddedResource(uri=item["uri"], mime_type=item.get("mimeType"), text=text)
    if isinstance(blob, str):
        return EmbeddedResource(uri=item["uri"], mime_type=item.get("mimeType"), blob=blob)
    raise WireError(f"{where} has neither text nor blob")


def _media(block: dict[str, Any], where: str) -> tuple[str, str]:
    data, mime = block.get("data"), block.get("mimeType")
    if not isinstance(data, str) or not isinstance(mime, str):
        raise WireError(f"{where} needs data and mimeType as strings")
    return data, mime


_MODELED = {
    "text": {"type", "text"},
    "image": {"type", "data", "mimeType"},
    "audio": {"type", "data", "mimeType"},
    "resource": {"type", "resource"},
    "resource_link": {"type", "uri", "name", "description", "mimeType"},
}
_MODELED_RESOURCE = {"uri", "mimeType", "text", "blob"}


def content_from_wire(block: Any, where: str = "content[0]") -> Content:
    """One MCP content block as a Kairox content part, with the fields Kairox does not model kept in ``extra``.
    A block of a type Kairox does not know becomes a text note; a known type with missing or mistyped fields is a
    :class:`WireError`."""
    part = _content_part(block, where)
    if not isinstance(block, dict) or block.get("type", "text") not in _MODELED:
        return part
    extra = {k: v for k, v in block.items() if k not in _MODELED[block.get("type", "text")]}
    resource = block.get("resource")
    if isinstance(resource, dict) and (nested := {k: v for k, v in resource.items() if k not in _MODELED_RESOURCE}):
        extra["resource"] = nested
    return replace(part, extra=extra) if extra else part


def _content_part(block: Any, where: str) -> Content:
    if not isinstance(block, dict):
        raise WireError(f"{where} is not an object")
    if not isinstance(block.get("annotations"), _DICT_OR_NONE) or not isinstance(block.get("_meta"), _DICT_OR_NONE):
        raise WireError(f"{where} has annotations or _meta that are not objects")
    kind = block.get("type", "text")
    if kind == "text":
        if not isinstance(block.get("text"), str):
            raise WireError(f"{where}.text is not a string")
        return TextContent(text=block["text"])
    if kind == "image":
        data, mime = _media(block, where)
        return ImageContent(data=data, mime_type=mime)
    if kind == "audio":
        data, mime = _media(block, where)
        return AudioContent(data=data, mime_type=mime)
    if kind == "resource":
        return _resource_contents(block.get("resource"), f"{where}.resource")
    if kind == "resource_link":
        uri, name = block.get("uri"), block.get("name")
        description, link_mime = block.get("description"), block.get("mimeType")
        if not (isinstance(uri, str) and isinstance(name, str)):
            raise WireError(f"{where} is a resource_link without a uri and a name")
        if not (isinstance(description, _STR_OR_NONE) and isinstance(link_mime, _STR_OR_NONE)):
            raise WireError(f"{where} has a description or mimeType that is not a string")
        return ResourceLink(uri=uri, name=name, description=description, mime_type=link_mime)
    return TextContent(text=f"[content of type {kind!r} that Kairox does not render]")


def result_from_wire(raw: Any) -> ToolResult:
    """A ``tools/call`` result as a :class:`ToolResult`; a result without the schema's shape is a :class:`WireError`."""
    if not isinstance(raw, dict):
        raise WireError("the result is not an object")
    blocks = raw.get("content")
    if not isinstance(blocks, list):
        raise WireError("the result has no content list")
    is_error = raw.get("isError", False)
    meta = raw.get("_meta")
    if not isinstance(is_error, bool) or not isinstance(meta, _DICT_OR_NONE):
        raise WireError("isError is not a boolean or _meta is not an object")
    structured = raw.get("structuredContent")
    if structured is not None and not isinstance(structured, dict):
        structured = {"value": structured}  # 2026 servers may return any JSON value
    return ToolResult(
        content=tuple(content_from_wire(block, f"content[{i}]") for i, block in enumerate(blocks)),
        structured=structured,
        is_error=is_error,
        meta=dict(meta or {}),
    )


def _decoded(blob: str) -> str | None:
    """A base64 text blob as text; None when the server sent something that is not base64."""
    try:
        return base64.b64decode(blob, validate=True).decode("utf-8", errors="replace")
    except ValueError:
        return None


def resource_contents_from_wire(raw: Any) -> ToolResult:
    """A ``resources/read`` result: text parts as text (a base64 blob of a ``text/*`` type decoded), others whole."""
    items = raw.get("contents") if isinstance(raw, dict) else None
    if not isinstance(items, list):
        raise WireError("the resources/read result has no contents list")
    parts: list[Content] = []
    for index, item in enumerate(items):
        part = _resource_contents(item, f"contents[{index}]")
        if part.text is not None:
            parts.append(TextContent(text=part.text))
        elif (
            part.blob is not None
            and (part.mime_type or "").startswith("text/")
            and (text := _decoded(part.blob)) is not None
        ):
            parts.append(TextContent(text=text))
        else:
            parts.append(part)
    return ToolResult(content=tuple(parts))


def resources_page(raw: Any, *, templates: bool) -> tuple[list[McpResource], str | None]:
    """A ``resources/list`` or ``resources/templates/list`` result; entries without a uri and a name are skipped."""
    key, uri_key = ("resourceTemplates", "uriTemplate") if templates else ("resources", "uri")
    items = raw.get(key) if isinstance(raw, dict) else None
    if not isinstance(items, list):
        raise WireError(f"the result has no {key} list")
    found = [
        McpResource(
            uri=item[uri_key],
            name=item["name"],
            description=item.get("description") if isinstance(item.get("description"), str) else None,
            mime_type=item.get("mimeType") if isinstance(item.get("mimeType"), str) else None,
            template=templates,
        )
        for item in items
        if isinstance(item, dict) and isinstance(item.get(uri_key), str) and isinstance(item.get("name"), str)
    ]
    cursor = raw.get("nextCursor")
    return found, cursor if isinstance(cursor, str) else None


def prompts_page(raw: Any) -> tuple[list[str], str | None]:
    items = raw.get("prompts") if isinstance(raw, dict) else None
    if not isinstance(items, list):
        raise WireError("the prompts/list result has no prompts list")
    cursor = raw.get("nextCursor")
    names = [item["name"] for item in items if isinstance(item, dict) and isinstance(item.get("name"), str)]
    return names, cursor if isinstance(cursor, str) else None
