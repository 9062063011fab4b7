"""Editing configuration files with tomlkit, so comments and order survive (C8)."""

import os
import stat
from pathlib import Path
from typing import Any

import tomlkit
from tomlkit.items import AoT
from tomlkit.toml_document import TOMLDocument

from kairox._util._files import write_atomically
from kairox.config._keys import split_key
from kairox.errors import ConfigWriteError


def _load(file: Path) -> TOMLDocument:
    if not file.exists():
        return tomlkit.document()
    try:
        return tomlkit.parse(file.read_text(encoding="utf-8"))
    except Exception as exc:
        raise ConfigWriteError(f"{file}: cannot edit, not valid TOML: {exc}", hint="fix the file first") from exc


def _save(file: Path, doc: TOMLDocument) -> None:
    """Write ``doc`` whole into ``file``, or leave it as it was. A file reached through a symlink (a ``kairox.toml``
    kept in a dotfiles repository) is written where the link leads and the link stays; the file keeps its mode.
    Which files may be written at all (a workspace's link to the user's own file) is for the callers to refuse."""
    target = Path(os.path.realpath(file))
    try:
        try:
            mode: int | None = stat.S_IMODE(os.stat(target).st_mode)
        except FileNotFoundError:
            mode = None  # a new file: readable by its owner only, as before
        write_atomically(target, tomlkit.dumps(doc).encode("utf-8"), mode=mode)
    except OSError as exc:
        where = file if target == file else f"{file} (a link to {target})"
        raise ConfigWriteError(
            f"{where}: cannot write: {exc.strerror or exc}", hint="check the file's folder and permissions"
        ) from exc


def _parent(doc: TOMLDocument, parts: list[str], *, create: bool) -> Any:
    node: Any = doc
    for depth, part in enumerate(parts):
        if part not in node:
            if not create:
                return None
            # a super table prints no header of its own while it holds only tables ([mcp_servers.x], no [mcp_servers])
            table = tomlkit.table(is_super_table=True)
            node[part] = table
        node = node[part]
        if isinstance(node, AoT) or not hasattr(node, "__contains__") or isinstance(node, str):
            raise ConfigWriteError(f"cannot set a key under {'.'.join(parts[: depth + 1])}: it is not a table")
    return node


def set_value(file: Path, key: str, value: Any, *, comment: str | None = None) -> None:
    """Set ``key`` (dotted) to ``value`` in ``file``, creating the file and tables as needed.

    ``comment`` (one or more lines) is written just above a table ``value``, to say why it is as it is.
    """
    parts = split_key(key)
    doc = _load(file)
    parent = _parent(doc, parts[:-1], create=True)
    if comment is not None and isinstance(value, dict):
        table = tomlkit.table()
        for line in comment.splitlines() or [""]:
            table.add(tomlkit.comment(line))
        for name, item in value.items():
            table.add(name, item)
        value = table
    parent[parts[-1]] = value
    _save(file, doc)


def unset_value(file: Path, key: str) -> bool:
    """Remove ``key`` from ``file``; False when it was not there."""
    parts = split_key(key)
    if not file.exists():
        return False
    doc = _load(file)
    parent = _parent(doc, parts[:-1], create=False)
    if parent is None or parts[-1] not in parent:
        return False
    del parent[parts[-1]]
    _drop_empty_tables(doc, parts[:-1])
    _save(file, doc)
    return True


def _drop_empty_tables(doc: TOMLDocument, parts: list[str]) -> None:
    """Remove the tables on ``parts`` that an unset left empty, innermost first (no bare ``[mcp_servers]``)."""
    for depth in range(len(parts), 0, -1):
        holder: Any = doc
        for part in parts[: depth - 1]:
            holder = holder[part]
        table = holder.get(parts[depth - 1])
        if not isinstance(table, dict) or len(table) > 0:
            return
        del holder[parts[depth - 1]]


def append_value(file: Path, key: str, item: Any) -> bool:
    """Append ``item`` to the array at ``key`` (created when missing); False when it was already there."""
    parts = split_key(key)
    doc = _load(file)
    parent = _parent(doc, parts[:-1], create=True)
    if parts[-1] not in parent:
        array = tomlkit.array()
        array.multiline(True)
        parent[parts[-1]] = array
    array = parent[parts[-1]]
    if not isinstance(array, list):
        raise ConfigWriteError(f"{file}: {key} is not an array")
    if item in array:
        return False
    array.append(item)
    _save(file, doc)
    return True


def remove_value(file: Path, key: str, item: Any) -> bool:
    """Remove ``item`` from the array at ``key``; False when it was not there."""
    parts = split_key(key)
    if not file.exists():
        return False
    doc = _load(file)
    parent = _parent(doc, parts[:-1], create=False)
    if parent is None or parts[-1] not in parent or item not in parent[parts[-1]]:
        return False
    parent[parts[-1]].remove(item)
    _save(file, doc)
    return True
