"""What the policy asks of the machine, as an interface: the policy decides on the answers and never touches the
file system itself. Its caller passes a ``HostFacts`` (``PolicySettings.host``); the one Kairox uses is
``kairox.sandbox.HOST``, which also works out the read masks of confined processes."""

from collections.abc import Callable, Hashable
from pathlib import Path
from typing import Protocol

from kairox._util._pathglob import PathPattern
from kairox.sandbox import HiddenPaths


class ReadMaskLike(Protocol):
    """What the rules on reading hide, worked out when a confined process starts (``kairox.sandbox.ReadMask``)."""

    def __call__(self) -> HiddenPaths: ...

    def elsewhere(self) -> Callable[[Path], str | None]:
        """For one call of a tool that reads files itself: why a file no rule names must not be read (another
        name of a hidden file, a hidden history), or None."""
        ...


class HostFacts(Protocol):
    """The facts about files that decisions depend on."""

    def real_path(self, text: str) -> str:
        """``text`` (absolute) with ``..`` folded and symlinks followed as far as they exist."""
        ...

    def expand_user(self, text: str) -> str:
        """``~name/...`` as that user's home."""
        ...

    def read_start(self, path: Path, limit: int) -> bytes:
        """At most ``limit`` bytes from the start of ``path``; ``OSError`` when it cannot be read."""
        ...

    def has_module(self, folder: Path, top: str) -> bool:
        """Whether ``folder`` holds a module or package ``top`` (``top.py``, ``top/``)."""
        ...

    def temp_dir(self) -> str:
        """The temp folder processes get."""
        ...

    def working_dir(self) -> Path:
        """The folder a relative workspace is relative to (the process's)."""
        ...

    def read_mask(
        self, patterns: tuple[tuple[PathPattern, Hashable], ...], *, workspace: Path, roots: tuple[Path, ...]
    ) -> ReadMaskLike:
        """The read mask of ``patterns`` (each with the rule it stands for), searched below ``workspace`` and
        ``roots``."""
        ...


def host_files() -> HostFacts:
    """This machine's answers (``kairox.sandbox.HOST``)."""
    from kairox.sandbox import HOST

    return HOST
