"""The parse cache: a skill file whose (path, mtime, size) did not change is not read or parsed again.

One JSON file (``$KAIROX_HOME/cache/skills.json`` by default) maps each file to what parsing it gave: the
skill (without where it was found; discovery adds that) and its diagnostics. A broken or foreign cache file
is ignored and rewritten.
"""

import contextlib
import json
import os
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

from kairox.errors import Diagnostic, Severity
from kairox.skills._model import SkillArgument, SkillDef, SkillFormat, SkillFrontmatter, SkillScope
from kairox.skills._parse import ParseOutcome

CACHE_VERSION = 5
"""Bump whenever parsing changes what it gives, so old entries are not reused."""
_TUPLE_FIELDS = {"keywords", "tools", "allowed_tools", "examples"}


_DEFAULTS = SkillFrontmatter()


def _frontmatter_to_json(frontmatter: SkillFrontmatter) -> dict[str, Any]:
    """Only the fields that differ from the defaults, to keep the cache small and quick to load."""
    data: dict[str, Any] = {}
    for f in fields(frontmatter):
        value = getattr(frontmatter, f.name)
        if value == getattr(_DEFAULTS, f.name):
            continue
        if f.name == "arguments":
            value = [a.to_json() for a in value]
        elif isinstance(value, tuple):
            value = list(value)
        data[f.name] = value
    return data


def _frontmatter_from_json(data: dict[str, Any]) -> SkillFrontmatter:
    values = dict(data)
    for name in _TUPLE_FIELDS & values.keys():
        values[name] = tuple(values[name])
    if "arguments" in values:
        values["arguments"] = tuple(SkillArgument(**a) for a in values["arguments"])
    return SkillFrontmatter(**values)


def outcome_to_json(outcome: ParseOutcome) -> dict[str, Any]:
    skill = outcome.skill
    return {
        "skill": None
        if skill is None
        else {
            "name": skill.name,
            "description": skill.description,
            "format": str(skill.format),
            "body_line": skill.body_line,
            "frontmatter": _frontmatter_to_json(skill.frontmatter),
        },
        "diagnostics": [
            {"name": d.name, "reason": d.reason, "severity": str(d.severity), "line": d.line, "hint": d.hint}
            for d in outcome.diagnostics
        ],
    }


_FORMATS = {f.value: f for f in SkillFormat}


def outcome_from_json(data: dict[str, Any], path: Path, *, scope: SkillScope = SkillScope.USER, plugin: str | None = None, root: Path | None = None) -> ParseOutcome:
    """The cached parse of ``path``, with the skill already placed where it was found."""
    raw = data.get("skill")
    skill = None
    if raw is not None:
        skill = SkillDef(
            name=raw["name"],
            description=raw["description"],
            path=path,
            format=_FORMATS[raw["format"]],
            body_line=raw["body_line"],
            frontmatter=_frontmatter_from_json(raw["frontmatter"]),
            scope=scope,
            plugin=plugin,
            root=root,
        )
    diagnostics = [
        Diagnostic(kind="skill", name=d["name"], reason=d["reason"], severity=Severity(d["severity"]), source=str(path), line=d["line"], hint=d["hint"])
        for d in data.get("diagnostics", ())
    ]
    return ParseOutcome(skill, diagnostics)


@dataclass(slots=True)
class _Entry:
    mtime_ns: int
    size: int
    payload: dict[str, Any] | None
    """``None``: the file is not a skill (a loose markdown file without frontmatter)."""


class SkillCache:
    """Parse results by file, valid while the file's mtime and size are unchanged."""

    def __init__(self, file: Path | None) -> None:
        self.file = file
        self._entries: dict[str, _Entry] = {}
        self._seen: set[str] = set()
        self._dirty = False
        if file is not None:
            self._load(file)

    def _load(self, file: Path) -> None:
        try:
            data = json.loads(file.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return
        if not isinstance(data, dict) or data.get("version") != CACHE_VERSION or not isinstance(data.get("entries"), dict):
            return
        for key, value in data["entries"].items():
            if isinstance(value, list) and len(value) == 3:
                self._entries[key] = _Entry(value[0], value[1], value[2])

    def get(self, path: str, mtime_ns: int, size: int) -> tuple[bool, dict[str, Any] | None]:
        """``(hit, payload)``."""
        self._seen.add(path)
        entry = self._entries.get(path)
        if entry is None or entry.mtime_ns != mtime_ns or entry.size != size:
            return False, None
        return True, entry.payload

    def put(self, path: str, mtime_ns: int, size: int, payload: dict[str, Any] | None) -> None:
        self._seen.add(path)
        self._entries[path] = _Entry(mtime_ns, size, payload)
        self._dirty = True

    def prune(self, roots: Iterable[Path]) -> None:
        """Forget files under ``roots`` that the last scan did not see (deleted or moved)."""
        prefixes = tuple(str(root).rstrip(os.sep) + os.sep for root in roots)
        gone = [key for key in self._entries if key.startswith(prefixes) and key not in self._seen]
        for key in gone:
            del self._entries[key]
        if gone:
            self._dirty = True

    def save(self) -> None:
        """Write the cache if anything changed; a cache that cannot be written is only a slower next scan."""
        if self.file is None or not self._dirty:
            return
        entries = {key: [e.mtime_ns, e.size, e.payload] for key, e in self._entries.items()}
        text = json.dumps({"version": CACHE_VERSION, "entries": entries}, ensure_ascii=False, separators=(",", ":"))
        tmp: str | None = None
        try:
            self.file.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=self.file.parent, prefix=f".{self.file.name}.")
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                handle.write(text)
            os.replace(tmp, self.file)
            tmp = None
            self._dirty = False
        except OSError:
            pass
        finally:
            if tmp is not None:
                with contextlib.suppress(OSError):
                    os.unlink(tmp)
