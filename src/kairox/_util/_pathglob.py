"""Path patterns as plain data: the absolute glob a rule such as ``fs.read(~/.ssh/**)`` means, and the matching of
resolved paths against it. No file-system access: resolving the rule's literal folders is its parser's work
(``kairox.policy``); the read masks of the sandbox match with the same code."""

import functools
import re
from dataclasses import dataclass
from pathlib import Path

from kairox._util._glob import glob_to_regex

_GLOB_CHARS = re.compile(r"[*?\[]")


@functools.lru_cache(maxsize=1024)
def glob_regex(glob: str) -> re.Pattern[str]:
    # `dir/**` in a rule also covers the folder itself
    return re.compile(glob_to_regex(glob, dir_itself=True) + r"\Z", re.DOTALL)


def glob_match(text: str, glob: str) -> bool:
    """Path-style glob: ``*`` stays within one folder, ``**`` crosses folders."""
    return glob_regex(glob).match(text) is not None


def is_within(path: Path, root: Path) -> bool:
    return path == root or root in path.parents


def split_literal(text: str) -> tuple[str, str]:
    """``~/.ssh/**`` -> (``~/.ssh``, ``**``): the folders before the first glob character, and the rest."""
    match = _GLOB_CHARS.search(text)
    if match is None:
        return text, ""
    cut = text.rfind("/", 0, match.start())
    if cut == -1:
        return "", text
    return text[:cut] or "/", text[cut + 1 :]


@dataclass(frozen=True, slots=True)
class PathPattern:
    """The path part of a rule such as ``fs.write(./src/**)``, anchored where the rule means it."""

    glob: str
    """Absolute glob after resolution, or a name glob (``*.env``) that matches the last part anywhere."""
    anywhere: bool

    def matches(self, path: Path, *, any_part: bool = False) -> bool:
        """With ``any_part``, a name glob also matches a folder on the way (``.ssh`` catches ``.ssh/id_rsa``)."""
        if self.anywhere:
            parts = path.parts[1:] if any_part else path.parts[-1:]
            return any(glob_match(part, self.glob) for part in parts)
        return glob_match(str(path), self.glob)
