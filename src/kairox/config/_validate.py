"""Turning pydantic's errors into problems that name file, line and key, with a did-you-mean (C4)."""

import types
import typing
from typing import Any

from pydantic import BaseModel, ValidationError

from kairox._util._names import suggest
from kairox.config._keys import join_key
from kairox.config._models import KairoxConfig
from kairox.errors import ConfigProblem

if typing.TYPE_CHECKING:
    from kairox.config._merge import LayerData


def _unwrap(annotation: Any) -> Any:
    """``X | None`` -> ``X``."""
    if isinstance(annotation, types.UnionType) or typing.get_origin(annotation) is typing.Union:
        args = [a for a in typing.get_args(annotation) if a is not type(None)]
        return args[0] if len(args) == 1 else annotation
    return annotation


def fields_at(path: tuple[str, ...]) -> list[str]:
    """The key names allowed in the table at ``path`` (for a did-you-mean)."""
    node: Any = KairoxConfig
    for part in path:
        if isinstance(node, type) and issubclass(node, BaseModel):
            field = node.model_fields.get(part)
            if field is None:
                return []
            node = _unwrap(field.annotation)
        elif typing.get_origin(node) is dict:
            node = _unwrap(typing.get_args(node)[1])
        elif typing.get_origin(node) is list:
            node = _unwrap(typing.get_args(node)[0])
        else:
            return []
    if isinstance(node, type) and issubclass(node, BaseModel):
        return list(node.model_fields)
    return []


def problems_from_validation(exc: ValidationError, data: "LayerData | None") -> list[ConfigProblem]:
    problems: list[ConfigProblem] = []
    for error in exc.errors():
        loc = tuple(str(part) for part in error["loc"])
        key = join_key(loc) if loc else ""
        message = str(error["msg"]).removeprefix("Value error, ")
        hint = None
        if error["type"] == "extra_forbidden":
            allowed = fields_at(loc[:-1])
            guess = suggest(loc[-1], allowed)
            message = f"unknown key {loc[-1]!r}"
            hint = f"did you mean {guess!r}?" if guess else (f"allowed here: {', '.join(allowed)}" if allowed else None)
        elif error["type"] in ("missing",):
            message = f"missing required key {loc[-1]!r}"
        elif "input" in error and not isinstance(error["input"], dict | list):
            message = f"{message} (got {error['input']!r})"
        if data is None:
            file, line, layer = "merged configuration", None, None
        else:
            file = str(data.file) if data.file else (data.source or str(data.layer))
            line, layer = data.line_of(key), str(data.layer)
            if data.leaf_origins:
                origin = next((o for k, o in data.leaf_origins.items() if key == k or key.startswith(k + ".")), None)
                if origin is not None:
                    file = str(origin.file) if origin.file else (origin.source or file)
                    line = origin.line
        problems.append(ConfigProblem(file=file, line=line, key=key, message=message, hint=hint, layer=layer))
    return problems
