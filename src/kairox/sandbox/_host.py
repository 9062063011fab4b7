"""This machine's answers to what the policy asks (``kairox.policy.HostFacts``): symlinks followed, a script's
first bytes, modules in a folder, the temp folder, and the read masks of confined processes."""

import os
import tempfile
from collections.abc import Hashable
from pathlib import Path

from kairox._util._pathglob import PathPattern
from kairox.sandbox._readmask import ReadMask, mask_for


class HostFiles:
    """The file system as a confined process would find it when it starts."""

    __slots__ = ()

    def real_path(self, text: str) -> str:
        return os.path.realpath(text)

    def expand_user(self, text: str) -> str:
        return os.path.expanduser(text)

    def read_start(self, path: Path, limit: int) -> bytes:
        with path.open("rb") as handle:
            return handle.read(limit)

    def has_module(self, folder: Path, top: str) -> bool:
        return (folder / f"{top}.py").exists() or (folder / top).is_dir()

    def temp_dir(self) -> str:
        return tempfile.gettempdir()

    def working_dir(self) -> Path:
        return Path.cwd()

    def read_mask(
        self, patterns: tuple[tuple[PathPattern, Hashable], ...], *, workspace: Path, roots: tuple[Path, ...]
    ) -> ReadMask:
        return mask_for(patterns, workspace=workspace, roots=roots)


HOST = HostFiles()
"""The one ``HostFiles``: it keeps nothing."""
