"""The parse cache of configuration: a file that did not change is not read, parsed or validated again, and
the same environment variables or ``-c`` overrides are not parsed again.

An entry holds what reading one file as one layer gave: its table, the line of every key, its leaves with their
origins, and its problems (TOML syntax, or schema problems naming file, line and key), or that it was fine.
It is used again while the file's stat is the same: mtime, ctime, size and inode (a file replaced by a rename
has a new inode). A change made within the same clock tick as the read can leave all four unchanged, so the
stat alone proves nothing until the file's ctime is older than the read by more than :data:`SETTLE_NS` (a
program can set mtime back, not ctime); before that the file is read again and compared by digest, which costs
a read but no parse. A file whose stat changed is read again too, and parsed again only when its bytes changed
(a program that writes the same text again costs a read).

The env and CLI layers are kept by their exact input (the variables' names and values, the overrides' text).

With :attr:`CacheScope.HOME` the files' entries are also kept for the next process in
``$KAIROX_HOME/cache/config.cache``, in ``marshal`` form and plain tuples: path and layer -> (stat, read time,
digest, table, key lines, leaves with their lines, or problems). The same checks decide whether an entry read
from there is used. A file whose table ``marshal`` cannot store (a TOML date) is kept in the process only; a
broken or foreign cache file is ignored and rewritten.
"""

import contextlib
import enum
import gc
import hashlib
import marshal
import os
import stat
import time
from collections.abc import Callable, Hashable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from kairox._util._files import write_atomically
from kairox.config._layers import Layer
from kairox.config._merge import KeyOrigin, LayerData, _leaf_parts
from kairox.errors import ConfigProblem

SETTLE_NS = 2_000_000_000
"""How much older than the read a file's ctime must be for its stat alone to prove it unchanged: more than the
coarsest timestamp granularity of common file systems (2 s on FAT)."""
MAX_ENTRIES = 256
"""Files (and env or CLI inputs) remembered at most; past that the cache starts over (a process reads a handful)."""
MAX_STORED = 64
"""Files kept in the cache file at most (the most recently read)."""
CACHE_VERSION = 1
"""Bump whenever parsing or validation changes what it gives, or the entries change shape."""
_MAGIC = b"kairox-config-cache\n"
T = TypeVar("T")


class CacheScope(enum.StrEnum):
    PROCESS = "process"
    """Parses are kept in this process only."""
    HOME = "home"
    """Also in ``$KAIROX_HOME/cache/config.cache``, for the next process."""


def cache_file(home: Path) -> Path:
    """Where parses are kept between processes."""
    return home / "cache" / "config.cache"


def digest(data: bytes) -> bytes:
    return hashlib.blake2b(data, digest_size=16).digest()


@dataclass(frozen=True, kw_only=True, slots=True)
class ParsedFile:
    """What one file gave as one layer: its data (None when it has problems) or its problems and their summary."""

    data: LayerData | None
    """A template: each resolve takes a copy that shares the table, the lines and the leaves (never changed)."""
    problems: tuple[ConfigProblem, ...] = ()
    detail: str | None = None
    """For a file with problems: the TOML error, or ``schema problems``."""

    def layer_data(self, *, untrusted: bool) -> LayerData | None:
        template = self.data
        if template is None:
            return None
        return LayerData(
            layer=template.layer,
            raw=template.raw,
            file=template.file,
            positions=template.positions,
            text_lines=template.text_lines,
            untrusted=untrusted,
            leaf_list=template.leaves(),
            pin_memo=template.pin_memo,
        )

    def to_plain(self) -> tuple[Any, ...]:
        """Plain tuples, dicts and scalars only, for ``marshal``."""
        data = self.data
        if data is None:
            return (
                "problems",
                tuple((p.file, p.line, p.key, p.message, p.hint, p.layer) for p in self.problems),
                self.detail,
            )
        leaves = tuple(
            (key, parts, origin.line, None if items is None else tuple(o.line for o in items))
            for key, parts, _, origin, items in data.leaves()
        )
        return ("data", str(data.layer), str(data.file), data.raw, data.positions, data.text_lines, leaves)

    @classmethod
    def from_plain(cls, plain: tuple[Any, ...]) -> "ParsedFile":
        if plain[0] == "problems":
            problems = tuple(
                ConfigProblem(file=f, line=n, key=k, message=m, hint=h, layer=layer)
                for f, n, k, m, h, layer in plain[1]
            )
            return cls(data=None, problems=problems, detail=plain[2])
        _, layer_name, file_name, raw, positions, text_lines, stored = plain
        layer, file = Layer(layer_name), Path(file_name)
        values = iter(_leaf_values(raw))
        leaves = []
        for key, parts, line, item_lines in stored:
            items = None if item_lines is None else tuple(KeyOrigin(layer=layer, file=file, line=n) for n in item_lines)
            leaves.append((key, parts, next(values), KeyOrigin(layer=layer, file=file, line=line), items))
        data = LayerData(
            layer=layer, raw=raw, file=file, positions=positions, text_lines=text_lines, leaf_list=leaves, pin_memo={}
        )
        return cls(data=data)


