"""``os.path.realpath`` in a few system calls: the kernel walks the path once (an ``O_PATH`` descriptor) and its
``/proc/self/fd`` link names the file it reached, where ``realpath`` asks ``lstat`` about every component."""

import os

_O_PATH = getattr(os, "O_PATH", 0)
_FD_LINKS = "/proc/self/fd/"


def resolved_by_kernel(path: str) -> tuple[str, os.stat_result] | None:
    """``path`` with its symlinks resolved by the kernel, with the status of the file it reached; None where that
    is not available (no ``O_PATH``, no ``/proc``) or the file is missing, unreachable or already deleted, for the
    caller to ask ``os.path.realpath``, which also resolves what does not exist yet."""
    if not _O_PATH:
        return None
    try:
        fd = os.open(path, _O_PATH | os.O_CLOEXEC)
    except (OSError, ValueError):
        return None
    try:
        st = os.fstat(fd)
        real = os.readlink(f"{_FD_LINKS}{fd}")
    except OSError:
        return None
    finally:
        os.close(fd)
    # a deleted file's link ends in " (deleted)"; one outside this process's root does not start with "/"
    if st.st_nlink == 0 or not real.startswith("/"):
        return None
    return real, st


def real_path(path: str) -> str:
    """``os.path.realpath(path)``, in a few system calls instead of one ``lstat`` per component when the file
    exists."""
    resolved = resolved_by_kernel(path)
    return os.path.realpath(path) if resolved is None else resolved[0]


def existing_real_path(path: str) -> str | None:
    """``os.path.realpath(path)`` when the file it leads to exists, else None; in one kernel walk where it can."""
    resolved = resolved_by_kernel(path)
    if resolved is not None:
        return resolved[0]
    real = os.path.realpath(path)
    return real if os.path.exists(real) else None
