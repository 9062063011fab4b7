"""Helpers to write plugin folders for tests."""

import json
from pathlib import Path
from typing import Any


def write_json(path: Path, data: Any) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=2), encoding="utf-8")
    return path


def write_skill(folder: Path, name: str, description: str = "does things") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "SKILL.md").write_text(
        f"---\nname: {name}\ndescription: {description}\n---\nBody of {name}.\n", encoding="utf-8"
    )
    return folder


def make_plugin(
    root: Path,
    manifest: dict[str, Any] | None = None,
    *,
    manifest_dir: str = ".claude-plugin",
    skills: tuple[str, ...] = (),
) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    if manifest is not None:
        write_json(root / manifest_dir / "plugin.json", manifest)
    for skill in skills:
        write_skill(root / "skills" / skill, skill)
    return root
