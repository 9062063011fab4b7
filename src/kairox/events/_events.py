import dataclasses
import enum
import re
from pathlib import PurePath
from typing import Any, ClassVar

_WORDS = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class Event:
    """Base of every event: a frozen fact. Subclasses are frozen, keyword-only dataclasses too.

    ``kind`` is the event's stable name for consumers (``mcp.server.ready``): front ends and sinks match on it,
    never on the class name. Events a front end reacts to set it explicitly; the others get the dotted words of
    their class name (``SkillsReady`` -> ``skills.ready``)."""

    kind: ClassVar[str] = "event"

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super(Event, cls).__init_subclass__(**kwargs)  # not bare super(): slots=True made Event a new class
        if "kind" not in cls.__dict__:
            cls.kind = ".".join(_WORDS.split(cls.__name__)).lower()


def _jsonable(value: Any) -> Any:
    if isinstance(value, Event):  # an event inside another (a subagent's): with its own names
        return event_to_json(value)
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
    """``{"event": "<ClassName>", "kind": "<kind>", **fields}``, with enums, paths and nested records made JSON-safe."""
    fields = {f.name: _jsonable(getattr(event, f.name)) for f in dataclasses.fields(event)}
    return {"event": type(event).__name__, "kind": event.kind, **fields}


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class ConfigLoaded(Event):
    """Configuration was resolved from its layers."""

    workspace: str
    layers: tuple[str, ...]
    """The layers that were loaded, lowest first."""
    trusted: bool
    problems: int = 0
