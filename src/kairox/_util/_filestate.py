"""The one rule for keeping what was made from a file: use it again only while the file's status proves it unchanged.

A file's status (device, inode, size, modification and change times) changes with every write, with one gap: a
file system stamps times from a coarse clock (a few milliseconds; a second or two on some), so a second write
of the same size within one tick leaves the status as it was. A status is therefore trusted only once it had
been quiet for :data:`SETTLE_NS` when it was taken: the change time cannot be set back, so any write after that
gives a new one. Until then the file is read every time, as if nothing were kept.
"""

import os
import stat
import time
from collections.abc import Callable, Hashable
from dataclasses import dataclass
from typing import Generic, TypeVar

SETTLE_NS = 2_000_000_000
"""How long a file's status must have been quiet before it is trusted to show the next write: more than the
coarsest time stamps (2 s on FAT) and a little clock skew between a file server and this host."""

V = TypeVar("V")


@dataclass(frozen=True, slots=True)
class FileState:
    """A file's status when it was looked at; ``settled`` when no write since then can keep the same status."""

    key: tuple[int, int, int, int, int]
    settled: bool
    regular: bool

    def same_file_as(self, later: "FileState") -> bool:
        """Whether what was read after this status was taken is still the file's content at ``later``."""
        return self.settled and self.key == later.key


def state_of(st: os.stat_result, now: int, settle_ns: int = SETTLE_NS) -> FileState:
    """The :class:`FileState` of ``st``, taken after the clock read ``now``."""
    changed = max(st.st_mtime_ns, st.st_ctime_ns)
    return FileState(
        key=(st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns),
        settled=now - changed >= settle_ns,
        regular=stat.S_ISREG(st.st_mode),
    )


def file_state(path: str, *, settle_ns: int = SETTLE_NS) -> FileState:
    """The status of ``path`` (symlinks followed); raises ``OSError`` as ``os.stat`` does."""
    # the clock is read before the status: a write after it would be stamped at this time or later
    now = time.time_ns()
    return state_of(os.stat(path), now, settle_ns)


class FileMemo(Generic[V]):
    """What ``make()`` gave for a file, by key, made again unless the file's settled status is unchanged.

    At most ``limit`` entries (the oldest made goes first)."""

    def __init__(self, *, limit: int = 256, settle_ns: int = SETTLE_NS) -> None:
        self.limit = limit
        self.settle_ns = settle_ns
        self._kept: dict[Hashable, tuple[FileState, V]] = {}

    def get(self, key: Hashable, path: str, make: Callable[[FileState], V]) -> V:
        """``make(state)`` (which reads ``path``), or what it gave before for ``key`` while the file is unchanged.
        Raises ``OSError`` as ``os.stat`` does (and forgets ``key``)."""
        try:
            state = file_state(path, settle_ns=self.settle_ns)
        except (OSError, ValueError):
            self._kept.pop(key, None)
            raise
        kept = self._kept.get(key)
        if kept is not None and kept[0].same_file_as(state):
            return kept[1]
        self._kept.pop(key, None)
        value = make(state)
        self._kept[key] = (state, value)
        if len(self._kept) > self.limit:
            del self._kept[next(iter(self._kept))]
        return value
