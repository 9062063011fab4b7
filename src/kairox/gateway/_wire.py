"""Kairox's tools, results, skills and upstream resources in the MCP SDK's types."""

import fnmatch
import hashlib
import re
from collections.abc import Iterator, Sequence
from typing import Any

import mcp_types as types
from pydantic import TypeAdapter

from kairox.skills import SkillArgument, SkillDef
from kairox.tools import (
    AudioContent,
    Content,
    EmbeddedResource,
    ImageContent,
    ResourceLink,
    TextContent,
    ToolResult,
    ToolSource,
    ToolSpec,
)

_BLOCK: TypeAdapter[types.ContentBlock] = TypeAdapter(types.ContentBlock)

RESOURCE_PREFIX = "kairox://mcp/"
"""Upstream resources are served as ``kairox://mcp/<server>/<the server's own URI>``."""


HOST_NAME_LIMIT = 64
"""What Claude Code, Codex and Gemini CLI accept as a tool name, their own prefix included."""


def host_prefix(server: str) -> str:
    """The longest prefix a host puts before a served tool's name: ``mcp__<server>__`` (Claude Code, Codex;
    Gemini CLI's ``mcp_<server>_`` is shorter)."""
    return f"mcp__{server}__"


def host_names(wire: dict[str, str], *, budget: int) -> dict[str, str]:
    """``wire`` (registry name -> wire name) with every name longer than ``budget`` cut and given a stable
    8-character hash of its registry name, so the host's name for it stays within its limit and never changes
    between runs; a name a cut one would clash with is given a hash too."""
    budget = max(budget, 16)
    out: dict[str, str] = {}
    taken = {name for name in wire.values() if len(name) <= budget}
    for registry_name, name in wire.items():
        if len(name) > budget:
            digest = hashlib.sha256(registry_name.encode()).hexdigest()[:8]
            name = f"{name[: budget - 9]}_{digest}"
            while name in taken:  # another tool's own name: hash again
                digest = hashlib.sha256(f"{digest}{registry_name}".encode()).hexdigest()[:8]
                name = f"{name[: budget - 9]}_{digest}"
        taken.add(name)
        out[registry_name] = name
    return out


def selected(names: tuple[str, str], expose: Sequence[str], hide: Sequence[str]) -> bool:
    """Whether a tool (registry name, wire name) passes ``--expose`` (any, when given) and ``--hide`` (none)."""
    if expose and not any(fnmatch.fnmatchcase(n, p) for p in expose for n in names):
        return False
    return not any(fnmatch.fnmatchcase(n, p) for p in hide for n in names)


def tool_to_mcp(spec: ToolSpec, wire: str) -> types.Tool:
    hints = spec.annotations
    annotations = types.ToolAnnotations(
        title=hints.title,
        read_only_hint=hints.read_only_hint,
        destructive_hint=hints.destructive_hint,
        idempotent_hint=hints.idempotent_hint,
        open_world_hint=hints.open_world_hint,
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
        _meta={
            "kairox/name": spec.name,
            "kairox/source": str(spec.source),
            **({"kairox/origin": spec.origin} if spec.origin else {}),
        },
    )


def _content_to_mcp(item: Content) -> types.ContentBlock:
    block = _modeled_to_mcp(item)
    if not item.extra:
        return block
    # an upstream's block as it came: its annotations, _meta, title ... back beside the fields Kairox models
    wire = block.model_dump(by_alias=True, exclude_none=True, mode="json")
    nested = item.extra.get("resource")
    wire.update({k: v for k, v in item.extra.items() if k != "resource"})
    if isinstance(nested, dict) and isinstance(wire.get("resource"), dict):
        wire["resource"] = {**wire["resource"], **nested}
    return _BLOCK.validate_python(wire)  # type: ignore[no-any-return]


def _modeled_to_mcp(item: Content) -> types.ContentBlock:
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
            content=[
                *(_content_to_mcp(c) for c in result.content),
                types.TextContent(text="[structured content left out]"),
            ],
            is_error=True,
        )
    if structured is not None and (spec is None or spec.source is not ToolSource.MCP):
        structured = carrying_text(structured, result.text_content())
    return types.CallToolResult(
        content=[_content_to_mcp(c) for c in result.content], structured_content=structured, is_error=result.is_error
    )


# --- the structured form carries the text ---------------------------------------------------------------------
# Claude Code and Codex give the model a result's structuredContent and drop its text when both are present, so
# whatever Kairox's own text says must also be in the structured form. An upstream's result is its own and passes
# through as it came.

_WORD = re.compile(r"\w+")


def _leaves(value: object, keys: set[str]) -> Iterator[object]:
    if isinstance(value, dict):
        for key, item in value.items():
            keys.update(w.lower() for w in _WORD.findall(str(key).replace("_", " ")))
            yield from _leaves(item, keys)
    elif isinstance(value, list | tuple):
        for item in value:
            yield from _leaves(item, keys)
    else:
        yield value


def uncarried_lines(structured: object, text: str) -> list[str]:
    """The lines of ``text`` the structured form does not carry. A line is carried when it is part of a string
    the structured form holds, or when what is left of it, once those strings are taken out, is only words of its
    keys and its numbers and flags (``exit code: 0`` of ``{"exit_code": 0}``, ``app.py:3: x = 1`` of a match)."""
    words: set[str] = set()
    strings: list[str] = []
    for leaf in _leaves(structured, words):
        if isinstance(leaf, str):
            if leaf.strip():
                strings.append(leaf)
        else:  # numbers, flags, null: each as it may be written (1.5 -> "1", "5"; True -> "true")
            words.update(_WORD.findall(str(leaf).lower()))
    lines_held = {line.strip() for s in strings for line in s.splitlines()}
    longest_first = sorted({s.strip() for s in strings}, key=len, reverse=True)
    missing: list[str] = []
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line in lines_held or any(line in s for s in strings):
            continue
        rest = line
        for s in longest_first:
            rest = rest.replace(s, " ")
        if not all(w.lower() in words for w in _WORD.findall(rest)):
            missing.append(line)
    return missing


def carrying_text(structured: dict[str, Any], text: str) -> dict[str, Any]:
    """``structured``, with the lines of ``text`` it does not carry added as ``notes`` (a hook's note, a summary
    such as ``edited PATH: 1 replacement(s)``)."""
    missing = uncarried_lines(structured, text)
    if not missing:
        return structured
    notes = structured.get("notes")
    if notes is None or isinstance(notes, list):
        return {**structured, "notes": [*(notes or []), *missing]}
    return {**structured, "text": text}


def prompt_to_mcp(skill: SkillDef) -> types.Prompt:
    return types.Prompt(
        name=skill.qualified_name,
        description=skill.description,
        arguments=[
            types.PromptArgument(name=a.name, description=a.description or None, required=a.required)
            for a in skill.arguments
        ]
        or None,
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


def prompt_argument_values(argument: SkillArgument, typed: str) -> list[str]:
    """Completions of a skill argument: its default, and ``true`` / ``false`` for a boolean, that start with
    ``typed``."""
    options: list[str] = []
    if argument.default is not None:
        options.append(str(argument.default).lower() if isinstance(argument.default, bool) else str(argument.default))
    if argument.type == "boolean":
        options += [v for v in ("true", "false") if v not in options]
    return [v for v in options if v.startswith(typed)]


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
