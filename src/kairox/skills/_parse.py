"""Reading one skill file (S1, S2): split the frontmatter, parse its YAML leniently, report what was odd.

Lenient means: a skill is skipped only when it has no frontmatter, no description, or YAML that stays
unparseable after one repair (quoting plain values that contain ``: ``). Everything else loads, with a warning
that names the file, the line and what to fix.
"""

import dataclasses
import datetime
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from kairox._util._decode import bracket_line, long_integer_line
from kairox.errors import Diagnostic, Severity
from kairox.skills._fields import FieldReader
from kairox.skills._model import SKILL_FILE, SkillDef, SkillFormat, SkillScope

_Loader: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

MAX_NAME = 64
MAX_DESCRIPTION = 1024
_FENCE = re.compile(r"^---[ \t]*$")
_TOP_KEY = re.compile(r"^([A-Za-z0-9_][A-Za-z0-9_.-]*)[ \t]*:(?:[ \t]+(.*))?$")
_DESCRIPTION_LINE = re.compile(r"^\s*description\s*:", re.IGNORECASE)
_SPACE = re.compile(r"\s")
"""Any character ``str.isspace()`` accepts (the same Unicode table)."""


@dataclass(frozen=True, slots=True)
class FrontmatterSplit:
    yaml_text: str | None
    """The text between the ``---`` fences; ``None`` when the file has no frontmatter."""
    body: str
    body_line: int
    """1-based line where the body starts."""
    unclosed: bool = False


def split_frontmatter(text: str) -> FrontmatterSplit:
    """Split ``---`` fenced YAML at the very top of ``text`` from the markdown body."""
    if text.startswith("\ufeff"):
        text = text[1:]
    lines = text.splitlines(keepends=True)
    if not lines or not _FENCE.match(lines[0].rstrip("\r\n")):
        return FrontmatterSplit(None, text, 1)
    for index in range(1, len(lines)):
        if _FENCE.match(lines[index].rstrip("\r\n")) or lines[index].rstrip("\r\n") == "...":
            return FrontmatterSplit("".join(lines[1:index]), "".join(lines[index + 1 :]), index + 2)
    return FrontmatterSplit(None, text, 1, unclosed=True)


@dataclass(slots=True)
class ParseOutcome:
    skill: SkillDef | None
    diagnostics: list[Diagnostic] = field(default_factory=list)


def key_lines(yaml_text: str) -> dict[str, int]:
    """Top-level key -> line within the YAML text (1-based)."""
    found: dict[str, int] = {}
    for number, line in enumerate(yaml_text.splitlines(), start=1):
        match = _TOP_KEY.match(line)
        if match and match.group(1) not in found:
            found[match.group(1)] = number
    return found


def repair_unquoted_colons(yaml_text: str) -> tuple[str, list[tuple[str, int]]]:
    """Quote top-level plain values that contain ``: `` (a YAML error hosts accept). Returns the repaired
    text and the (key, line) pairs that were quoted. Indented continuation lines are folded into the value."""
    lines = yaml_text.splitlines()
    out: list[str] = []
    repaired: list[tuple[str, int]] = []
    index = 0
    while index < len(lines):
        line = lines[index]
        match = _TOP_KEY.match(line)
        value = (match.group(2) or "").strip() if match else ""
        if match and value and value[0] not in "'\"|>[{&*!" and (": " in value or value.endswith(":")):
            parts = [value]
            index += 1
            while index < len(lines) and lines[index][:1] in (" ", "\t") and lines[index].strip():
                parts.append(lines[index].strip())
                index += 1
            joined = " ".join(parts)
            if " #" in joined:  # a plain scalar ends at " #": keep the comment out of the value
                joined = joined.split(" #", 1)[0].rstrip()
            quoted = "'" + joined.replace("'", "''") + "'"
            out.append(f"{match.group(1)}: {quoted}")
            repaired.append((match.group(1), len(out)))
            continue
        out.append(line)
        index += 1
    return "\n".join(out) + "\n", repaired


_MAX_NODES = 20_000
_MAX_DEPTH = 64


class _FrontmatterTooLarge(ValueError):
    """YAML aliases can make a small file a cyclic or exponentially large value."""


