"""Schema adapters (R4): the tool definitions each model provider accepts.

- OpenAI strict: ``additionalProperties: false`` on every object, every property required (optional ones made
  nullable), keywords strict mode rejects moved into the description; non-strict when strict is impossible.
- Anthropic: an object schema at the root, no combinators there, no ``$schema``.
- Gemini: the OpenAPI subset: no ``$schema``, ``$ref``/``$defs`` inlined, no ``anyOf``/``oneOf``/``const``,
  one type per node (``nullable`` for null), string-only enums.

Wire names are the registry names with ``[^A-Za-z0-9_-]`` replaced (``fs.read`` -> ``fs_read``); ``wire_names``
makes them unique for a whole tool list (model providers and MCP clients of ``kairox serve`` share it).
"""

import copy
import enum
import hashlib
import json
from collections.abc import Iterable
from typing import Any

from kairox._util._json import JsonObject
from kairox._util._names import normalize_tool_name
from kairox.errors import KairoxError
from kairox.tools import ToolSpec


class ModelProvider(enum.StrEnum):
    OPENAI = "openai"
    ANTHROPIC = "anthropic"
    GEMINI = "gemini"


class SchemaAdapterError(KairoxError):
    """A tool's input schema cannot be made valid for a provider; the tool is left out for it."""


class _NotStrict(Exception):
    """OpenAI strict mode cannot express this schema."""


MAX_NAME = 64
_OPENAI_STRICT_KEYS = frozenset(
    """
    type properties required additionalProperties items enum const anyOf $ref $defs description
    """.split()
)
_GEMINI_KEYS = frozenset(
    """
    type format description nullable enum properties required items minItems maxItems minimum maximum title
    """.split()
)
_GEMINI_FORMATS = {"string": {"enum", "date-time"}, "number": {"float", "double"}, "integer": {"int32", "int64"}}
_DESCRIBED = tuple(
    "default minimum maximum exclusiveMinimum exclusiveMaximum minLength maxLength pattern format minItems maxItems "
    "multipleOf examples".split()
)
_NOT_STRICT = tuple(
    "allOf not if then else patternProperties dependentSchemas prefixItems unevaluatedProperties".split()
)
_MAX_STRICT_DEPTH = 10


def wire_name(name: str) -> str:
    return normalize_tool_name(name)[:MAX_NAME]


def wire_names(names: Iterable[str]) -> dict[str, str]:
    """A unique wire name (``^[A-Za-z0-9_-]{1,64}$``) for each registry name, in the given order.

    The first name keeps ``wire_name(name)``; a later one whose wire name is taken (``a.b`` and ``a_b``, or two
    long names cut to the same 64 characters) gets a stable 8-character hash of its full registry name instead of
    being dropped. Callers report the renamed ones: ``wire != wire_name(name)``.
    """
    taken: set[str] = set()
    out: dict[str, str] = {}
    for name in names:
        wire = wire_name(name)
        if not wire or wire in taken:
            digest = hashlib.sha256(name.encode()).hexdigest()[:8]
            wire = f"{wire[: MAX_NAME - 9]}_{digest}" if wire else f"tool_{digest}"
        taken.add(wire)
        out[name] = wire
    return out


def _root(spec: ToolSpec) -> JsonObject:
    schema = copy.deepcopy(spec.input_schema)
    schema.pop("$schema", None)
    if "type" not in schema and ("properties" in schema or not schema):
        schema["type"] = "object"
    if schema.get("type") != "object":
        raise SchemaAdapterError(
            f"tool {spec.name!r}: the input schema must describe an object, not {schema.get('type')!r}"
        )
    schema.setdefault("properties", {})
    return schema


def _with_notes(node: JsonObject, keys: tuple[str, ...] | frozenset[str], keep: frozenset[str]) -> JsonObject:
    """``node`` with the keywords not in ``keep`` dropped; the informative ones appended to the description."""
    notes = [f"{k}: {json.dumps(node[k])}" for k in keys if k in node and k not in keep]
    return _add_notes({k: v for k, v in node.items() if k in keep}, notes)


# --- OpenAI --------------------------------------------------------------------------------------------------


def _nullable(node: JsonObject) -> JsonObject:
    if "$ref" in node or ("anyOf" not in node and "type" not in node):
        return {"anyOf": [node, {"type": "null"}]}
    if "anyOf" in node:
        branches = node["anyOf"]
        if not any(b.get("type") == "null" for b in branches):
            node = {**node, "anyOf": [*branches, {"type": "null"}]}
        return node
    kind = node["type"]
    kinds = kind if isinstance(kind, list) else [kind]
    out = {**node, "type": kinds if "null" in kinds else [*kinds, "null"]}
    if "enum" in out and None not in out["enum"]:
        out["enum"] = [*out["enum"], None]
    return out


