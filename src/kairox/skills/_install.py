"""Installing a skill (S8) from a local folder, a git URL or an archive URL (zip, tar.gz).

The source is fetched into a private staging folder, the skill in it is found and validated, the caller's
``authorize(target)`` is asked (the CLI wires it to the policy gate), and only then is the skill copied into a
hidden folder next to the target and renamed into place. A failure at any step leaves nothing behind.

A source may end with ``#sub/folder`` to pick a skill inside a larger repository or archive; ``name``
picks one by name when the source holds several.
"""

import contextlib
import enum
import gzip
import inspect
import lzma
import os
import re
import shutil
import tarfile
import tempfile
import zipfile
import zlib
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple
from urllib.parse import unquote, urlparse

import anyio

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

ARCHIVE_SUFFIXES = (".zip", ".tar.gz", ".tgz", ".tar", ".tar.bz2", ".tar.xz")
MAX_ARCHIVE_BYTES = 64 * 1024 * 1024
_UNPACK_FACTOR = 4
"""An archive may unpack to this many times the download limit, so a small bomb cannot fill the disk."""
STAGING_PREFIX = ".kairox-install-"


class SourceKind(enum.StrEnum):
    LOCAL = "local"
    GIT = "git"
    ARCHIVE = "archive"


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


def _is_git_dir(path: Path) -> bool:
    return (path / ".git").exists() or ((path / "HEAD").is_file() and (path / "objects").is_dir())


class SkillSource(NamedTuple):
    """Where a skill comes from, as ``classify_source`` reads a source string."""

    kind: SourceKind
    location: str
    """A local path, or the URL to clone or download."""
    subpath: str | None = None
    """A folder inside the repository or archive (``SOURCE#sub/folder``)."""
    ref: str | None = None
    """A branch or tag to clone (from a ``.../tree/<ref>/...`` web address)."""


_GITHUB_TREE = re.compile(r"^https://github\.com/([^/]+)/([^/]+)/(?:tree|blob)/([^/]+)(?:/(.*))?$")


def classify_source(source: str) -> SkillSource:
    """Read a source string: a folder, ``git+URL``, a git URL (``https://...``, ``ssh://``, ``git@host:``,
    ``file://`` of a repository), a GitHub folder address (``https://github.com/o/r/tree/main/skills/x``), or an
    archive URL (``.zip``, ``.tar.gz`` ...). ``#sub/folder`` picks a folder inside."""
    location, _, fragment = source.partition("#")
    subpath = fragment or None
    if location.startswith("git+"):
        return SkillSource(SourceKind.GIT, location[4:], subpath)
    tree = _GITHUB_TREE.match(location.rstrip("/"))
    if tree:
        owner, repo, ref, inner = tree.groups()
        if inner and inner.endswith("/SKILL.md"):
            inner = inner[: -len("/SKILL.md")]
        return SkillSource(SourceKind.GIT, f"https://github.com/{owner}/{repo}.git", subpath or inner or None, ref)
    parsed = urlparse(location)
    lower = parsed.path.lower()
    if parsed.scheme in ("http", "https"):
        return SkillSource(SourceKind.ARCHIVE if lower.endswith(ARCHIVE_SUFFIXES) else SourceKind.GIT, location, subpath)
    if parsed.scheme in ("ssh", "git") or (not parsed.scheme and "@" in location and ":" in location and not Path(location).exists()):
        return SkillSource(SourceKind.GIT, location, subpath)
    if parsed.scheme == "file":
        local = Path(unquote(parsed.path))
        if lower.endswith(ARCHIVE_SUFFIXES):
            return SkillSource(SourceKind.ARCHIVE, location, subpath)
        if _is_git_dir(local):
            return SkillSource(SourceKind.GIT, location, subpath)
        return SkillSource(SourceKind.LOCAL, str(local), subpath)
    return SkillSource(SourceKind.LOCAL, location, subpath)


