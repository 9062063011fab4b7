"""Where a file is and what it holds: its real path with its status (the rule of :mod:`kairox._util._filestate`
says when that status proves a text sent before still current), and its text as the LSP tools read it."""

import errno
import os
import stat

from kairox._util._filestate import FileState, file_state


def locate(path: str) -> tuple[str, FileState]:
    """``os.path.realpath(path)`` and the :class:`FileState` of the file it names, taken together; raises
    ``OSError`` as ``os.stat`` does when there is no such file."""
    real = os.path.realpath(path)
    return real, file_state(real)


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


def disk_text(path: str) -> str:
    """:func:`read_text`, or '' when the file cannot be read."""
    try:
        return read_text(path)
    except (OSError, ValueError):  # a file that cannot be read, or a name no file can have
        return ""
