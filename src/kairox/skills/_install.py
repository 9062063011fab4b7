"""Installing a skill (S8) from a local folder, a git URL or an archive URL (zip, tar.gz).

The source is fetched into a private staging folder, the skill in it is found and validated, the caller's
``authorize(target)`` is asked (the CLI wires it to the policy gate), and only then is the skill copied into a
hidden folder next to the target and renamed into place. A failure at any step leaves nothing behind.

A source may end with ``#sub/folder`` to pick a skill inside a larger repository or archive; ``name``
picks one by name when the source holds several.
"""

import contextlib
import inspect
import os
import shutil
import tempfile
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path

from kairox._rpc._fetch import (
    MAX_ARCHIVE_BYTES,
    FetchError,
    SourceKind,
    fetch_source,
)
from kairox.errors import Diagnostic, Severity
from kairox.events import EventSink, NullSink
from kairox.skills._discovery import LooseFiles, SkillRoot, discover_skills
from kairox.skills._events import SkillInstalled
from kairox.skills._load import parse_skill_file
from kairox.skills._model import SKILL_FILE, SkillDef, SkillFormat, SkillScope
from kairox.skills._registry import SkillError

Authorize = Callable[[Path], bool | Awaitable[bool]]
"""Asked with the target path before anything is written; False refuses the install."""
Progress = Callable[[str], None]

STAGING_PREFIX = ".kairox-install-"


class SkillInstallError(SkillError):
    """An install failed; nothing was written."""

    def __init__(self, message: str, *, hint: str | None = None, diagnostics: list[Diagnostic] | None = None) -> None:
        super().__init__(message, hint=hint)
        self.diagnostics = diagnostics or []


class SkillInstallDeniedError(SkillInstallError):
    """The policy gate (or the user) refused the write."""


@dataclass(frozen=True, kw_only=True, slots=True)
class InstalledSkill:
    name: str
    path: Path
    source: str
    kind: SourceKind
    diagnostics: list[Diagnostic] = field(default_factory=list)
    """Warnings about the installed skill (it loaded, but something is odd)."""


def _pick(tree: Path, name: str | None) -> tuple[SkillDef, list[Diagnostic]]:
    """The one skill in ``tree`` (validated), or an error saying why there is none or which to choose."""
    single = tree if tree.is_file() else tree / SKILL_FILE
    if tree.is_file() or (name is None and single.is_file()):
        outcome = parse_skill_file(single)  # SKILL.md as Agent Skills, another markdown file as Kairox's format
        if outcome.skill is None:
            raise SkillInstallError(
                f"{single} is not a valid skill", diagnostics=outcome.diagnostics, hint=_first_hint(outcome.diagnostics)
            )
        return outcome.skill, outcome.diagnostics
    found = discover_skills([SkillRoot(path=tree, scope=SkillScope.USER)], max_depth=8, loose=LooseFiles.SKILLS_DIRS)
    skills = [s for s in found.skills if name is None or s.name == name]
    errors = [d for d in found.diagnostics if d.severity is Severity.ERROR]
    if not skills:
        what = f"no skill named {name!r}" if name else "no skill"
        raise SkillInstallError(
            f"{what} found in the source",
            diagnostics=errors,
            hint=_first_hint(errors) or "a skill is a folder with SKILL.md, or a markdown file with frontmatter",
        )
    if len(skills) > 1:
        names = ", ".join(sorted(s.name for s in skills))
        raise SkillInstallError(
            f"the source holds several skills ({names})", hint="choose one with --name NAME or SOURCE#sub/folder"
        )
    skill = skills[0]
    return skill, [d for d in found.diagnostics if d.source == str(skill.path)]


def _first_hint(diagnostics: list[Diagnostic]) -> str | None:
    for diagnostic in diagnostics:
        if diagnostic.severity is Severity.ERROR:
            where = f"{diagnostic.source}:{diagnostic.line}" if diagnostic.line else diagnostic.source
            return f"{where}: {diagnostic.reason}" + (f" ({diagnostic.hint})" if diagnostic.hint else "")
    return None