def _strict(node: Any, depth: int, *, root: bool = False) -> JsonObject:
    if not isinstance(node, dict):
        raise _NotStrict("a schema node is not an object")
    if depth > _MAX_STRICT_DEPTH:
        raise _NotStrict("nested deeper than strict mode allows")
    for bad in _NOT_STRICT:
        if bad in node:
            raise _NotStrict(f"`{bad}` is not supported in strict mode")
    node = dict(node)
    if "oneOf" in node:  # for generation, oneOf reads as anyOf; the registry validates against the original
        node["anyOf"] = node.pop("oneOf")
    out = _with_notes(node, _DESCRIBED, _OPENAI_STRICT_KEYS)
    ref = out.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/definitions/"):  # draft-07 spelling; strict mode reads $defs
        out["$ref"] = "#/$defs/" + ref.removeprefix("#/definitions/")
    if "$defs" in out or "definitions" in node:
        defs = {**node.get("definitions", {}), **out.get("$defs", {})}
        out["$defs"] = {k: _strict(v, depth + 1) for k, v in defs.items()}
    if "anyOf" in out:
        out["anyOf"] = [_strict(b, depth + 1) for b in out["anyOf"]]
        if root:
            raise _NotStrict("anyOf at the root")
    kind = out.get("type")
    kinds = kind if isinstance(kind, list) else [kind]
    if "object" in kinds or "properties" in out:
        properties = out.get("properties")
        extra = node.get("additionalProperties")
        if properties is None and not root:
            raise _NotStrict("a free-form object (no properties)")
        if extra not in (None, False):
            raise _NotStrict("an object with additionalProperties (a map)")
        required = set(node.get("required", []))
        props = {}
        for key, value in (properties or {}).items():
            strict_value = _strict(value, depth + 1)
            props[key] = strict_value if key in required else _nullable(strict_value)
        out["properties"] = props
        out["required"] = list(props)
        out["additionalProperties"] = False
        out.setdefault("type", "object")
    if "array" in kinds:
        items = node.get("items")
        if not isinstance(items, dict):
            raise _NotStrict("an array without a single items schema")
        out["items"] = _strict(items, depth + 1)
    if not any(k in out for k in ("type", "anyOf", "$ref", "enum", "const")):
        raise _NotStrict("a node that allows any value")
    return out


def openai_definition(spec: ToolSpec) -> JsonObject:
    """A Chat Completions tool definition; strict when the schema allows it."""
    schema = _root(spec)
    try:
        parameters, strict = _strict(schema, 0, root=True), True
    except _NotStrict:
        parameters, strict = schema, False
    return {
        "type": "function",
        "function": {
            "name": wire_name(spec.name),
            "description": spec.description,
            "parameters": parameters,
            "strict": strict,
        },
    }


def drop_model_nulls(schema: JsonObject, arguments: dict[str, Any]) -> dict[str, Any]:
    """Remove the ``null`` a strict-mode model sends for optional properties it was made to list."""
    properties = schema.get("properties") or {}
    required = set(schema.get("required") or [])
    out: dict[str, Any] = {}
    for key, value in arguments.items():
        if value is None and key not in required:
            continue
        sub = properties.get(key)
        if isinstance(value, dict) and isinstance(sub, dict) and sub.get("properties"):
            value = drop_model_nulls(sub, value)
        out[key] = value
    return out


# --- Anthropic -----------------------------------------------------------------------------------------------


def anthropic_definition(spec: ToolSpec) -> JsonObject:
    schema = _root(spec)
    for bad in ("anyOf", "oneOf", "allOf"):
        if bad in schema:
            raise SchemaAdapterError(
                f"tool {spec.name!r}: Anthropic does not accept `{bad}` at the root of an input schema"
            )
    return {"name": wire_name(spec.name), "description": spec.description, "input_schema": schema}


# --- Gemini --------------------------------------------------------------------------------------------------


def _resolve_ref(ref: str, defs: JsonObject, name: str) -> JsonObject:
    for prefix in ("#/$defs/", "#/definitions/"):
        if ref.startswith(prefix) and ref[len(prefix) :] in defs:
            return dict(defs[ref[len(prefix) :]])
    raise SchemaAdapterError(f"tool {name!r}: cannot resolve $ref {ref!r} for Gemini")


