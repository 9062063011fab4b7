"""A log file that never grows past its cap: at the cap it moves to ``NAME.1`` (replacing the older one) and a
new file starts, so a chatty or hostile writer costs at most twice the cap on disk."""

import contextlib
import os
from pathlib import Path
from typing import IO

from kairox._util._files import open_private

LOG_LIMIT_BYTES = 8 * 1024 * 1024
"""Bytes one log file holds before it is rotated."""


class RotatingLog:
    """``RotatingLog(path).write(data)`` appends bytes; a write that fails (a full disk) closes the log quietly."""

    def __init__(self, path: Path, *, limit: int = LOG_LIMIT_BYTES) -> None:
        self.path = path
        self.limit = limit
        self._file: IO[bytes] | None = open_private(path, "ab")
        self._size = self._file.tell()

    def write(self, data: bytes, *, whole: bool = False) -> None:
        """Append ``data``; with ``whole`` it starts the next file rather than being split (when it fits in one)."""
        if whole and self._file is not None and self._size > 0 and self._size + len(data) > self.limit >= len(data):
            self._rotate()
        while data and self._file is not None:
            if self._size >= self.limit:
                self._rotate()
                continue
            part, data = data[: self.limit - self._size], data[self.limit - self._size :]
            try:
                self._file.write(part)
                self._file.flush()
            except OSError:
                self.close()
                return
            self._size += len(part)

    def _rotate(self) -> None:
        assert self._file is not None
        self.close()
        try:
            os.replace(self.path, self.path.with_name(self.path.name + ".1"))
            self._file = open_private(self.path, "ab")
        except OSError:
            return
        self._size = 0

    def close(self) -> None:
        handle, self._file = self._file, None
        if handle is not None:
            with contextlib.suppress(OSError):
                handle.close()