def _check_links(folder: Path) -> None:
    real_root = os.path.realpath(folder)
    for current, dirs, files in os.walk(folder):
        for name in [*dirs, *files]:
            path = os.path.join(current, name)
            if os.path.islink(path):
                real = os.path.realpath(path)
                if not (real == real_root or real.startswith(real_root + os.sep)):
                    raise SkillInstallError(
                        f"{path} is a symbolic link leaving the skill folder; refused",
                        hint="replace the link by the file it points to",
                    )


def folder_name(skill_name: str) -> str:
    """A skill name made safe as one folder name."""
    cleaned = "".join(ch if ch.isalnum() or ch in "-_." else "-" for ch in skill_name).strip(".-")
    return cleaned or "skill"


async def install_skill(
    source: str,
    *,
    dest_root: Path,
    authorize: Authorize,
    name: str | None = None,
    replace: bool = False,
    scope: str = "user",
    progress: Progress | None = None,
    events: EventSink | None = None,
    timeout_sec: float = 120.0,
    max_bytes: int = MAX_ARCHIVE_BYTES,
) -> InstalledSkill:
    """Install the skill at ``source`` under ``dest_root``; see the module docstring for the steps."""
    note = progress or (lambda message: None)
    with tempfile.TemporaryDirectory(prefix="kairox-skill-") as staging_dir:
        try:
            read, tree = await fetch_source(
                source,
                Path(staging_dir),
                timeout_sec=timeout_sec,
                max_bytes=max_bytes,
                progress=note,
                what="a skill folder, a git URL or an archive URL",
            )
        except FetchError as exc:
            raise SkillInstallError(exc.message, hint=exc.hint) from exc
        kind = read.kind
        skill, diagnostics = _pick(tree, name)
        note(f"validated skill {skill.name!r}")
        is_folder = skill.format is SkillFormat.AGENT_SKILLS
        content = skill.folder if is_folder else skill.path
        if is_folder:
            _check_links(content)
        target = dest_root / (folder_name(skill.name) if is_folder else folder_name(skill.name) + ".md")
        if (target.exists() or target.is_symlink()) and not replace:
            raise SkillInstallError(f"a skill is already installed at {target}", hint="pass --force to replace it")
        verdict = authorize(target)
        if inspect.isawaitable(verdict):
            verdict = await verdict
        if not verdict:
            raise SkillInstallDeniedError(
                f"writing {target} was not allowed",
                hint="run interactively to approve, or add an allow rule for that path",
            )
        _place(content, target, is_folder=is_folder)
    events = events or NullSink()
    events.emit(SkillInstalled(name=skill.name, path=str(target), source=source, scope=scope))
    note(f"installed {skill.name!r} at {target}")
    return InstalledSkill(name=skill.name, path=target, source=source, kind=kind, diagnostics=diagnostics)


def _place(content: Path, target: Path, *, is_folder: bool) -> None:
    """Copy into a hidden sibling, then rename into place; undo everything on failure."""
    created: list[Path] = []
    parent = target.parent
    for folder in [parent, *parent.parents]:
        if folder.exists():
            break
        created.append(folder)
    staged: Path | None = None
    backup: Path | None = None
    try:
        parent.mkdir(parents=True, exist_ok=True)
        staged = Path(tempfile.mkdtemp(prefix=STAGING_PREFIX, dir=parent))
        if is_folder:
            payload = staged / "skill"
            shutil.copytree(content, payload, ignore=shutil.ignore_patterns(".git"), symlinks=False)
        else:
            payload = staged / target.name
            shutil.copy2(content, payload)
        if target.exists() or target.is_symlink():
            backup = staged / "previous"
            os.rename(target, backup)
        os.rename(payload, target)
    except BaseException as exc:
        if backup is not None and backup.exists() and not target.exists():
            os.rename(backup, target)
        if staged is not None:
            shutil.rmtree(staged, ignore_errors=True)
        for folder in created:  # deepest first
            with contextlib.suppress(OSError):
                folder.rmdir()
        if isinstance(exc, OSError):
            raise SkillInstallError(
                f"copying the skill to {target} failed: {_copy_reason(exc)}; nothing was installed"
            ) from exc
        raise
    if staged is not None:
        shutil.rmtree(staged, ignore_errors=True)


def _copy_reason(exc: OSError) -> str:
    if isinstance(exc, shutil.Error) and exc.args and isinstance(exc.args[0], list) and exc.args[0]:
        source, _, why = exc.args[0][0]
        return f"{source}: {why}"
    return str(exc)
