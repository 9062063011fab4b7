"""The parse cache: a skill file whose stat did not change is not parsed again, a folder whose stat did not
change is not listed again.

One file (``$KAIROX_HOME/cache/skills.cache`` by default) holds, in ``marshal`` form and plain tuples (quick to
load, nothing to validate), two tables:

- files: path -> (mtime_ns, ctime_ns, size, inode, read_at_ns, digest, payload), where the payload is what
  parsing gave (the skill without where it was found, which discovery adds, and its diagnostics);
- folders: path -> (mtime_ns, ctime_ns, inode, listed_at_ns, is_skill_dir, markdown names, subfolder names).

A folder's mtime and ctime move when an entry is added, removed or renamed in it, not when a file in it is
rewritten: that is why every candidate file is still stat'ed. A change made in the same clock tick as the read
would leave both times unchanged, so an entry is trusted on its stat alone only when its ctime is older than
the read by more than ``SETTLE_NS`` (the one settle window of :mod:`kairox._util._filestate`). A file read
more recently is read again and compared by digest; a folder listed more recently is listed again. A broken or
foreign cache file is ignored and rewritten.
"""

import hashlib
import marshal
import os
from collections.abc import Iterable
from dataclasses import fields
from pathlib import Path
from typing import Any

from kairox._util._files import write_atomically
from kairox._util._filestate import SETTLE_NS
from kairox.errors import Diagnostic, Severity
from kairox.skills._model import SkillArgument, SkillDef, SkillFormat, SkillFrontmatter, SkillScope
from kairox.skills._parse import ParseOutcome

CACHE_VERSION = 6
"""Bump whenever parsing changes what it gives, or the tables change shape, so old entries are not reused."""
_MAGIC = b"kairox-skills-cache\n"

_DEFAULTS = SkillFrontmatter()
_FIELD_DEFAULTS = tuple((f.name, getattr(_DEFAULTS, f.name)) for f in fields(SkillFrontmatter))

Payload = tuple[Any, ...]
"""``(skill, diagnostics)``: plain tuples, dicts and scalars only, so ``marshal`` can store them."""
Listing = tuple[bool, tuple[str, ...], tuple[str, ...]]
"""``(is_skill_dir, markdown file names, subfolder names)`` in name order, dot-names and skipped folders out."""


def digest(data: bytes) -> bytes:
    return hashlib.blake2b(data, digest_size=16).digest()


def _frontmatter_to_plain(frontmatter: SkillFrontmatter) -> dict[str, Any]:
    """Only the fields that differ from the defaults, to keep the cache small and quick to load."""
    data: dict[str, Any] = {}
    for name, default in _FIELD_DEFAULTS:
        value = getattr(frontmatter, name)
        if value == default:
            continue
        if name == "arguments":
            value = tuple(a.to_json() for a in value)
        data[name] = value  # tuples stay tuples: marshal keeps them, so loading needs no conversion
    return data


def outcome_to_plain(outcome: ParseOutcome) -> Payload:
    skill = outcome.skill
    stored = (
        None
        if skill is None
        else (
            skill.name,
            skill.description,
            skill.format.value,
            skill.body_line,
            _frontmatter_to_plain(skill.frontmatter),
        )
    )
    return stored, tuple((d.name, d.reason, d.severity.value, d.line, d.hint) for d in outcome.diagnostics)


_FORMATS = {f.value: f for f in SkillFormat}
_SEVERITIES = {s.value: s for s in Severity}


def outcome_from_plain(
    payload: Payload,
    path: Path,
    *,
    source: str | None = None,
    scope: SkillScope = SkillScope.USER,
    plugin: str | None = None,
    root: Path | None = None,
) -> ParseOutcome:
    """The cached parse of ``path`` (``source``: the same as a string), with the skill placed where it was found."""
    stored, diagnostics = payload
    skill = None
    if stored is not None:
        name, description, fmt, body_line, frontmatter = stored
        if "arguments" in frontmatter:
            frontmatter = {**frontmatter, "arguments": tuple(SkillArgument(**a) for a in frontmatter["arguments"])}
        skill = SkillDef(
            name=name,
            description=description,
            path=path,
            format=_FORMATS[fmt],
            scope=scope,
            plugin=plugin,
            frontmatter=SkillFrontmatter(**frontmatter),
            body_line=body_line,
            root=root,
        )
    if source is None:
        source = str(path)
    return ParseOutcome(
        skill,
        [
            Diagnostic(kind="skill", name=n, reason=r, severity=_SEVERITIES[s], source=source, line=line, hint=h)
            for n, r, s, line, h in diagnostics
        ],
    )