def _gemini(node: Any, defs: JsonObject, name: str, seen: tuple[str, ...], where: str) -> JsonObject:
    if not isinstance(node, dict):
        raise SchemaAdapterError(f"tool {name!r}: schema at {where} is not an object")
    node = dict(node)
    if "$ref" in node:
        ref = node.pop("$ref")
        if ref in seen:
            raise SchemaAdapterError(f"tool {name!r}: recursive $ref {ref!r} at {where} cannot be inlined for Gemini")
        node = {**_resolve_ref(ref, defs, name), **node}
        seen = (*seen, ref)
        return _gemini(node, defs, name, seen, where)
    notes: list[str] = []
    nullable = False
    if "const" in node:
        value = node.pop("const")
        if isinstance(value, str):
            node["enum"] = [value]
            node.setdefault("type", "string")
        else:
            notes.append(f"must be {json.dumps(value)}")
            node.setdefault("type", _json_type(value))
    for combinator in ("anyOf", "oneOf"):
        if combinator in node:
            branches = [b for b in node.pop(combinator) if isinstance(b, dict)]
            real = [b for b in branches if b.get("type") != "null"]
            nullable = nullable or len(real) < len(branches)
            if real:
                first = real[0]
                if len(real) > 1:
                    notes.append("also accepts: " + "; ".join(json.dumps(b, sort_keys=True)[:120] for b in real[1:]))
                node = {**first, **node}
                if "$ref" in node or "anyOf" in node or "oneOf" in node:
                    merged_node = _gemini(node, defs, name, seen, where)
                    if nullable:
                        merged_node["nullable"] = True
                    return _add_notes(merged_node, notes)
    if "allOf" in node:
        merged: JsonObject = {}
        for branch in node.pop("allOf"):
            branch = _gemini(branch, defs, name, seen, where)
            merged.setdefault("properties", {}).update(branch.get("properties", {}))
            merged["required"] = [*merged.get("required", []), *branch.get("required", [])]
            for key, value in branch.items():
                merged.setdefault(key, value)
        node = {**merged, **node}
    kind = node.get("type")
    if isinstance(kind, list):
        real_kinds = [k for k in kind if k != "null"]
        nullable = nullable or len(real_kinds) < len(kind)
        if len(real_kinds) > 1:
            notes.append("may also be " + " or ".join(real_kinds[1:]))
        kind = real_kinds[0] if real_kinds else "string"
    if kind is None:
        kind = (
            "object" if "properties" in node else "array" if "items" in node else "string" if "enum" in node else None
        )
    if kind is None:
        raise SchemaAdapterError(f"tool {name!r}: the schema at {where} allows any value, which Gemini cannot declare")
    node["type"] = kind
    if "enum" in node:
        values = [v for v in node["enum"] if v is not None]
        nullable = nullable or len(values) < len(node["enum"])
        if kind == "string" and all(isinstance(v, str) for v in values):
            node["enum"] = values
        else:
            notes.append("one of " + ", ".join(json.dumps(v) for v in values))
            del node["enum"]
    fmt = node.get("format")
    if fmt is not None and fmt not in _GEMINI_FORMATS.get(kind, set()):
        notes.append(f"format: {fmt}")
        del node["format"]
    out = _add_notes(_with_notes(node, tuple(k for k in _DESCRIBED if k != "format"), _GEMINI_KEYS), notes)
    if nullable:
        out["nullable"] = True
    if kind == "object":
        properties = node.get("properties") or {}
        if not properties:
            raise SchemaAdapterError(
                f"tool {name!r}: the free-form object at {where} cannot be declared for Gemini (it needs properties)"
            )
        required_names = set(node.get("required", []))
        kept, left_out = {}, []
        for key, value in properties.items():
            if key not in required_names and _empty_object(value, defs):
                left_out.append(key)  # Gemini rejects objects without properties; an optional one can go
                continue
            kept[key] = _gemini(value, defs, name, seen, f"{where}.{key}")
        if not kept:
            raise SchemaAdapterError(
                f"tool {name!r}: the object at {where} has only free-form properties, which Gemini cannot declare"
            )
        out["properties"] = kept
        if left_out:
            _add_notes(out, ["not settable here: " + ", ".join(left_out)])
        required = [k for k in node.get("required", []) if k in kept]
        if required:
            out["required"] = list(dict.fromkeys(required))
        else:
            out.pop("required", None)
    elif kind == "array":
        items = node.get("items")
        if not isinstance(items, dict):
            raise SchemaAdapterError(f"tool {name!r}: the array at {where} needs one items schema for Gemini")
        out["items"] = _gemini(items, defs, name, seen, f"{where}[]")
    return out


def _empty_object(node: Any, defs: JsonObject) -> bool:
    """An object schema without properties (free-form or always ``{}``)."""
    if not isinstance(node, dict):
        return False
    if "$ref" in node:
        try:
            node = _resolve_ref(node["$ref"], defs, "")
        except SchemaAdapterError:
            return False
    kind = node.get("type")
    return (kind == "object" or (kind is None and "properties" in node)) and not node.get("properties")


def _add_notes(node: JsonObject, notes: list[str]) -> JsonObject:
    if notes:
        text = str(node.get("description") or "").strip()
        node["description"] = (text + " " if text else "") + "(" + "; ".join(notes) + ")"
    return node


def _json_type(value: Any) -> str:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    return "string"


def gemini_definition(spec: ToolSpec) -> JsonObject:
    schema = _root(spec)
    defs = {**schema.pop("definitions", {}), **schema.pop("$defs", {})}
    definition: JsonObject = {"name": wire_name(spec.name), "description": spec.description}
    if schema.get("properties"):
        definition["parameters"] = _gemini(schema, defs, spec.name, (), "arguments")
    return definition


ADAPTERS = {
    ModelProvider.OPENAI: openai_definition,
    ModelProvider.ANTHROPIC: anthropic_definition,
    ModelProvider.GEMINI: gemini_definition,
}
