"""What a file on disk holds, read again only when its status says it may have changed.

A file's status (device, inode, size, modification and change times) changes with every write, with one gap: a
file system stamps times from a coarse clock (a few milliseconds; a second or two on some), so a second write
of the same size within one tick leaves the status as it was. A status is therefore trusted only once it had
been quiet for :data:`SETTLE_NS` when it was taken: the change time cannot be set back, so any write after that
gives a new one. Until then the file is read every time, as if nothing were kept.
"""

import errno
import os
import stat
import time
from dataclasses import dataclass

from kairox._util._realpath import resolved_by_kernel
from kairox.lsp._text import split_lines

SETTLE_NS = 2_000_000_000
"""How long a file's status must have been quiet before it is trusted to show the next write: more than the
coarsest time stamps (a second or two) and a little clock skew between a file server and this host."""

_KEPT_FILES = 64
"""Files whose text :class:`DiskTexts` keeps (the oldest read goes first)."""


@dataclass(frozen=True, slots=True)
class FileState:
    """A file's status when it was looked at; ``settled`` when no write since then can keep the same status."""

    key: tuple[int, int, int, int, int]
    settled: bool
    regular: bool

    def same_file_as(self, later: "FileState") -> bool:
        """Whether a text read after this status was taken is still the file's text at ``later``."""
        return self.settled and self.key == later.key


def _state(st: os.stat_result, now: int, settle_ns: int) -> FileState:
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
    return _state(os.stat(path), now, settle_ns)


def locate(path: str, *, settle_ns: int = SETTLE_NS) -> tuple[str, FileState]:
    """``os.path.realpath(path)`` and the :class:`FileState` of the file it names, taken together; raises
    ``OSError`` as ``os.stat`` does when there is no such file."""
    now = time.time_ns()
    resolved = resolved_by_kernel(path)
    if resolved is not None:
        return resolved[0], _state(resolved[1], now, settle_ns)
    real = os.path.realpath(path)
    return real, file_state(real, settle_ns=settle_ns)


MAX_TEXT_BYTES = 32 * 1024 * 1024
"""The largest file the LSP tools read (to send it to a server, or to show lines of it)."""


def read_text(path: str) -> str:
    """A file's text as the tools read it: UTF-8, an undecodable byte becoming U+FFFD. Only a regular file of at
    most :data:`MAX_TEXT_BYTES`: a path (the model's, or one a server names) may be a FIFO, whose opening would
    wait for a writer, or a device such as ``/dev/zero``, which never ends; those raise ``OSError``. The check is
    made on the opened file, so a path swapped between a look and the read changes nothing."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise OSError(errno.EINVAL, "not a regular file", path)
        if st.st_size > MAX_TEXT_BYTES:
            raise OSError(errno.EFBIG, f"larger than {MAX_TEXT_BYTES // (1024 * 1024)} MiB", path)
        os.set_blocking(fd, True)
        with open(fd, encoding="utf-8", errors="replace", closefd=False) as file:
            return file.read(MAX_TEXT_BYTES + 1)[:MAX_TEXT_BYTES]
    finally:
        os.close(fd)


@dataclass(slots=True)
class _Kept:
    state: FileState
    text: str
    lines: list[str] | None = None


class DiskTexts:
    """Texts (and their lines) of files as on disk, each read again when its :class:`FileState` changed or was
    not yet settled; a file that cannot be read is an empty text, kept for nothing."""

    def __init__(self, *, limit: int = _KEPT_FILES, settle_ns: int = SETTLE_NS) -> None:
        self._limit = limit
        self._settle_ns = settle_ns
        self._kept: dict[str, _Kept] = {}
        self.reads = 0
        """How many times a file was read (what a test of the cache looks at)."""

    def _entry(self, path: str) -> _Kept | None:
        try:
            state = file_state(path, settle_ns=self._settle_ns)
            kept = self._kept.get(path)
            if kept is not None and kept.state.same_file_as(state):
                return kept
            self.reads += 1
            kept = _Kept(state=state, text=read_text(path))
        except (OSError, ValueError):  # a file that cannot be read, or a name no file can have
            self._kept.pop(path, None)
            return None
        self._kept.pop(path, None)
        self._kept[path] = kept
        if len(self._kept) > self._limit:
            del self._kept[next(iter(self._kept))]
        return kept

    def text(self, path: str) -> str:
        kept = self._entry(path)
        return "" if kept is None else kept.text

    def lines(self, path: str) -> list[str]:
        """The file's lines as LSP counts them (shared: do not change the list)."""
        kept = self._entry(path)
        if kept is None:
            return []
        if kept.lines is None:
            kept.lines = split_lines(kept.text)
        return kept.lines