Placement = tuple[SkillScope, str | None, Path | None]
"""Where a file was found: the scope, plugin and root its skill gets."""


class SkillCache:
    """Parse results by file and listings by folder, valid while their stat is unchanged (see the module)."""

    def __init__(self, file: Path | None, *, settle_ns: int = SETTLE_NS) -> None:
        self.file = file
        self.settle_ns = settle_ns
        self._files: dict[str, tuple[Any, ...]] = {}
        self._folders: dict[str, tuple[Any, ...]] = {}
        self._seen: set[str] = set()
        self._dirty = False
        if file is not None:
            self._load(file)

    def _load(self, file: Path) -> None:
        try:
            data = file.read_bytes()
        except OSError:
            return
        if not data.startswith(_MAGIC):
            return
        try:
            loaded = marshal.loads(data[len(_MAGIC) :])
        except (EOFError, ValueError, TypeError):
            return
        if not (isinstance(loaded, tuple) and len(loaded) == 3 and loaded[0] == CACHE_VERSION):
            return
        _, files, folders = loaded
        if isinstance(files, dict) and isinstance(folders, dict):
            self._files, self._folders = files, folders

    def settled(self, ctime_ns: int, read_at_ns: int) -> bool:
        """Whether a change after the read at ``read_at_ns`` must have moved ``ctime_ns``."""
        return ctime_ns < read_at_ns - self.settle_ns

    # files

    def lookup(self, path: str, st: os.stat_result) -> tuple[Any, ...] | None:
        """The entry of ``path`` if its stat is unchanged: ``(..., read_at_ns, digest, payload)``; a payload of
        ``None`` means the file is not a skill (a loose markdown file without frontmatter)."""
        self._seen.add(path)
        entry = self._files.get(path)
        if (
            entry is None
            or entry[0] != st.st_mtime_ns
            or entry[1] != st.st_ctime_ns
            or entry[2] != st.st_size
            or entry[3] != st.st_ino
        ):
            return None
        return entry

    def put(self, path: str, st: os.stat_result, read_at_ns: int, file_digest: bytes, payload: Payload | None) -> None:
        self._seen.add(path)
        self._files[path] = (st.st_mtime_ns, st.st_ctime_ns, st.st_size, st.st_ino, read_at_ns, file_digest, payload)
        self._dirty = True

    # folders

    def listing(self, path: str, st: os.stat_result) -> Listing | None:
        """The names in folder ``path`` as last listed, if it cannot have changed since."""
        self._seen.add(path)
        entry = self._folders.get(path)
        if (
            entry is None
            or entry[0] != st.st_mtime_ns
            or entry[1] != st.st_ctime_ns
            or entry[2] != st.st_ino
            or not self.settled(entry[1], entry[3])
        ):
            return None
        return entry[4], entry[5], entry[6]

    def put_listing(self, path: str, st: os.stat_result, listed_at_ns: int, listing: Listing) -> None:
        self._seen.add(path)
        self._folders[path] = (st.st_mtime_ns, st.st_ctime_ns, st.st_ino, listed_at_ns, *listing)
        self._dirty = True

    def forget_listing(self, path: str) -> None:
        if self._folders.pop(path, None) is not None:
            self._dirty = True

    def prune(self, roots: Iterable[Path]) -> None:
        """Forget files and folders under ``roots`` that the last scan did not see (deleted or moved)."""
        prefixes = tuple(str(root).rstrip(os.sep) + os.sep for root in roots)
        for table in (self._files, self._folders):
            gone = [key for key in table.keys() - self._seen if key.startswith(prefixes) or key + os.sep in prefixes]
            for key in gone:
                del table[key]
            if gone:
                self._dirty = True

    def save(self) -> None:
        """Write the cache if anything changed; a cache that cannot be written is only a slower next scan."""
        if self.file is None or not self._dirty:
            return
        data = _MAGIC + marshal.dumps((CACHE_VERSION, self._files, self._folders))
        try:
            write_atomically(self.file, data)
            self._dirty = False
        except OSError:
            pass