def _leaf_values(raw: dict[str, Any]) -> list[Any]:
    """The leaves' values in the order ``LayerData.leaves`` lists them (the stored entry holds the rest)."""
    return [value for _, value in _leaf_parts(raw, ())]


@dataclass(frozen=True, slots=True)
class _Entry:
    signature: tuple[int, int, int, int]
    """``(mtime_ns, ctime_ns, size, inode)`` when the file was read."""
    read_at_ns: int
    """Wall-clock time before the stat that came with the read (or the last check by digest)."""
    digest: bytes
    parsed: ParsedFile


def read_text(data: bytes) -> str:
    """``data`` as ``Path.read_text(encoding="utf-8")`` gives it: UTF-8, with universal newlines."""
    text = data.decode("utf-8")
    return text.replace("\r\n", "\n").replace("\r", "\n") if "\r" in text else text


class ConfigParseCache:
    """Parsed configuration files by path and layer, valid while the file is unchanged (see the module)."""

    def __init__(self, *, scope: CacheScope = CacheScope.PROCESS, settle_ns: int = SETTLE_NS) -> None:
        self.scope = scope
        self.settle_ns = settle_ns
        self._entries: dict[tuple[str, Layer], _Entry] = {}
        self._layers: dict[tuple[Layer, Hashable], object] = {}
        self._stores: dict[Path, dict[tuple[str, str], tuple[Any, ...]]] = {}
        """Per cache file: its entries as stored, ``(signature, read_at_ns, digest, plain parse)``."""
        self._dirty: set[Path] = set()
        self.loaded = 0
        """Files whose parse came from a cache file."""
        self.hits = 0
        """Files (and env or CLI inputs) answered from the cache."""
        self.rechecks = 0
        """Of the files' hits, those read again and compared by digest (changed too recently for the stat alone)."""
        self.parses = 0

    def clear(self) -> None:
        self._entries.clear()
        self._layers.clear()

    def layer(self, layer: Layer, given: Hashable, build: Callable[[], T]) -> T:
        """What ``build()`` made of ``given`` (the whole input of an env or CLI layer), made once per input.

        What it makes is shared by every resolve with that input: callers must not change it."""
        key = (layer, given)
        if key in self._layers:
            self.hits += 1
            return self._layers[key]  # type: ignore[return-value]
        made = build()
        if len(self._layers) >= MAX_ENTRIES:
            self._layers.clear()
        self._layers[key] = made
        return made

    def get(
        self, path: Path, layer: Layer, parse: Callable[[str], ParsedFile], *, home: Path | None = None
    ) -> ParsedFile | None:
        """The parse of ``path`` read as ``layer``; None when it is not a regular file. An unreadable file raises
        ``OSError`` (or ``UnicodeDecodeError``), as reading it would. ``home``: the Kairox home whose cache file
        keeps the entry for the next process (with :attr:`CacheScope.HOME`)."""
        key = (str(path), layer)
        store = self._store(home)
        read_at = time.time_ns()
        try:
            st = os.stat(path)
        except (OSError, ValueError):
            return None
        if not stat.S_ISREG(st.st_mode):
            return None
        signature = (st.st_mtime_ns, st.st_ctime_ns, st.st_size, st.st_ino)
        entry = self._entries.get(key)
        if (entry is None or entry.signature != signature) and store is not None:
            entry = self._from_store(store, key, signature)
            if entry is not None:
                self._entries[key] = entry
        if entry is not None and entry.signature == signature and st.st_ctime_ns < entry.read_at_ns - self.settle_ns:
            self.hits += 1
            return entry.parsed
        with open(path, "rb") as handle:
            data = handle.read()
        found = digest(data)
        if entry is not None and entry.digest == found:
            # the same bytes as when parsed, seen now (also when the file was written again with them: the parse
            # is of the bytes): the stat proves that from here on, once it settles
            # written to the cache file once the check settles the entry, not on every check before that
            settles = st.st_ctime_ns < read_at - self.settle_ns
            self._keep(key, _Entry(signature, read_at, found, entry.parsed), store if settles else None, home)
            self.hits += 1
            self.rechecks += 1
            return entry.parsed
        try:
            text = read_text(data)
        except UnicodeDecodeError:
            return parse(path.read_text(encoding="utf-8"))  # raises as a plain read does, with its message
        parsed = parse(text)
        self.parses += 1
        self._keep(key, _Entry(signature, read_at, found, parsed), store, home)
        return parsed

    def _keep(
        self,
        key: tuple[str, Layer],
        entry: _Entry,
        store: dict[tuple[str, str], tuple[Any, ...]] | None,
        home: Path | None,
    ) -> None:
        if len(self._entries) >= MAX_ENTRIES:
            self._entries.clear()
        self._entries[key] = entry
        if store is None or home is None:
            return
        plain = (entry.signature, entry.read_at_ns, entry.digest, entry.parsed.to_plain())
        try:
            marshal.dumps(plain)
        except ValueError:  # a TOML date or time: kept in this process only
            store.pop((key[0], str(key[1])), None)
            return
        store[(key[0], str(key[1]))] = plain
        self._dirty.add(cache_file(home))

    # the cache file

    def _store(self, home: Path | None) -> dict[tuple[str, str], tuple[Any, ...]] | None:
        if self.scope is not CacheScope.HOME or home is None:
            return None
        file = cache_file(home)
        if file not in self._stores:
            self._stores[file] = _load(file)
        return self._stores[file]

    def _from_store(
        self,
        store: dict[tuple[str, str], tuple[Any, ...]],
        key: tuple[str, Layer],
        signature: tuple[int, int, int, int],
    ) -> _Entry | None:
        stored = store.get((key[0], str(key[1])))
        if stored is None or tuple(stored[0]) != signature:
            return None
        try:
            parsed = ParsedFile.from_plain(stored[3])
        except (ValueError, TypeError, KeyError, StopIteration):
            return None
        self.loaded += 1
        return _Entry(signature, stored[1], stored[2], parsed)

    def save(self) -> None:
        """Write the cache files that changed; one that cannot be written only makes the next process slower."""
        for file in sorted(self._dirty):
            entries = sorted(self._stores[file].items(), key=lambda item: item[1][1], reverse=True)[:MAX_STORED]
            with contextlib.suppress(OSError):
                write_atomically(file, _MAGIC + marshal.dumps((CACHE_VERSION, dict(entries))))
        self._dirty.clear()


