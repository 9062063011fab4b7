"""Paths and URIs, file patterns, and columns: the model counts characters from 1, a server counts code units
from 0 in the position encoding both agreed on (UTF-16 unless negotiated otherwise)."""

import functools
import os
import re
from pathlib import Path, PurePosixPath
from urllib.parse import quote, unquote, urlparse

from kairox._util._glob import glob_to_regex

UTF8, UTF16, UTF32 = "utf-8", "utf-16", "utf-32"


def path_to_uri(path: Path) -> str:
    return real_path_uri(str(path.resolve()))


def real_path_uri(real: str) -> str:
    """The ``file:`` URI of a path whose symlinks are already resolved."""
    return "file://" + quote(real.replace("\\", "/"), safe="/:")


def uri_to_path(uri: str) -> Path:
    """The file a ``file:`` URI names. A NUL byte (``%00``), which no file name can hold, becomes U+FFFD, so a
    server's bad URI names a file that does not exist instead of breaking every ``Path`` call on it."""
    parsed = urlparse(uri)
    return Path(unquote(parsed.path).replace("\x00", "\ufffd"))


def _units(char: str, encoding: str) -> int:
    if encoding == UTF8:
        return len(char.encode("utf-8"))
    if encoding == UTF32:
        return 1
    return 2 if ord(char) > 0xFFFF else 1


def to_server_character(line_text: str, column: int, encoding: str) -> int:
    """The server's 0-based ``character`` for the model's 1-based ``column`` (a count of characters)."""
    prefix = line_text[: max(column - 1, 0)]
    if encoding == UTF32:
        return len(prefix)
    return sum(_units(c, encoding) for c in prefix)


def to_model_column(line_text: str, character: int, encoding: str) -> int:
    """The model's 1-based column for the server's 0-based ``character`` in ``encoding`` code units."""
    if encoding == UTF32:
        return min(character, len(line_text)) + 1
    units = 0
    for index, char in enumerate(line_text):
        if units >= character:
            return index + 1
        units += _units(char, encoding)
    return len(line_text) + 1


@functools.lru_cache(maxsize=256)
def _pattern_regex(pattern: str) -> re.Pattern[str]:
    return re.compile(glob_to_regex(pattern, braces=True) + r"\Z")


def matches_pattern(relative: PurePosixPath, pattern: str) -> bool:
    """``*.py`` matches a file name anywhere; a pattern with ``/`` matches the workspace-relative path."""
    target = str(relative) if "/" in pattern else relative.name
    return _pattern_regex(pattern.removeprefix("./")).match(target) is not None


def relative_real(real: str, root: str) -> PurePosixPath:
    """``real`` relative to ``root`` (both with their symlinks resolved), or absolute when it lies outside."""
    return PurePosixPath(shown_real(real, root))


def shown_real(real: str, root: str) -> str:
    """``str(relative_real(real, root))``: a resolved path holds no ``.``, ``..`` or doubled separator, so the
    string needs no ``PurePosixPath`` to be the same."""
    base = root.rstrip("/")
    if real == base:
        return "."
    if real.startswith(base + "/"):
        return real[len(base) + 1 :]
    return real


def display_path(path: Path, root: Path) -> str:
    """Workspace-relative when inside the workspace, absolute otherwise (symlinks resolved in both)."""
    return shown_real(os.path.realpath(path), os.path.realpath(root))


_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+\Z")


def split_lines(text: str, *, keepends: bool = False) -> list[str]:
    """The lines of ``text`` as LSP counts them: broken at ``\n``, ``\r\n`` and ``\r`` only (``str.splitlines``
    also breaks at form feeds, ``\u2028`` and more, which would shift every line after one)."""
    lines = _LINE.findall(text)
    return lines if keepends else [line.rstrip("\r\n") for line in lines]
