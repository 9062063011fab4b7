"""The parse cache of configuration: a file that did not change is not read, parsed or validated again, and
the same environment variables or ``-c`` overrides are not parsed again.

An entry holds what reading one file as one layer gave: its table, the line of every key, its leaves with their
origins, and its problems (TOML syntax, or schema problems naming file, line and key), or that it was fine.
It is used again while the file's stat is the same: mtime, ctime, size and inode (a file replaced by a rename
has a new inode). A change made within the same clock tick as the read can leave all four unchanged, so the
stat alone proves nothing until the file's ctime is older than the read by more than :data:`SETTLE_NS` (a
program can set mtime back, not ctime); before that the file is read again and compared by digest, which costs
a read but no parse.

The env and CLI layers are kept by their exact input (the variables' names and values, the overrides' text).
"""

import hashlib
import os
import stat
import time
from collections.abc import Callable, Hashable
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from kairox.config._layers import Layer
from kairox.config._merge import LayerData
from kairox.errors import ConfigProblem

SETTLE_NS = 2_000_000_000
"""How much older than the read a file's ctime must be for its stat alone to prove it unchanged: more than the
coarsest timestamp granularity of common file systems (2 s on FAT)."""
MAX_ENTRIES = 256
"""Files (and env or CLI inputs) remembered at most; past that the cache starts over (a process reads a handful)."""
T = TypeVar("T")


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
            layer=template.layer, raw=template.raw, file=template.file, positions=template.positions, text_lines=template.text_lines,
            untrusted=untrusted, leaf_list=template.leaves(), pin_memo=template.pin_memo,
        )


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

    def __init__(self, *, settle_ns: int = SETTLE_NS) -> None:
        self.settle_ns = settle_ns
        self._entries: dict[tuple[str, Layer], _Entry] = {}
        self._layers: dict[tuple[Layer, Hashable], object] = {}
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

    def get(self, path: Path, layer: Layer, parse: Callable[[str], ParsedFile]) -> ParsedFile | None:
        """The parse of ``path`` read as ``layer``; None when it is not a regular file. An unreadable file raises
        ``OSError`` (or ``UnicodeDecodeError``), as reading it would."""
        key = (str(path), layer)
        read_at = time.time_ns()
        try:
            st = os.stat(path)
        except (OSError, ValueError):
            return None
        if not stat.S_ISREG(st.st_mode):
            return None
        signature = (st.st_mtime_ns, st.st_ctime_ns, st.st_size, st.st_ino)
        entry = self._entries.get(key)
        if entry is not None and entry.signature == signature and st.st_ctime_ns < entry.read_at_ns - self.settle_ns:
            self.hits += 1
            return entry.parsed
        with open(path, "rb") as handle:
            data = handle.read()
        found = digest(data)
        if entry is not None and entry.signature == signature and entry.digest == found:
            # the same bytes as when parsed, seen now: the stat proves that from here on, once it settles
            self._entries[key] = _Entry(signature, read_at, found, entry.parsed)
            self.hits += 1
            self.rechecks += 1
            return entry.parsed
        try:
            text = read_text(data)
        except UnicodeDecodeError:
            return parse(path.read_text(encoding="utf-8"))  # raises as a plain read does, with its message
        parsed = parse(text)
        self.parses += 1
        if len(self._entries) >= MAX_ENTRIES:
            self._entries.clear()
        self._entries[key] = _Entry(signature, read_at, found, parsed)
        return parsed


PARSE_CACHE = ConfigParseCache()
"""The process's cache: ``resolve_config`` uses it unless given another (or None, to read every file afresh)."""

__all__ = ["PARSE_CACHE", "SETTLE_NS", "ConfigParseCache", "ParsedFile", "digest", "read_text"]