def _load(file: Path) -> dict[tuple[str, str], tuple[Any, ...]]:
    try:
        with open(file, "rb") as handle:
            data = handle.read()
    except OSError:
        return {}
    if not data.startswith(_MAGIC):
        return {}
    paused = gc.isenabled()
    gc.disable()  # thousands of tuples without cycles: the collector would only slow the load
    try:
        loaded = marshal.loads(data[len(_MAGIC) :])
    except (EOFError, ValueError, TypeError):
        return {}
    finally:
        if paused:
            gc.enable()
    if not (
        isinstance(loaded, tuple) and len(loaded) == 2 and loaded[0] == CACHE_VERSION and isinstance(loaded[1], dict)
    ):
        return {}
    return loaded[1]


PARSE_CACHE = ConfigParseCache(scope=CacheScope.PROCESS)
"""The process's cache: ``resolve_config`` uses it unless given another (or None, to read every file afresh).
In this process only: a cache file would copy what project and local files hold, secrets included, into the
home, for about 30 ms per process; an embedder that wants it passes ``ConfigParseCache(scope=CacheScope.HOME)``."""

__all__ = [
    "PARSE_CACHE",
    "SETTLE_NS",
    "CacheScope",
    "ConfigParseCache",
    "ParsedFile",
    "cache_file",
    "digest",
    "read_text",
]
