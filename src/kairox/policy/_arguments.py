"""Paths named in the arguments of third-party tools (MCP servers, plugin commands), found by argument name.

A server's schema does not say which of its arguments are files, so Kairox looks for the names tools use for
them (``path``, ``paths``, ``file``, ``filename``, ``repo_path``, ``directory``, ``source``/``destination`` ...)
and for ``file:`` URIs in any string (``file:///abs``, ``file:/abs``, ``file://localhost/abs``, any case of ``file``,
percent-encoded). It is best effort: a tool that calls its path ``q`` is not seen. What is
found is held to the deny rules on paths and to the protected paths, as the built-in tools' paths are.

The scan is bounded (64 paths, 64 entries of a list or an object, lists and objects nested 6 deep) and says when
it stopped before something that may name a path, so the policy can ask instead of deciding on part of the call.
"""

import itertools
from collections.abc import Iterable, Mapping
from typing import Any
from urllib.parse import unquote, urlsplit

_NAMES = frozenset(
    """
    path paths file files filename filenames filepath filepaths dir dirs directory directories folder folders root
    roots cwd workdir workingdirectory source sources destination destinations src dest dst target targets output
    outputs input inputs location notebook repo repository
    """.split()
)
_SUFFIXES = tuple("path paths file files filename filenames dir dirs directory directories folder".split())
_URI_NAMES = frozenset({"uri", "uris", "url", "urls", "href"})
_MAX_DEPTH = 6
"""Lists and objects nested deeper than this are not read."""
_MAX_FOUND = 64
"""Paths taken from one call (each is resolved against the file system)."""
_MAX_ITEMS = 64
"""Entries read of the arguments, of a list or of an object."""
LIMITS = f"{_MAX_FOUND} paths, {_MAX_ITEMS} entries per list or object, nesting {_MAX_DEPTH} deep"
"""What one call may hold for the policy to read all of it, in words."""


def _normal(key: str) -> str:
    return key.lower().replace("_", "").replace("-", "")


_PLAIN, _PATH, _URI = 0, 1, 2


def _is_path_name(key: str) -> bool:
    name = _normal(key)
    return name in _NAMES or name.endswith(_SUFFIXES)


def _key_kind(key: str) -> int:
    """Whether a string under this name is a path (``_PATH``), a URI field (``_URI``) or anything else."""
    name = _normal(key)
    return _URI if name in _URI_NAMES else _PATH if _is_path_name(key) else _PLAIN


def _is_file_uri(text: str) -> bool:
    """``file:`` (any case) and then no space: ``file:/abs``, ``file:///abs``, ``FILE://localhost/abs``; a line of
    prose such as ``file: notes`` is not one."""
    return len(text) > 5 and text[:5].lower() == "file:" and not text[5].isspace()


def _file_uri(text: str, found: list[str]) -> None:
    """Adds the paths a ``file:`` URI may open to ``found``: its path, percent-decoded (``/etc/pa%73swd`` is
    ``/etc/passwd``), and for a host other than ``localhost`` (``file://etc/passwd``) also host and path read as
    one relative path, as a server that strips ``file://`` would open it."""
    parts = urlsplit(text)
    path = unquote(parts.path)
    if path.startswith("//"):  # `file:////etc/x`: the system reads the leading slashes as one
        path = "/" + path.lstrip("/")
    host = parts.netloc
    if path:
        found.append(path)
    if host and host.lower() != "localhost":
        found.append(unquote(host + parts.path))


def scan_path_arguments(arguments: Mapping[str, Any], found: list[str]) -> str | None:
    """Appends the paths ``arguments`` name to ``found`` (values of path-like keys, also in lists and nested objects,
    and every ``file://`` URI, the first 64); returns why the scan stopped
    before something that may name another, or None when it read all that could. (The caller's list, and no tuple
    back: this runs on every call of a third-party tool.)"""
    unseen: str | None = None
    items: Iterable[tuple[Any, Any]]
    if len(arguments) <= _MAX_ITEMS:
        items = arguments.items()
    else:
        items = itertools.islice(arguments.items(), _MAX_ITEMS)
        if any(_may_name_path(str(k), v) for k, v in itertools.islice(arguments.items(), _MAX_ITEMS, None)):
            unseen = f"the call has {len(arguments)} arguments and the policy reads the first {_MAX_ITEMS}"
    for name, value in items:
        if type(value) is str:  # the usual flat call: one pass, no recursion
            text = value.strip()
            if ":" in text and _is_file_uri(text):
                _file_uri(text, found)
            elif text and _key_kind(str(name)) == _PATH and "://" not in text:
                found.append(text)
        elif isinstance(value, list | dict | str):
            unseen = _walk(value, str(name), 1, found, str(name)) or unseen
        if len(found) > _MAX_FOUND:
            del found[_MAX_FOUND:]
            return f"the call names more than {_MAX_FOUND} paths and the policy reads the first {_MAX_FOUND}"
    return unseen


def _walk(value: Any, key: str | None, depth: int, found: list[str], top: str) -> str | None:
    """Adds the paths ``value`` (within argument ``top``) names to ``found``, one more than the limit at most;
    returns why part of it was not read, or None."""
    if isinstance(value, str):
        text = value.strip()
        if _is_file_uri(text):
            _file_uri(text, found)
        elif text and key is not None and _key_kind(key) == _PATH and "://" not in text:
            found.append(text)
        return None
    if not isinstance(value, list | dict):
        return None
    if depth > _MAX_DEPTH:
        entries = value.items() if isinstance(value, dict) else ((key, item) for item in value)
        if any(_may_name_path(None if k is None else str(k), v) for k, v in entries):
            return (
                f"argument {top!r} nests lists or objects more than "
                f"{_MAX_DEPTH} deep and the policy reads {_MAX_DEPTH} levels"
            )
        return None
    unseen: str | None = None
    if isinstance(value, list):
        for item in value[:_MAX_ITEMS]:
            unseen = _walk(item, key, depth + 1, found, top) or unseen
            if len(found) > _MAX_FOUND:
                return unseen
        if len(value) > _MAX_ITEMS and any(_may_name_path(key, item) for item in value[_MAX_ITEMS:]):
            unseen = (
                unseen
                or f"argument {top!r} holds a list of {len(value)} items and the policy reads the first {_MAX_ITEMS}"
            )
    elif isinstance(value, dict):
        for name, item in itertools.islice(value.items(), _MAX_ITEMS):
            unseen = _walk(item, str(name), depth + 1, found, top) or unseen
            if len(found) > _MAX_FOUND:
                return unseen
        if len(value) > _MAX_ITEMS and any(
            _may_name_path(str(k), v) for k, v in itertools.islice(value.items(), _MAX_ITEMS, None)
        ):
            unseen = (
                unseen
                or f"argument {top!r} holds an object of {len(value)} "
                f"entries and the policy reads the first {_MAX_ITEMS}"
            )
    return unseen


def _may_name_path(key: str | None, value: Any) -> bool:
    """Whether a value the scan did not read may name a path: text it would have taken, or more lists or objects."""
    if isinstance(value, str):
        text = value.strip()
        return _is_file_uri(text) or (bool(text) and key is not None and _key_kind(key) == _PATH and "://" not in text)
    return isinstance(value, list | dict) and bool(value)
