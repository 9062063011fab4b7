"""Checking skills where they lie (``kairox skills validate PATH``): a file, a skill folder, or a whole tree.

A tree is searched for every ``SKILL.md`` (dot-folders skipped, bounded depth) and for markdown skills
directly inside folders named ``skills``; nothing is deduplicated, since two collections may well share a
name. Every file that does not load is one error diagnostic naming it.
"""

from dataclasses import dataclass, field
from pathlib import Path

from kairox._util import JsonObject
from kairox.errors import Diagnostic, Severity
from kairox.skills._discovery import LooseFiles, SkillRoot, discover_skills
from kairox.skills._model import SKILL_FILE, SkillDef, SkillScope
from kairox.skills._parse import parse_skill_file
from kairox.skills._registry import diagnostic_json

TREE_MAX_DEPTH = 16


@dataclass(slots=True)
class ValidationReport:
    path: Path
    skills: list[SkillDef] = field(default_factory=list)
    diagnostics: list[Diagnostic] = field(default_factory=list)
    files: int = 0

    def count(self, severity: Severity) -> int:
        return sum(1 for d in self.diagnostics if d.severity is severity)

    @property
    def skipped(self) -> int:
        """Files that did not load (each has an error diagnostic naming it)."""
        loaded = {str(s.path) for s in self.skills}
        return len({d.source for d in self.diagnostics if d.severity is Severity.ERROR and d.source not in loaded and d.source and d.source.endswith(".md")})

    @property
    def ok(self) -> bool:
        return self.count(Severity.ERROR) == 0

    def to_json(self) -> JsonObject:
        return {
            "path": str(self.path),
            "counts": {
                "files": self.files,
                "loaded": len(self.skills),
                "skipped": self.skipped,
                "errors": self.count(Severity.ERROR),
                "warnings": self.count(Severity.WARNING),
                "info": self.count(Severity.INFO),
            },
            "skills": [
                {"name": s.name, "path": str(s.path), "format": str(s.format), "description": s.description}
                for s in self.skills
            ],
            "diagnostics": [diagnostic_json(d) for d in self.diagnostics],
        }


def validate_path(path: Path, *, max_depth: int = TREE_MAX_DEPTH) -> ValidationReport:
    """Load every skill at ``path`` and report what does not load and what is odd."""
    report = ValidationReport(path=path)
    if path.is_file():
        outcome = parse_skill_file(path)
        report.files = 1
        report.diagnostics.extend(outcome.diagnostics)
        if outcome.skill is not None:
            report.skills.append(outcome.skill)
        return report
    if not path.is_dir():
        report.diagnostics.append(Diagnostic(kind="skill", name=path.name, reason="no such file or folder", severity=Severity.ERROR, source=str(path)))
        return report
    loose = LooseFiles.ALL if path.name == "skills" else LooseFiles.SKILLS_DIRS
    if (path / SKILL_FILE).is_file():
        loose = LooseFiles.NONE
    found = discover_skills([SkillRoot(path=path, scope=SkillScope.USER)], max_depth=max_depth, loose=loose)
    report.files = found.stats.files
    report.skills = found.skills
    report.diagnostics = found.diagnostics
    return report
