"""Paths named in the arguments of third-party tools (MCP servers, plugin commands), found by argument name.

A server's schema does not say which of its arguments are files, so Kairox looks for the names tools use for
them (``path``, ``paths``, ``file``, ``filename``, ``repo_path``, ``directory``, ``source``/``destination`` ...)
and for ``file://`` URIs in any string. It is best effort: a tool that calls its path ``q`` is not seen. What is
found is held to the deny rules on paths and to the protected paths, as the built-in tools' paths are.
"""

import itertools
from collections.abc import Mapping
from typing import Any
from urllib.parse import unquote, urlsplit

_NAMES = frozenset(
    {
        "path", "paths", "file", "files", "filename", "filenames", "filepath", "filepaths", "dir", "dirs", "directory",
        "directories", "folder", "folders", "root", "roots", "cwd", "workdir", "workingdirectory", "source", "sources",
        "destination", "destinations", "src", "dest", "dst", "target", "targets", "output", "outputs", "input", "inputs",
        "location", "notebook", "repo", "repository",
    }
)
_SUFFIXES = ("path", "paths", "file", "files", "filename", "filenames", "dir", "dirs", "directory", "directories", "folder")
_URI_NAMES = frozenset({"uri", "uris", "url", "urls", "href"})
_MAX_DEPTH = 6
_MAX_FOUND = 64


def _normal(key: str) -> str:
    return key.lower().replace("_", "").replace("-", "")


_KEYS: dict[str, int] = {}
"""Argument names already classified (``_key_kind``): a tool is called with the same few names again and again."""
_KEYS_LIMIT = 4096
_PLAIN, _PATH, _URI = 0, 1, 2


def _is_path_name(key: str) -> bool:
    name = _normal(key)
    return name in _NAMES or name.endswith(_SUFFIXES)


def _key_kind(key: str) -> int:
    """Whether a string under this name is a path (``_PATH``), a URI field (``_URI``) or anything else."""
    kind = _KEYS.get(key)
    if kind is None:
        name = _normal(key)
        kind = _URI if name in _URI_NAMES else _PATH if _is_path_name(key) else _PLAIN
        if len(_KEYS) >= _KEYS_LIMIT:
            _KEYS.clear()
        _KEYS[key] = kind
    return kind


def _file_uri(value: str) -> str | None:
    if value[:7].lower() != "file://":
        return None
    parts = urlsplit(value)
    return unquote(parts.path) or None


def path_like_arguments(arguments: Mapping[str, Any]) -> list[str]:
    """The strings of ``arguments`` that name files: values of path-like keys (also in lists and nested objects)
    and every ``file://`` URI, as paths."""
    found: list[str] = []
    items = arguments.items() if len(arguments) <= _MAX_FOUND else itertools.islice(arguments.items(), _MAX_FOUND)
    for name, value in items:
        if len(found) >= _MAX_FOUND:
            break
        if type(value) is str:  # the usual flat call: one pass, no recursion
            text = value.strip()
            if ":" in text and text[:7].lower() == "file://":
                uri = _file_uri(text)
                if uri is not None:
                    found.append(uri)
            elif text and _key_kind(str(name)) == _PATH and "://" not in text:
                found.append(text)
        elif isinstance(value, list | dict | str):
            _walk(value, str(name), 1, found)
    return found


def _walk(value: Any, key: str | None, depth: int, found: list[str]) -> None:
    if len(found) >= _MAX_FOUND or depth > _MAX_DEPTH:
        return
    if isinstance(value, str):
        text = value.strip()
        uri = _file_uri(text)
        if uri is not None:
            found.append(uri)
        elif text and key is not None and _key_kind(key) == _PATH and "://" not in text:
            found.append(text)
    elif isinstance(value, list):
        for item in value[:_MAX_FOUND]:
            _walk(item, key, depth + 1, found)
    elif isinstance(value, dict):
        for name, item in list(value.items())[:_MAX_FOUND]:
            _walk(item, str(name), depth + 1, found)
