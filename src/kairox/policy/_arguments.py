"""Paths named in the arguments of third-party tools (MCP servers, plugin commands), found by argument name.

A server's schema does not say which of its arguments are files, so Kairox looks for the names tools use for
them (``path``, ``paths``, ``file``, ``filename``, ``repo_path``, ``directory``, ``source``/``destination`` ...)
and for ``file://`` URIs in any string. It is best effort: a tool that calls its path ``q`` is not seen. What is
found is held to the deny rules on paths and to the protected paths, as the built-in tools' paths are.
"""

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


def _is_path_name(key: str) -> bool:
    name = _normal(key)
    return name in _NAMES or name.endswith(_SUFFIXES)


def _file_uri(value: str) -> str | None:
    if value[:7].lower() != "file://":
        return None
    parts = urlsplit(value)
    return unquote(parts.path) or None


def path_like_arguments(arguments: Mapping[str, Any]) -> list[str]:
    """The strings of ``arguments`` that name files: values of path-like keys (also in lists and nested objects)
    and every ``file://`` URI, as paths."""
    found: list[str] = []

    def walk(value: Any, key: str | None, depth: int) -> None:
        if len(found) >= _MAX_FOUND or depth > _MAX_DEPTH:
            return
        if isinstance(value, str):
            text = value.strip()
            uri = _file_uri(text)
            if uri is not None:
                found.append(uri)
            elif text and key is not None and _is_path_name(key) and _normal(key) not in _URI_NAMES and "://" not in text:
                found.append(text)
        elif isinstance(value, list):
            for item in value[:_MAX_FOUND]:
                walk(item, key, depth + 1)
        elif isinstance(value, dict):
            for name, item in list(value.items())[:_MAX_FOUND]:
                walk(item, str(name), depth + 1)

    walk(dict(arguments), None, 0)
    return found
