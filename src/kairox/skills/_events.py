"""Facts the skills package reports on the event sink."""

from dataclasses import dataclass

from kairox.events import Event


@dataclass(frozen=True, kw_only=True, slots=True)
class SkillsDiscovered(Event):
    skills: int
    """Skills listed (winners of their name)."""
    shadowed: int
    diagnostics: int
    parsed: int
    """Files read and parsed in this scan; the rest came from the cache."""
    cached: int


@dataclass(frozen=True, kw_only=True, slots=True)
class SkillsMatched(Event):
    prompt_terms: tuple[str, ...]
    matches: tuple[str, ...]
    """Qualified names, best first."""
    scores: tuple[float, ...]


@dataclass(frozen=True, kw_only=True, slots=True)
class SkillLoaded(Event):
    """The ``skill`` tool gave a skill's body to the model."""

    name: str
    path: str
    arguments: tuple[str, ...]
    model: str | None = None


@dataclass(frozen=True, kw_only=True, slots=True)
class SkillInstalled(Event):
    name: str
    path: str
    source: str
    scope: str
