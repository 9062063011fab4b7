"""Turning a frontmatter mapping into a ``SkillFrontmatter``, coercing what hosts write loosely.

Kairox keys and Agent Skills keys are read; Claude Code's and other hosts' keys are accepted under their
dashed or underscored spelling; anything unknown is kept in ``extra``. A value of the wrong type is coerced
when the intent is clear (a comma-separated string for a list, a number for a string) and reported.
"""

import json
import re
from collections.abc import Callable
from typing import Any

from kairox._util._json import JsonObject
from kairox.skills._model import ARGUMENT_TYPES, SkillArgument, SkillFrontmatter

Warn = Callable[[str, str, str | None], None]
"""``(key, reason, hint)``."""

_ALIASES: dict[str, tuple[str, ...]] = {
    "name": ("name",),
    "description": ("description",),
    "scope": ("scope",),
    "keywords": ("keywords", "tags"),
    "tools": ("tools",),
    "allowed_tools": ("allowed-tools", "allowed_tools", "allowedTools"),
    "model": ("model",),
    "arguments": ("arguments", "args"),
    "when_to_use": ("when_to_use", "when-to-use", "whenToUse"),
    "examples": ("examples", "triggers", "trigger_examples", "trigger-examples"),
    "license": ("license",),
    "compatibility": ("compatibility",),
    "metadata": ("metadata",),
    "disable_model_invocation": ("disable-model-invocation", "disable_model_invocation"),
    "user_invocable": ("user-invocable", "user_invocable"),
    "argument_hint": ("argument-hint", "argument_hint"),
}
_KNOWN = {alias for aliases in _ALIASES.values() for alias in aliases}
_SCOPES = ("user", "workspace", "session")
_ITEM_SPLIT = re.compile(r"[,\s]+")
_TRUE = {"true", "yes", "on", "1"}
_FALSE = {"false", "no", "off", "0"}


def split_tool_list(text: str) -> list[str]:
    """``"Read, Grep, Bash(git log:*)"`` or ``"Read Grep"`` -> items; parentheses keep their spaces."""
    items: list[str] = []
    current: list[str] = []
    depth = 0
    separators = "," if "," in text else ", \t\n"
    for char in text:
        if char == "(":
            depth += 1
        elif char == ")":
            depth = max(0, depth - 1)
        if depth == 0 and char in separators:
            if "".join(current).strip():
                items.append("".join(current).strip())
            current = []
            continue
        current.append(char)
    if "".join(current).strip():
        items.append("".join(current).strip())
    return items


