"""The prompt catalog (S6): name and short description of each offered skill, within a character budget.

Order is by qualified name, so the text is the same for the same skills. When the full descriptions do not
fit, every description is cut to one common length (the longest that fits); only when even the shortest
useful descriptions do not fit are skills dropped from the end, and the text says how many.
"""

from collections.abc import Sequence
from dataclasses import dataclass

from kairox.skills._model import SkillDef

HEADER = "Skills (load one with the `skill` tool when a task calls for it):"
MIN_DESCRIPTION = 40
"""Descriptions are not cut shorter than this before skills are dropped."""
_ELLIPSIS = "…"


@dataclass(frozen=True, kw_only=True, slots=True)
class Catalog:
    text: str
    shown: tuple[str, ...]
    """Qualified names in the text."""
    shortened: int
    """How many descriptions were cut."""
    dropped: tuple[str, ...]
    """Qualified names left out for lack of room."""


def _clean(text: str) -> str:
    return " ".join(text.split())


def _cut(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    cut = text[: max(limit - 1, 1)].rstrip()
    space = cut.rfind(" ")
    if space > limit // 2:
        cut = cut[:space].rstrip(" ,;:")
    return cut + _ELLIPSIS


def _line(name: str, description: str) -> str:
    return f"- {name}: {description}"


def _render(items: Sequence[tuple[str, str]], limit: int | None, dropped: int) -> str:
    lines = [HEADER]
    lines.extend(_line(name, description if limit is None else _cut(description, limit)) for name, description in items)
    if dropped:
        lines.append(f"- ... and {dropped} more skill(s) not listed for lack of room")
    return "\n".join(lines)


def render_catalog(skills: Sequence[SkillDef], budget_chars: int) -> Catalog:
    """The catalog text for ``skills`` in at most ``budget_chars`` characters (empty when there are none)."""
    items = sorted(((s.qualified_name, _clean(s.description)) for s in skills), key=lambda item: item[0])
    if not items:
        return Catalog(text="", shown=(), shortened=0, dropped=())
    full = _render(items, None, 0)
    if len(full) <= budget_chars:
        return Catalog(text=full, shown=tuple(n for n, _ in items), shortened=0, dropped=())

    longest = max(len(d) for _, d in items)
    # The most skills whose lines fit with descriptions at their shortest (each line's length is bounded).
    used = len(HEADER)
    count = 0
    for name, description in items:
        line = 1 + len(_line(name, "")) + min(len(description), MIN_DESCRIPTION)
        tail = 0 if count + 1 == len(items) else 1 + len(_render([], None, len(items) - count - 1)) - len(HEADER) - 1
        if used + line + tail > budget_chars:
            break
        used += line
        count += 1
    while count > 0 and len(_render(items[:count], MIN_DESCRIPTION, len(items) - count)) > budget_chars:
        count -= 1
    if count == 0:
        return Catalog(text=_render([], None, len(items)), shown=(), shortened=0, dropped=tuple(n for n, _ in items))
    shown = items[:count]
    dropped = len(items) - count
    low, high = MIN_DESCRIPTION, longest  # the longest common cut that still fits
    while low < high:
        middle = (low + high + 1) // 2
        if len(_render(shown, middle, dropped)) <= budget_chars:
            low = middle
        else:
            high = middle - 1
    return Catalog(
        text=_render(shown, low, dropped),
        shown=tuple(n for n, _ in shown),
        shortened=sum(1 for _, d in shown if len(d) > low),
        dropped=tuple(n for n, _ in items[count:]),
    )
