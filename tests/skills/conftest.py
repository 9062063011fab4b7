"""Skill files written into temp folders, as users write them."""

from collections.abc import Callable
from pathlib import Path

import pytest

WriteSkill = Callable[..., Path]


def skill_text(name: str | None, description: str | None, *, extra: str = "", body: str = "Do the thing.\n") -> str:
    lines = ["---"]
    if name is not None:
        lines.append(f"name: {name}")
    if description is not None:
        lines.append(f"description: {description}")
    if extra:
        lines.append(extra.rstrip("\n"))
    lines.append("---")
    return "\n".join(lines) + "\n" + body


@pytest.fixture
def write_skill() -> WriteSkill:
    """``write_skill(root, "pr-review", "Reviews PRs", extra="keywords: [a, b]")`` -> the SKILL.md path."""

    def write(
        root: Path,
        name: str,
        description: str | None = "A skill.",
        *,
        extra: str = "",
        body: str = "Do the thing.\n",
        folder: str | None = None,
    ) -> Path:
        path = root / (folder or name) / "SKILL.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(skill_text(name, description, extra=extra, body=body), encoding="utf-8")
        return path

    return write
