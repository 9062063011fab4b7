"""Writing a file whole or not at all."""

import contextlib
import os
import stat
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
    import tempfile  # here: a host of one MCP server imports this module and never writes a file whole

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
    """``folder``, made if missing (with its missing parents) so that only its owner may enter it (0700). A folder
    that exists is left as it is: only :func:`tighten` changes one, and only Kairox's own."""
    folder.mkdir(parents=True, exist_ok=True, mode=PRIVATE_FOLDER)
    return folder


KEPT_FOLDERS = ("sessions", "logs", "spill", "cache", "mcp-oauth")
"""What the home keeps of conversations, logs, outputs, caches and tokens: tightened by :func:`tighten`."""


def tighten(home: Path) -> None:
    """Make a Kairox home written before files were private so: the home and the folders of :data:`KEPT_FOLDERS`
    0700, and what they hold without the group's and others' bits (the owner's kept). Only folders and regular
    files this user owns are changed, never through a link; a home that is a shared folder (the sticky bit, as
    ``/tmp``), another user's, or the user's own home folder is left as it is."""
    uid = os.geteuid()
    try:
        found = home.lstat()
    except OSError:
        return
    if not stat.S_ISDIR(found.st_mode) or found.st_uid != uid or found.st_mode & stat.S_ISVTX:
        return
    if os.path.realpath(home) == os.path.realpath(Path.home()):
        return
    with contextlib.suppress(OSError):
        if found.st_mode & 0o077:
            os.chmod(home, PRIVATE_FOLDER)
    for name in KEPT_FOLDERS:
        for below, folders, files in os.walk(home / name):  # links are not followed
            for entry in (*folders, *files, "."):
                path = os.path.join(below, entry)
                with contextlib.suppress(OSError):
                    mode = os.lstat(path)
                    ours = mode.st_uid == uid and (stat.S_ISDIR(mode.st_mode) or stat.S_ISREG(mode.st_mode))
                    if ours and mode.st_mode & 0o077:
                        os.chmod(path, stat.S_IMODE(mode.st_mode) & 0o700)


def open_private(file: Path, mode: str = "a", *, encoding: str | None = None) -> IO[Any]:
    """``file`` opened for writing (``a``, ``ab``, ``w``, ``wb``), created readable by its owner only; a missing
    folder is made private (:func:`private_folder`)."""
    private_folder(file.parent)
    flags = os.O_WRONLY | os.O_CREAT | (os.O_APPEND if mode.startswith("a") else os.O_TRUNC)
    return os.fdopen(os.open(file, flags, PRIVATE_FILE), mode, encoding=encoding)
