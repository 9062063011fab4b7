import dataclasses
import enum
from pathlib import PurePath
from typing import Any


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class Event:
    """Base of every event: a frozen fact. Subclasses are frozen, keyword-only dataclasses too."""


def _jsonable(value: Any) -> Any:
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, PurePath):
        return str(value)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: _jsonable(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple | set | frozenset):
        return [_jsonable(v) for v in value]
    return value


def event_to_json(event: Event) -> dict[str, Any]:
    """``{"event": "<ClassName>", **fields}``, with enums, paths and nested records made JSON-safe."""
    fields = {f.name: _jsonable(getattr(event, f.name)) for f in dataclasses.fields(event)}
    return {"event": type(event).__name__, **fields}


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class ConfigLoaded(Event):
    """Configuration was resolved from its layers."""

    workspace: str
    layers: tuple[str, ...]
    """The layers that were loaded, lowest first."""
    trusted: bool
    problems: int = 0