class FieldReader:
    def __init__(self, data: JsonObject) -> None:
        self.data = data

    def _raw(self, field: str) -> tuple[str, Any] | None:
        for alias in _ALIASES[field]:
            if alias in self.data:
                return alias, self.data[alias]
        return None

    def _text(self, field: str, warn: Warn) -> str | None:
        found = self._raw(field)
        if found is None or found[1] is None:
            return None
        key, value = found
        if isinstance(value, str):
            return value
        if field == "argument_hint" and isinstance(value, list) and all(isinstance(v, str) for v in value):
            return " ".join(f"[{v}]" for v in value)  # Claude's documented `argument-hint: [author]` is YAML's list
        if isinstance(value, list) and all(isinstance(v, str | int | float) for v in value):
            warn(key, f"`{key}` is a list; its items were joined into one text", f"write `{key}` as one string")
            return " ".join(str(v) for v in value)
        if isinstance(value, bool | int | float):
            warn(
                key,
                f"`{key}` is a {type(value).__name__}, not a string; read as {str(value)!r}",
                f"quote the value of `{key}`",
            )
            return str(value)
        warn(key, f"`{key}` is a {type(value).__name__}, not a string; ignored", f"write `{key}` as a string")
        return None

    def _list(self, field: str, warn: Warn, *, split: Callable[[str], list[str]]) -> tuple[str, ...]:
        found = self._raw(field)
        if found is None or found[1] is None:
            return ()
        key, value = found
        if isinstance(value, str):
            return tuple(split(value))
        if isinstance(value, list):
            items = [str(v) for v in value if isinstance(v, str | int | float) and not isinstance(v, bool)]
            if len(items) != len(value):
                warn(
                    key,
                    f"`{key}` has items that are not strings; they were left out",
                    f"make every item of `{key}` a string",
                )
            return tuple(item.strip() for item in items if item.strip())
        warn(key, f"`{key}` is a {type(value).__name__}, not a list of strings; ignored", f"write `{key}` as a list")
        return ()

    def _bool(self, field: str, default: bool, warn: Warn) -> bool:
        found = self._raw(field)
        if found is None or found[1] is None:
            return default
        key, value = found
        if isinstance(value, bool):
            return value
        if isinstance(value, str) and value.strip().lower() in _TRUE | _FALSE:
            return value.strip().lower() in _TRUE
        warn(key, f"`{key}` should be true or false, not {value!r}; using {str(default).lower()}", None)
        return default

    def _arguments(self, warn: Warn) -> tuple[SkillArgument, ...]:
        found = self._raw("arguments")
        if found is None or found[1] is None:
            return ()
        key, value = found
        specs: list[tuple[str, Any]] = []
        if isinstance(value, dict):
            specs = [(str(k), v) for k, v in value.items()]
        elif isinstance(value, list):
            for item in value:
                if isinstance(item, str):
                    specs.append((item, {}))
                elif isinstance(item, dict) and isinstance(item.get("name"), str):
                    specs.append((item["name"], {k: v for k, v in item.items() if k != "name"}))
                else:
                    warn(key, f"an item of `{key}` has no `name`; it was left out", "give every argument a name")
        elif isinstance(value, str):
            specs = [(part, {}) for part in _ITEM_SPLIT.split(value) if part]
        else:
            warn(key, f"`{key}` is a {type(value).__name__}; expected a mapping of argument names", None)
            return ()
        arguments: list[SkillArgument] = []
        for name, spec in specs:
            if isinstance(spec, str):
                spec = {"description": spec}
            elif spec is None:
                spec = {}
            elif not isinstance(spec, dict):
                warn(key, f"argument {name!r} is described by a {type(spec).__name__}; expected a mapping", None)
                spec = {}
            kind = str(spec.get("type", "string")).lower()
            if kind not in ARGUMENT_TYPES:
                warn(
                    key,
                    f"argument {name!r} has type {kind!r}; treated as a string",
                    f"use one of {', '.join(ARGUMENT_TYPES)}",
                )
                kind = "string"
            required = spec.get("required", False)
            arguments.append(
                SkillArgument(
                    name=name,
                    type=kind,
                    description=str(spec.get("description", "") or ""),
                    required=bool(required) if not isinstance(required, str) else required.lower() in _TRUE,
                    default=spec.get("default"),
                )
            )
        return tuple(arguments)

    def _metadata(self, warn: Warn) -> dict[str, str]:
        found = self._raw("metadata")
        if found is None or found[1] is None:
            return {}
        key, value = found
        if not isinstance(value, dict):
            warn(
                key,
                f"`{key}` is a {type(value).__name__}, not a mapping; ignored",
                "write `metadata` as key: value pairs",
            )
            return {}
        result: dict[str, str] = {}
        odd: list[str] = []
        for k, v in value.items():
            if isinstance(v, str):
                result[str(k)] = v
            else:
                odd.append(str(k))
                result[str(k)] = json.dumps(v, ensure_ascii=False) if isinstance(v, dict | list) else str(v)
        if odd:
            warn(key, f"`{key}` values should be strings; {', '.join(odd)} converted to text", "quote those values")
        return result

    def read(self, warn: Warn) -> SkillFrontmatter:
        scope = self._text("scope", warn)
        if scope is not None and scope not in _SCOPES:
            warn("scope", f"`scope` {scope!r} is not one of {', '.join(_SCOPES)}; ignored", None)
            scope = None
        examples = self._list("examples", warn, split=lambda text: [text.strip()] if text.strip() else [])
        return SkillFrontmatter(
            name=(self._text("name", warn) or "").strip() or None,
            description=self._text("description", warn) or "",
            scope=scope,
            keywords=self._list("keywords", warn, split=lambda text: [p.strip() for p in text.split(",") if p.strip()]),
            tools=self._list("tools", warn, split=split_tool_list),
            allowed_tools=self._list("allowed_tools", warn, split=split_tool_list),
            model=self._text("model", warn),
            arguments=self._arguments(warn),
            when_to_use=self._text("when_to_use", warn) or "",
            examples=examples,
            license=self._text("license", warn),
            compatibility=self._text("compatibility", warn),
            metadata=self._metadata(warn),
            disable_model_invocation=self._bool("disable_model_invocation", False, warn),
            user_invocable=self._bool("user_invocable", True, warn),
            argument_hint=self._text("argument_hint", warn),
            extra={k: v for k, v in self.data.items() if k not in _KNOWN},
        )