async def _clone(url: str, into: Path, timeout_sec: float, ref: str | None = None) -> None:
    env = {**os.environ, "GIT_TERMINAL_PROMPT": "0", "GIT_ASKPASS": "true"}
    branch = ["--branch", ref] if ref else []
    command = ["git", "clone", "--depth", "1", "--quiet", *branch, "--", url, str(into)]
    try:
        with anyio.fail_after(timeout_sec):
            result = await anyio.run_process(command, check=False, env=env)
    except TimeoutError as exc:
        raise SkillInstallError(f"git clone of {url} did not finish in {timeout_sec:.0f}s", hint="check the URL and the network") from exc
    except FileNotFoundError as exc:
        raise SkillInstallError("git is not installed", hint="install git, or install from a local folder or an archive URL") from exc
    if result.returncode != 0:
        stderr = result.stderr.decode("utf-8", "replace").strip().splitlines()
        reason = stderr[-1] if stderr else f"exit code {result.returncode}"
        raise SkillInstallError(f"git clone of {url} failed: {reason}", hint="check the URL and that you can read the repository")


async def _download(url: str, into: Path, timeout_sec: float, max_bytes: int) -> Path:
    parsed = urlparse(url)
    if parsed.scheme == "file":
        return Path(unquote(parsed.path))
    import httpx

    name = Path(parsed.path).name or "archive"
    target = into / name
    size = 0
    try:
        async with httpx.AsyncClient(follow_redirects=True, timeout=timeout_sec) as client, client.stream("GET", url) as response:
            if response.status_code != 200:
                raise SkillInstallError(f"download of {url} failed: HTTP {response.status_code}", hint="check the URL")
            with target.open("wb") as handle:
                async for chunk in response.aiter_bytes():
                    size += len(chunk)
                    if size > max_bytes:
                        raise SkillInstallError(f"{url} is larger than {max_bytes // (1024 * 1024)} MiB; refused")
                    handle.write(chunk)
    except httpx.HTTPError as exc:
        raise SkillInstallError(f"download of {url} failed: {exc}", hint="check the URL and the network") from exc
    return target


def _too_large(archive: Path, limit: int) -> SkillInstallError:
    return SkillInstallError(f"{archive.name} unpacks to more than {limit} bytes; refused", hint="a skill is a few text files")


def _extract(archive: Path, into: Path, max_unpacked: int) -> Path:
    """Extract safely (no absolute paths, no ``..``, no links, at most ``max_unpacked`` bytes) and return the
    content folder. A damaged archive is a refusal with the reason, not a crash."""
    try:
        return _unpack(archive, into, max_unpacked)
    except (zipfile.BadZipFile, tarfile.TarError, EOFError, zlib.error, lzma.LZMAError, gzip.BadGzipFile) as exc:
        raise SkillInstallError(f"{archive.name} is damaged: {exc}", hint="download it again, or install from a folder") from exc


def _unpack(archive: Path, into: Path, max_unpacked: int) -> Path:
    into.mkdir()
    if zipfile.is_zipfile(archive):
        with zipfile.ZipFile(archive) as bundle:
            if sum(member.file_size for member in bundle.infolist()) > max_unpacked:
                raise _too_large(archive, max_unpacked)
            for member in bundle.infolist():
                parts = Path(member.filename).parts
                if member.filename.startswith("/") or ".." in parts:
                    raise SkillInstallError(f"{archive.name}: entry {member.filename!r} leaves the archive folder; refused")
                if (member.external_attr >> 16) & 0o170000 == 0o120000:
                    raise SkillInstallError(f"{archive.name}: entry {member.filename!r} is a symbolic link; refused")
            bundle.extractall(into)
    elif tarfile.is_tarfile(archive):
        with tarfile.open(archive) as bundle:
            if sum(member.size for member in bundle.getmembers()) > max_unpacked:
                raise _too_large(archive, max_unpacked)
            try:
                bundle.extractall(into, filter="data")
            except tarfile.FilterError as exc:
                raise SkillInstallError(f"{archive.name}: unsafe entry: {exc}; refused") from exc
    else:
        raise SkillInstallError(f"{archive.name} is neither a zip nor a tar archive", hint="give a .zip or .tar.gz URL")
    entries = [e for e in into.iterdir() if not e.name.startswith(".") and e.name != "__MACOSX"]
    if len(entries) == 1 and entries[0].is_dir():
        return entries[0]
    return into


