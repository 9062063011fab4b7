"""``PATH`` as Kairox searches it for programs it runs on its own (version probes, checks)."""

import os
import shutil


def absolute_path(search: str) -> str:
    """``search`` (a ``PATH`` value) without its empty and relative entries: those mean the current folder, where
    a repository's own binary would answer for ``git`` or ``node``."""
    return os.pathsep.join(entry for entry in search.split(os.pathsep) if os.path.isabs(entry))


def which_absolute(name: str) -> str | None:
    """``shutil.which`` through the absolute entries of ``PATH`` only (a name with a folder in it is taken as it is)."""
    return shutil.which(name, path=absolute_path(os.environ.get("PATH", "")))
