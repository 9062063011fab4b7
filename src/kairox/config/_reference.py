"""The configuration reference (every key, its type, default and layer rules), generated from the models."""

import enum
import types
import typing
from typing import Any

from pydantic import BaseModel
from pydantic_core import PydanticUndefined

from kairox.config._field_docs import field_description
from kairox.config._models import CONCAT_LISTS, NARROW_ONLY_KEYS, PROJECT_FORBIDDEN, USER_ONLY_KEYS, KairoxConfig

_ENTRY_NAMES = {
    "mcp_servers": "NAME",
    "lsp_servers": "NAME",
    "dap_servers": "NAME",
    "profiles": "NAME",
    "model_providers": "NAME",
    "entries": "NAME",
    "marketplaces": "NAME",
}
_TRUST_GUARDED = (
    "policy.approval_policy",
    "policy.sandbox_policy",
    "policy.network_access",
    "policy.writable_roots",
    "policy.allow_unix_sockets",
    "policy.rules.allow",
    "tools.shell_env_passthrough",
    "tools.disabled",
    "tools.spill_dir",
    "mcp_servers",
    "mcp_catalog.url",
    "mcp_catalog.sources",
    "lsp_servers",
    "dap_servers",
    "plugins",
    "hooks",
    "instructions.files",
    "instructions.memory_files",
    "instructions.fallback_memory_files",
)


_HOOK_SUBJECTS = {
    "session_start": "The start it runs for, a pattern: ``startup`` or ``resume``; both when absent.",
    "pre_compact": "The compaction it runs for, a pattern: ``manual`` or ``auto``; both when absent.",
}


def _hook_doc(key: str, name: str, doc: str) -> str:
    """``matcher`` and ``fail_open`` said for the hook event of ``key`` (``hooks.session_end[].matcher``)."""
    event = key.split(".")[1].removesuffix("[]")
    if event in ("pre_tool_use", "post_tool_use"):
        return doc
    if name == "matcher":
        return _HOOK_SUBJECTS.get(event, "Not used: this event has nothing to match; the hook runs every time.")
    return (
        "Not used: a hook of this event that fails is reported and the session goes on." if name == "fail_open" else doc
    )


def _type_name(annotation: Any) -> str:
    origin = typing.get_origin(annotation)
    if isinstance(annotation, types.UnionType) or origin is typing.Union:
        return " | ".join(_type_name(a) for a in typing.get_args(annotation))
    if origin is typing.Literal:
        return " | ".join(f'"{a}"' for a in typing.get_args(annotation))
    if origin is list:
        return f"list[{_type_name(typing.get_args(annotation)[0])}]"
    if origin is dict:
        return "table"
    if annotation is type(None):
        return "none"
    if isinstance(annotation, type) and issubclass(annotation, enum.Enum):
        return " | ".join(f'"{m.value}"' for m in annotation)
    if isinstance(annotation, type):
        return {"str": "string", "int": "integer", "float": "number", "bool": "boolean"}.get(
            annotation.__name__, annotation.__name__
        )
    return str(annotation)


def _default(field: Any) -> str:
    value = field.get_default(call_default_factory=True)
    if value is PydanticUndefined:
        return "required"
    if isinstance(value, BaseModel):
        return ""
    if isinstance(value, enum.Enum):
        value = value.value
    if value is None:
        return "unset"
    if isinstance(value, str):
        return f'"{value}"'
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value).replace("'", '"')


def _rules(key: str) -> str:
    notes = []
    if key in CONCAT_LISTS:
        notes.append("concatenates across layers")
    if key.split(".")[0] in ("mcp_servers", "lsp_servers", "dap_servers") and key.count(".") >= 1:
        notes.append("entry replaced whole by a higher layer")
    if key.split(".")[0] in PROJECT_FORBIDDEN or key in USER_ONLY_KEYS:
        notes.append("never from project files")
    if key in NARROW_ONLY_KEYS:
        notes.append("a project file may only narrow it")
    if any(key == g or key.startswith(g + ".") for g in _TRUST_GUARDED):
        notes.append("project value waits for trust")
    return "; ".join(notes)


Row = tuple[str, str, str, str, str, Any]
"""key, type, default as text, description, layer rules, the pydantic field"""


def _walk(model: type[BaseModel], prefix: str, rows: list[Row]) -> None:
    for name, field in model.model_fields.items():
        key = f"{prefix}{name}"
        annotation = field.annotation
        args = typing.get_args(annotation)
        doc = (field_description(model, name) or "").strip()
        if key.startswith("hooks.") and "[]." in key:
            doc = _hook_doc(key, name, doc)
        if isinstance(annotation, type) and issubclass(annotation, BaseModel):
            _walk(annotation, f"{key}.", rows)
        elif (
            typing.get_origin(annotation) is dict
            and args
            and isinstance(args[1], type)
            and issubclass(args[1], BaseModel)
        ):
            _walk(args[1], f"{key}.{_ENTRY_NAMES.get(name, 'NAME')}.", rows)
        elif (
            typing.get_origin(annotation) is list
            and args
            and isinstance(args[0], type)
            and issubclass(args[0], BaseModel)
        ):
            rows.append((key, "list of tables", "[]", doc, _rules(key), field))
            _walk(args[0], f"{key}[].", rows)
        else:
            rows.append((key, _type_name(annotation), _default(field), doc, _rules(key), field))


def _default_value(field: Any) -> Any:
    """The default as data: ``None`` when unset or required, enum members by value, tables as ``{}``."""
    value = field.get_default(call_default_factory=True)
    if value is PydanticUndefined:
        return None
    if isinstance(value, BaseModel):
        return {}
    if isinstance(value, enum.Enum):
        return value.value
    return value


def config_reference_data() -> list[dict[str, Any]]:
    """Every key of ``kairox.toml`` as data: key, type, default (a value), required, layer rules, description."""
    rows: list[Row] = []
    _walk(KairoxConfig, "", rows)
    return [
        {
            "key": key,
            "type": kind,
            "default": _default_value(field),
            "required": field.is_required(),
            "layer_rules": [r for r in rules.split("; ") if r],
            "description": " ".join(doc.split()),
        }
        for key, kind, _default_text, doc, rules, field in rows
    ]


def config_reference() -> str:
    """A markdown table of every key of ``kairox.toml``."""
    rows: list[Row] = []
    _walk(KairoxConfig, "", rows)
    lines = ["| key | type | default | layer rules | what it does |", "|---|---|---|---|---|"]
    for key, kind, default, doc, rules, _field in rows:
        doc = " ".join(doc.split()).replace("|", "\\|")
        lines.append(f"| `{key}` | {kind.replace('|', chr(92) + '|')} | {default} | {rules} | {doc} |")
    return "\n".join(lines) + "\n"
