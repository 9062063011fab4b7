"""The configuration reference (every key, its type, default and layer rules), generated from the models."""

import enum
import types
import typing
from typing import Any

from pydantic import BaseModel
from pydantic_core import PydanticUndefined

from kairox.config._models import CONCAT_LISTS, PROJECT_FORBIDDEN, KairoxConfig

_ENTRY_NAMES = {"mcp_servers": "NAME", "lsp_servers": "NAME", "dap_servers": "NAME", "profiles": "NAME",
                "model_providers": "NAME", "entries": "NAME", "marketplaces": "NAME"}
_TRUST_GUARDED = ("policy.approval_policy", "policy.sandbox_policy", "policy.network_access", "policy.writable_roots",
                  "policy.rules.allow", "tools.shell_env_passthrough", "tools.disabled", "tools.spill_dir", "mcp_servers",
                  "mcp_catalog.url", "mcp_catalog.sources", "lsp_servers", "dap_servers", "plugins", "hooks")


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
        return {"str": "string", "int": "integer", "float": "number", "bool": "boolean"}.get(annotation.__name__, annotation.__name__)
    return str(annotation)


def _default(field: Any) -> str:
    if field.default_factory is not None:
        value = field.default_factory()
    elif field.default is PydanticUndefined:
        return "required"
    else:
        value = field.default
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
    if key.split(".")[0] in PROJECT_FORBIDDEN:
        notes.append("never from project files")
    if any(key == g or key.startswith(g + ".") for g in _TRUST_GUARDED):
        notes.append("project value waits for trust")
    return "; ".join(notes)


def _walk(model: type[BaseModel], prefix: str, rows: list[tuple[str, str, str, str, str]]) -> None:
    for name, field in model.model_fields.items():
        key = f"{prefix}{name}"
        annotation = field.annotation
        args = typing.get_args(annotation)
        doc = (field.description or "").strip()
        if isinstance(annotation, type) and issubclass(annotation, BaseModel):
            _walk(annotation, f"{key}.", rows)
        elif typing.get_origin(annotation) is dict and args and isinstance(args[1], type) and issubclass(args[1], BaseModel):
            _walk(args[1], f"{key}.{_ENTRY_NAMES.get(name, 'NAME')}.", rows)
        elif typing.get_origin(annotation) is list and args and isinstance(args[0], type) and issubclass(args[0], BaseModel):
            rows.append((key, "list of tables", "[]", doc, _rules(key)))
            _walk(args[0], f"{key}[].", rows)
        else:
            rows.append((key, _type_name(annotation), _default(field), doc, _rules(key)))


def config_reference() -> str:
    """A markdown table of every key of ``kairox.toml``."""
    rows: list[tuple[str, str, str, str, str]] = []
    _walk(KairoxConfig, "", rows)
    lines = ["| key | type | default | layer rules | what it does |", "|---|---|---|---|---|"]
    for key, kind, default, doc, rules in rows:
        doc = " ".join(doc.split()).replace("|", "\\|")
        lines.append(f"| `{key}` | {kind.replace('|', chr(92) + '|')} | {default} | {rules} | {doc} |")
    return "\n".join(lines) + "\n"
