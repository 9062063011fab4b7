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
the read by more than :data:`SETTLE_NS` (ctime cannot be set back by a program, unlike mtime). A file read
more recently is read again and compared by digest; a folder listed more recently is listed again. A broken or
foreign cache file is ignored and rewritten.

Within one process two things are kept between scans (a server or an interface discovers again on every
configuration change): the tables as last loaded or saved, reused while the cache file's stat is unchanged
instead of loading it again, and the skill each file gave, reused while the file's digest is unchanged
instead of building it again from its cached payload. Neither skips a check: every entry is still proven
unchanged by the stat of its file or folder (and the digest when that is not enough) before it is used.
"""

import gc
import hashlib
import marshal
import os
from collections.abc import Callable, Iterable
from dataclasses import MISSING, Field, fields
from pathlib import Path
from typing import Any

from kairox._util._files import write_atomically
from kairox.errors import Diagnostic, Severity
from kairox.skills._model import SkillArgument, SkillDef, SkillFormat, SkillFrontmatter, SkillScope
from kairox.skills._parse import ParseOutcome

CACHE_VERSION = 6
"""Bump whenever parsing changes what it gives, or the tables change shape, so old entries are not reused."""
_MAGIC = b"kairox-skills-cache\n"
SETTLE_NS = 2_000_000_000
"""How much older than the read an entry's ctime must be for its stat alone to prove it unchanged: more than
the coarsest timestamp granularity of common file systems (2 s on FAT)."""

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


# A warm discovery in a new process builds every skill from the cache: 10,000 frontmatters and skills. Their
# dataclass ``__init__`` (frozen, so one ``object.__setattr__`` call per field, keyword arguments) costs about
# twice as much as setting the slots directly, and checks nothing more: the values come from a parse.
def _factory(field: Field[Any]) -> Callable[[], Any] | None:
    return None if field.default_factory is MISSING else field.default_factory


_FRONTMATTER_SLOTS = tuple(
    (f.name, getattr(SkillFrontmatter, f.name).__set__, f.default, _factory(f)) for f in fields(SkillFrontmatter)
)
_SKILL_SLOTS = tuple(getattr(SkillDef, f.name).__set__ for f in fields(SkillDef))
_SKILL_FIELDS = ("name", "description", "path", "format", "scope", "plugin", "frontmatter", "body_line", "root")
assert tuple(f.name for f in fields(SkillDef)) == _SKILL_FIELDS, "_skill() takes the fields in this order"
_new = object.__new__


def _frontmatter_from_plain(data: dict[str, Any]) -> SkillFrontmatter:
    if "arguments" in data:
        data = {**data, "arguments": tuple(SkillArgument(**a) for a in data["arguments"])}
    frontmatter: SkillFrontmatter = _new(SkillFrontmatter)
    get = data.get
    for name, set_slot, default, factory in _FRONTMATTER_SLOTS:
        value = get(name, MISSING)
        if value is MISSING:
            value = default if factory is None else factory()
        set_slot(frontmatter, value)
    return frontmatter


def _skill(*values: Any) -> SkillDef:
    """A ``SkillDef`` from its field values in declaration order (``_SKILL_FIELDS``)."""
    skill: SkillDef = _new(SkillDef)
    for set_slot, value in zip(_SKILL_SLOTS, values, strict=True):
        set_slot(skill, value)
    return skill


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
        skill = _skill(
            name, description, path, _FORMATS[fmt], scope, plugin, _frontmatter_from_plain(frontmatter), body_line, root
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
_decoded: dict[str, tuple[Placement, bytes, SkillDef | None, tuple[Diagnostic, ...]]] = {}
"""File path -> where it was found, its digest, and the skill and diagnostics its parse gave, placed there.
A digest fixes the bytes, and the bytes and the path fix the parse: equal digests mean the same objects."""
_DECODED_LIMIT = 200_000
_tables: dict[str, tuple[tuple[int, int, int, int], dict[str, tuple[Any, ...]], dict[str, tuple[Any, ...]]]] = {}
"""Cache file -> its stat signature and the tables it held when this process last loaded or wrote it."""


def _signature(st: os.stat_result) -> tuple[int, int, int, int]:
    return st.st_mtime_ns, st.st_ctime_ns, st.st_size, st.st_ino


def decoded_outcome(
    path: str, file_digest: bytes, payload: Payload, placement: Placement
) -> tuple[SkillDef | None, tuple[Diagnostic, ...]]:
    """The skill and diagnostics of a cached payload, built once per process for each file's bytes."""
    known = _decoded.get(path)
    if known is not None and known[1] == file_digest and known[0] == placement:
        return known[2], known[3]
    scope, plugin, root = placement
    outcome = outcome_from_plain(payload, Path(path), source=path, scope=scope, plugin=plugin, root=root)
    remember_outcome(path, file_digest, outcome, placement)
    return outcome.skill, tuple(outcome.diagnostics)


def remember_outcome(path: str, file_digest: bytes, outcome: ParseOutcome, placement: Placement) -> None:
    if len(_decoded) >= _DECODED_LIMIT and path not in _decoded:
        _decoded.clear()
    _decoded[path] = (placement, file_digest, outcome.skill, tuple(outcome.diagnostics))


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
        key = str(file)
        try:
            with open(file, "rb") as handle:
                signature = _signature(os.fstat(handle.fileno()))
                known = _tables.get(key)
                if known is not None and known[0] == signature:
                    # The file this process last loaded or wrote (a rewrite is a new inode: save() replaces it).
                    self._files, self._folders = dict(known[1]), dict(known[2])
                    return
                data = handle.read()
        except OSError:
            return
        if not data.startswith(_MAGIC):
            return
        paused = gc.isenabled()
        gc.disable()  # tens of thousands of tuples without cycles: the collector would only slow the load
        try:
            loaded = marshal.loads(data[len(_MAGIC) :])
        except (EOFError, ValueError, TypeError):
            return
        finally:
            if paused:
                gc.enable()
        if not (isinstance(loaded, tuple) and len(loaded) == 3 and loaded[0] == CACHE_VERSION):
            return
        _, files, folders = loaded
        if isinstance(files, dict) and isinstance(folders, dict):
            self._files, self._folders = files, folders
            _tables[key] = (signature, dict(files), dict(folders))

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
                _decoded.pop(key, None)
            if gone:
                self._dirty = True

    def save(self) -> None:
        """Write the cache if anything changed; a cache that cannot be written is only a slower next scan."""
        if self.file is None or not self._dirty:
            return
        data = _MAGIC + marshal.dumps((CACHE_VERSION, self._files, self._folders))
        try:
            inode = write_atomically(self.file, data)
            written = os.stat(self.file)  # after the rename, which moves the ctime
            if written.st_ino == inode:  # still ours, not another process's newer file
                _tables[str(self.file)] = (_signature(written), dict(self._files), dict(self._folders))
            self._dirty = False
        except OSError:
            pass
