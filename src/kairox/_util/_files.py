"""Writing a file whole or not at all."""

import contextlib
import os
import tempfile
from pathlib import Path
from typing import IO, Any


def write_atomically(file: Path, data: bytes, *, mode: int | None = None) -> int:
    """Write ``data`` to a temporary file beside ``file`` and rename it over ``file`` (its folder is made first),
    so a reader sees the old content or the new, never a part. The file gets ``mode``; by default it is readable by
    its owner only, in a folder only its owner may enter (:func:`private_folder`: Kairox's own caches). Returns the
    inode written; raises ``OSError``, and then leaves no temporary file behind."""
    if mode is None:
        private_folder(file.parent)
    else:
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


PRIVATE_FOLDER = 0o700
PRIVATE_FILE = 0o600


def private_folder(folder: Path) -> Path:
    """``folder``, made if missing, that only its owner may enter (0700). A folder that was open to others is
    tightened once, and everything in it with it (the group's and others' bits taken off, the owner's kept): what
    Kairox keeps under its home (conversations, logs, caches, tokens) is nobody else's to read."""
    folder.mkdir(parents=True, exist_ok=True, mode=PRIVATE_FOLDER)
    with contextlib.suppress(OSError):  # a folder of another user's (a shared home) is left as it is
        if folder.stat().st_mode & 0o777 != PRIVATE_FOLDER:
            os.chmod(folder, PRIVATE_FOLDER)
            for below, folders, files in os.walk(folder):
                for name in folders:
                    os.chmod(os.path.join(below, name), PRIVATE_FOLDER, follow_symlinks=False)
                for name in files:
                    path = os.path.join(below, name)
                    if not os.path.islink(path):
                        os.chmod(path, os.stat(path).st_mode & 0o700)
    return folder


def open_private(file: Path, mode: str = "a", *, encoding: str | None = None) -> IO[Any]:
    """``file`` opened for writing (``a``, ``ab``, ``w``, ``wb``), created readable by its owner only, in a private
    folder (:func:`private_folder`)."""
    private_folder(file.parent)
    flags = os.O_WRONLY | os.O_CREAT | (os.O_APPEND if mode.startswith("a") else os.O_TRUNC)
    return os.fdopen(os.open(file, flags, PRIVATE_FILE), mode, encoding=encoding)
