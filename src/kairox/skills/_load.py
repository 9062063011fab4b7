"""Reading skills from disk: a skill file parsed as a whole, and a skill's body read when it is used (S6).
The model (``_model``) is data and the parser (``_parse``) works on text; the file system is touched here."""

from pathlib import Path

from kairox.errors import Diagnostic, Severity
from kairox.skills._model import SKILL_FILE, SkillDef, SkillFormat
from kairox.skills._parse import ParseOutcome, parse_skill_text, split_frontmatter


def parse_skill_file(path: Path, *, fmt: SkillFormat | None = None) -> ParseOutcome:
    """Read and parse one skill file; an unreadable file is a diagnostic, not an exception."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        name = path.parent.name if path.name == SKILL_FILE else path.stem
        return ParseOutcome(
            None,
            [
                Diagnostic(
                    kind="skill",
                    name=name,
                    reason=f"cannot read the file: {exc.strerror or exc}",
                    severity=Severity.ERROR,
                    source=str(path),
                )
            ],
        )
    return parse_skill_text(data.decode("utf-8", errors="replace"), path, fmt=fmt)


def read_body(skill: SkillDef) -> str:
    """The markdown after the frontmatter of ``skill``'s file, read now."""
    text = skill.path.read_text(encoding="utf-8", errors="replace")
    return split_frontmatter(text).body
