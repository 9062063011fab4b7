"""Writing a file whole or not at all."""

import contextlib
import os
import tempfile
from pathlib import Path


def write_atomically(file: Path, data: bytes, *, mode: int | None = None) -> int:
    """Write ``data`` to a temporary file beside ``file`` and rename it over ``file`` (its folder is made first),
    so a reader sees the old content or the new, never a part. The file gets ``mode`` (default: readable by its
    owner only). Returns the inode written; raises ``OSError``, and then leaves no temporary file behind."""
    file.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=file.parent, prefix=f".{file.name}.")
    try:
        with os.fdopen(fd, "wb") as handle:
            if mode is not None:
                os.fchmod(handle.fileno(), mode)
            handle.write(data)
            inode = os.fstat(handle.fileno()).st_ino
        os.replace(tmp, file)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    return inode