def _pick(tree: Path, name: str | None) -> tuple[SkillDef, list[Diagnostic]]:
    """The one skill in ``tree`` (validated), or an error saying why there is none or which to choose."""
    if tree.is_file():
        outcome = parse_skill_file(tree, fmt=SkillFormat.AGENT_SKILLS if tree.name == SKILL_FILE else SkillFormat.KAIROX)
        if outcome.skill is None:
            raise SkillInstallError(f"{tree} is not a valid skill", diagnostics=outcome.diagnostics, hint=_first_hint(outcome.diagnostics))
        return outcome.skill, outcome.diagnostics
    if (tree / SKILL_FILE).is_file() and name is None:
        outcome = parse_skill_file(tree / SKILL_FILE)
        if outcome.skill is None:
            raise SkillInstallError(f"{tree / SKILL_FILE} is not a valid skill", diagnostics=outcome.diagnostics, hint=_first_hint(outcome.diagnostics))
        return outcome.skill, outcome.diagnostics
    found = discover_skills([SkillRoot(path=tree, scope=SkillScope.USER)], max_depth=8, loose=LooseFiles.SKILLS_DIRS)
    skills = [s for s in found.skills if name is None or s.name == name]
    errors = [d for d in found.diagnostics if d.severity is Severity.ERROR]
    if not skills:
        what = f"no skill named {name!r}" if name else "no skill"
        raise SkillInstallError(f"{what} found in the source", diagnostics=errors, hint=_first_hint(errors) or "a skill is a folder with SKILL.md, or a markdown file with frontmatter")
    if len(skills) > 1:
        names = ", ".join(sorted(s.name for s in skills))
        raise SkillInstallError(f"the source holds several skills ({names})", hint="choose one with --name NAME or SOURCE#sub/folder")
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
                    raise SkillInstallError(f"{path} is a symbolic link leaving the skill folder; refused", hint="replace the link by the file it points to")


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
    kind, location, subpath, ref = classify_source(source)
    with tempfile.TemporaryDirectory(prefix="kairox-skill-") as staging_dir:
        staging = Path(staging_dir)
        if kind is SourceKind.LOCAL:
            tree = Path(location).expanduser().resolve()
            if not tree.exists():
                raise SkillInstallError(f"{location} does not exist", hint="give a skill folder, a git URL or an archive URL")
        elif kind is SourceKind.GIT:
            note(f"cloning {location}")
            tree = staging / "clone"
            await _clone(location, tree, timeout_sec, ref)
        else:
            note(f"downloading {location}")
            archive = await _download(location, staging, timeout_sec, max_bytes)
            note(f"extracting {archive.name}")
            tree = _extract(archive, staging / "extracted", _UNPACK_FACTOR * max_bytes)
        if subpath:
            tree = (tree / subpath).resolve()
            if not tree.exists():
                raise SkillInstallError(f"{subpath!r} does not exist in {location}")
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
            raise SkillInstallDeniedError(f"writing {target} was not allowed", hint="run interactively to approve, or add an allow rule for that path")
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
            raise SkillInstallError(f"copying the skill to {target} failed: {_copy_reason(exc)}; nothing was installed") from exc
        raise
    if staged is not None:
        shutil.rmtree(staged, ignore_errors=True)


def _copy_reason(exc: OSError) -> str:
    if isinstance(exc, shutil.Error) and exc.args and isinstance(exc.args[0], list) and exc.args[0]:
        source, _, why = exc.args[0][0]
        return f"{source}: {why}"
    return str(exc)