def _jsonable(value: Any) -> Any:
    """Plain JSON-like data from what the YAML loader built, within a node and depth budget."""
    budget = [_MAX_NODES]

    def convert(item: Any, depth: int) -> Any:
        budget[0] -= 1
        if budget[0] < 0 or depth > _MAX_DEPTH:
            raise _FrontmatterTooLarge
        if isinstance(item, datetime.date | datetime.datetime | datetime.time):
            return item.isoformat()
        if isinstance(item, dict):
            return {str(k): convert(v, depth + 1) for k, v in item.items()}
        if isinstance(item, list | tuple | set):
            return [convert(v, depth + 1) for v in item]
        if isinstance(item, bytes):
            return item.decode("utf-8", "replace")
        return item

    return convert(value, 0)


# The plain frontmatter most skills have - ``key: words``, ``key: [words, words]``, and one level of
# ``key:`` followed by ``  key: words`` lines - is read without the YAML loader, which costs about ten times as
# much. The subset is narrow enough that the loader would give the same mapping: printable ASCII only; values
# that start with a letter (so no indicator, number, date or quote) and hold neither ``: `` nor `` #`` nor two
# spaces in a row, nor end with ``:``; list items of letters, digits, spaces and ``_./()+-`` only; never a word
# YAML reads as a boolean or null; no duplicate key, no comment, no blank or odd line. Anything else goes to the
# loader.
_PLAIN_TEXT = re.compile(r"[\x20-\x7e\n]*")
_SIMPLE_KEY = re.compile(r"([A-Za-z][A-Za-z0-9_-]*):(?: (.*))?")
_SIMPLE_NESTED = re.compile(r"  ([A-Za-z][A-Za-z0-9_-]*): (.*)")
_SIMPLE_WORDS = re.compile(r"[A-Za-z][\x20-\x7e]*")
_SIMPLE_ITEM = re.compile(r"[A-Za-z][A-Za-z0-9 _./()+-]*")
_SIMPLE_MAX_CHARS = 16_000
"""At least two characters per value, so what the subset reads stays far below the loader's node budget."""
_NOT_STRINGS = frozenset(["yes", "no", "true", "false", "on", "off", "null", "y", "n"])


def _simple_scalar(value: str) -> str | None:
    if value != value.strip() or not _SIMPLE_WORDS.fullmatch(value) or value.lower() in _NOT_STRINGS:
        return None
    if "  " in value or ": " in value or " #" in value or value.endswith(":"):
        return None
    return value


def _simple_value(value: str) -> Any:
    """A plain scalar or a one-line flow list of plain words; ``None`` when the loader must decide."""
    if value.startswith("[") and value.endswith("]"):
        inner = value[1:-1]
        if not inner.strip():
            return None
        items = [item.strip() for item in inner.split(",")]
        if all(
            _SIMPLE_ITEM.fullmatch(item) and "  " not in item and item.lower() not in _NOT_STRINGS for item in items
        ):
            return items
        return None
    return _simple_scalar(value)


def _simple_mapping(yaml_text: str) -> dict[str, Any] | None:
    """The frontmatter as the YAML loader would give it, when it is in the plain subset described above."""
    if not yaml_text or len(yaml_text) > _SIMPLE_MAX_CHARS or "\r" in yaml_text or not _PLAIN_TEXT.fullmatch(yaml_text):
        return None
    data: dict[str, Any] = {}
    nested: dict[str, Any] | None = None
    for line in yaml_text.split("\n")[:-1] if yaml_text.endswith("\n") else yaml_text.split("\n"):
        if line.startswith(" "):
            match = _SIMPLE_NESTED.fullmatch(line)
            if nested is None or match is None or match.group(1) in nested or match.group(1).lower() in _NOT_STRINGS:
                return None
            value = _simple_scalar(match.group(2))
            if value is None:
                return None
            nested[match.group(1)] = value
            continue
        if nested is not None and not nested:
            return None  # ``key:`` with nothing under it
        nested = None
        match = _SIMPLE_KEY.fullmatch(line)
        if match is None or match.group(1) in data or match.group(1).lower() in _NOT_STRINGS:
            return None
        if match.group(2) is None:
            nested = data[match.group(1)] = {}
            continue
        value = _simple_value(match.group(2))
        if value is None:
            return None
        data[match.group(1)] = value
    if nested is not None and not nested:
        return None
    return data


def _load_yaml(yaml_text: str) -> Any:
    """The YAML data; nesting too deep for the loader and integers Python will not convert are YAML errors too."""
    try:
        return yaml.load(yaml_text, Loader=_Loader)
    except RecursionError:
        problem, line = f"nested more than {_MAX_DEPTH} levels deep", bracket_line(yaml_text, _MAX_DEPTH)
    except ValueError as exc:
        if "integer string conversion" not in str(exc):
            raise
        problem, line = "an integer has more than 4300 digits", long_integer_line(yaml_text)
    mark = yaml.Mark("frontmatter", 0, line - 1, 0, None, 0) if line else None
    raise yaml.MarkedYAMLError(problem=problem, problem_mark=mark)


def load_frontmatter(yaml_text: str) -> Any:
    """Frontmatter YAML as plain data, after one repair of unquoted ``: `` when it needs it; raises
    ``yaml.YAMLError`` (unreadable) or ``ValueError`` (past the size budget)."""
    try:
        data = _load_yaml(yaml_text)
    except yaml.YAMLError:
        repaired, found = repair_unquoted_colons(yaml_text)
        if not found:
            raise
        data = _load_yaml(repaired)
    return _jsonable(data)


def parse_skill_text(
    text: str,
    path: Path,
    *,
    fmt: SkillFormat | None = None,
    scope: SkillScope = SkillScope.USER,
    plugin: str | None = None,
    root: Path | None = None,
) -> ParseOutcome:
    """Parse a skill from its text. ``fmt`` defaults to Agent Skills for ``SKILL.md``, Kairox otherwise;
    ``scope``, ``plugin`` and ``root`` say where the file was found, when the caller knows."""
    source = str(path)
    # Names from the string (a Path is normalised, so these equal path.name and path.parent.name): path.parent
    # would build a second Path for every skill parsed.
    file_name = os.path.basename(source)
    if fmt is None:
        fmt = SkillFormat.AGENT_SKILLS if file_name == SKILL_FILE else SkillFormat.KAIROX
    folder_name = os.path.basename(os.path.dirname(source))
    fallback_name = folder_name if fmt is SkillFormat.AGENT_SKILLS else path.stem

    def diag(
        reason: str,
        *,
        line: int | None = None,
        severity: Severity = Severity.WARNING,
        hint: str | None = None,
        name: str | None = None,
    ) -> Diagnostic:
        return Diagnostic(
            kind="skill",
            name=name or fallback_name,
            reason=reason,
            severity=severity,
            source=source,
            line=line,
            hint=hint,
        )

    split = split_frontmatter(text)
    if split.yaml_text is None:
        if split.unclosed:
            return ParseOutcome(
                None,
                [
                    diag(
                        "frontmatter opened by `---` on line 1 is never closed",
                        line=1,
                        severity=Severity.ERROR,
                        hint="add a `---` line after the last frontmatter key",
                    )
                ],
            )
        hint = "start the file with YAML frontmatter between `---` lines holding at least `description`"
        for number, line in enumerate(text.splitlines()[:40], start=1):
            if _DESCRIPTION_LINE.match(line):
                hint = (
                    f"line {number} has a `description:` line in the body; move it "
                    "into frontmatter between `---` lines at the top of the file"
                )
                break
        return ParseOutcome(
            None,
            [
                diag(
                    "no frontmatter: a skill needs YAML frontmatter with a description",
                    line=1,
                    severity=Severity.ERROR,
                    hint=hint,
                )
            ],
        )

    offset = 1  # the opening fence: YAML line n is file line n + 1
    diagnostics: list[Diagnostic] = []
    yaml_text = split.yaml_text
    simple = _simple_mapping(yaml_text)  # strings, lists of strings, one level of mapping: already plain data
    try:
        data = simple if simple is not None else _load_yaml(yaml_text)
    except yaml.YAMLError as first_error:
        repaired_text, repaired = repair_unquoted_colons(yaml_text)
        recovered = False
        if repaired:
            try:
                data = _load_yaml(repaired_text)
                recovered = True
            except yaml.YAMLError:
                pass
        if not recovered:
            mark = getattr(first_error, "problem_mark", None)
            error_line = mark.line + 1 + offset if mark is not None else None
            problem = getattr(first_error, "problem", None) or str(first_error).splitlines()[0]
            return ParseOutcome(
                None,
                [
                    diag(
                        f"frontmatter is not valid YAML: {problem}",
                        line=error_line,
                        severity=Severity.ERROR,
                        hint="fix the YAML at that line (quote values that contain `: ` or `#`)",
                    )
                ],
            )
        repaired_lines = key_lines(yaml_text)
        for key, _ in repaired:
            diagnostics.append(
                diag(
                    f"unquoted `: ` in the value of `{key}`; loaded as if it were quoted",
                    line=repaired_lines[key] + offset if key in repaired_lines else None,
                    hint=f"put the value of `{key}` in quotes",
                )
            )

    if data is None:
        data = {}
    if not isinstance(data, dict):
        return ParseOutcome(
            None,
            [
                diag(
                    f"frontmatter is a YAML {type(data).__name__}, not a mapping of keys",
                    line=1 + offset,
                    severity=Severity.ERROR,
                    hint="write `key: value` lines between the `---` fences",
                )
            ],
        )

    lines_of: dict[str, int] | None = None

    def line_of(key: str) -> int | None:
        nonlocal lines_of
        if lines_of is None:  # only a diagnostic needs it
            lines_of = key_lines(yaml_text)
        number = lines_of.get(key)
        return number + offset if number else None

    def warn(key: str, reason: str, hint: str | None) -> None:
        diagnostics.append(diag(reason, line=line_of(key), hint=hint))

    try:
        plain = data if data is simple else _jsonable(data)
    except _FrontmatterTooLarge:
        reason = (
            "frontmatter is too large or nested too deeply to read (a "
            "YAML alias that refers to itself, or aliases that multiply)"
        )
        return ParseOutcome(
            None,
            [
                diag(
                    reason,
                    line=1 + offset,
                    severity=Severity.ERROR,
                    hint="write the values out instead of using YAML anchors and aliases",
                )
            ],
        )
    reader = FieldReader(plain)
    frontmatter = reader.read(warn)

    name = frontmatter.name
    if not name and fmt is SkillFormat.AGENT_SKILLS:  # a file of its own (a command) is named by its file
        diagnostics.append(
            diag(
                f"no `name`; using the folder name {fallback_name!r}",
                line=1 + offset,
                severity=Severity.WARNING,
                hint="add `name:` to the frontmatter",
            )
        )
    name = name or fallback_name

    def named(diagnostic: Diagnostic) -> Diagnostic:
        return dataclasses.replace(diagnostic, name=name)

    if not frontmatter.description.strip():
        reason = "no `description`" if "description" not in reader.data else "`description` is empty"
        return ParseOutcome(
            None,
            [
                *map(named, diagnostics),
                diag(
                    f"{reason}: a skill needs one to be offered",
                    line=line_of("description") or 1 + offset,
                    severity=Severity.ERROR,
                    hint="add `description:` saying what the skill does and when to use it",
                    name=name,
                ),
            ],
        )

    if len(name) > MAX_NAME:
        diagnostics.append(
            diag(
                f"`name` is {len(name)} characters (more than {MAX_NAME})",
                line=line_of("name"),
                hint="shorten the name",
            )
        )
    if ":" in name or _SPACE.search(name):
        diagnostics.append(
            diag(
                f"`name` {name!r} contains spaces or `:`; refer to it quoted",
                line=line_of("name"),
                hint="use lowercase letters, digits and hyphens",
            )
        )
    if fmt is SkillFormat.AGENT_SKILLS and frontmatter.name and frontmatter.name != folder_name:
        diagnostics.append(
            diag(
                f"`name` {frontmatter.name!r} differs from its folder {folder_name!r}; loaded as {frontmatter.name!r}",
                line=line_of("name"),
                hint="rename the folder or the skill so they match",
            )
        )
    if len(frontmatter.description) > MAX_DESCRIPTION:
        diagnostics.append(
            diag(
                f"`description` is {len(frontmatter.description)} characters "
                f"(more than {MAX_DESCRIPTION}); the prompt catalog shortens it",
                line=line_of("description"),
                hint="move detail into the body",
            )
        )

    skill = SkillDef(
        name=name,
        description=frontmatter.description.strip(),
        path=path,
        format=fmt,
        frontmatter=frontmatter,
        body_line=split.body_line,
        scope=scope,
        plugin=plugin,
        root=root,
    )
    return ParseOutcome(skill, sorted((named(d) for d in diagnostics), key=lambda d: d.line or 0))
