"""Dotted keys (``skills.entries."pr-review".enabled``) and where each key of a TOML file sits.

``tomllib`` gives no positions, so a small line scanner finds the line of every table header and key, which
is enough to say "kairox.toml:12" in provenance and error messages.
"""

import functools
import re

_BARE = re.compile(r"[A-Za-z0-9_-]+")
_BARE_KEY_LINE = re.compile(r"([A-Za-z0-9_-]+)[ \t]*=")
"""A line whose key is one bare word: its key and ``=`` need no scanning."""
_PLAIN_VALUE = re.compile(r"""[ \t]*(?:"[^"\\]*"|'[^']*'|[^"'\[\]{}#]*)[ \t]*(?:#.*)?""")
"""A value that opens nothing (no array, table or multi-line string): one scalar, maybe a comment."""
_FLAT_VALUE = re.compile(r"""[ \t]*[\[{](?:[^"'\[\]{}#]|"[^"\\]*"|'[^']*')*[\]}][ \t]*(?:#.*)?""")
"""An array or inline table closed on its own line, nothing nested, no escapes (checked for triple quotes apart)."""


def split_key(key: str) -> list[str]:
    """``a."b.c".d`` -> ``["a", "b.c", "d"]``. Raises ValueError on a malformed key."""
    parts: list[str] = []
    i, n = 0, len(key)
    while i < n:
        while i < n and key[i] in " \t":
            i += 1
        if i < n and key[i] in "\"'":
            quote = key[i]
            end = key.find(quote, i + 1)
            if end < 0:
                raise ValueError(f"unterminated quote in key {key!r}")
            parts.append(key[i + 1 : end])
            i = end + 1
        else:
            match = _BARE.match(key, i)
            if not match:
                raise ValueError(f"malformed key {key!r}")
            parts.append(match.group(0))
            i = match.end()
        while i < n and key[i] in " \t":
            i += 1
        if i < n:
            if key[i] != ".":
                raise ValueError(f"malformed key {key!r}")
            i += 1
            if i >= n:
                raise ValueError(f"key {key!r} ends with a dot")
    if not parts:
        raise ValueError("empty key")
    return parts


@functools.lru_cache(maxsize=4096)
def _segment(part: str) -> str:
    return part if _BARE.fullmatch(part) else '"' + part.replace('"', '\\"') + '"'


def join_key(parts: list[str] | tuple[str, ...]) -> str:
    """The inverse of :func:`split_key`; segments that are not bare words are quoted."""
    return ".".join(map(_segment, parts))


def _key_end(line: str) -> int:
    """Index of the ``=`` ending the key at the start of ``line``, or -1."""
    i, n = 0, len(line)
    while i < n:
        ch = line[i]
        if ch in "\"'":
            end = line.find(ch, i + 1)
            if end < 0:
                return -1
            i = end + 1
        elif ch == "=":
            return i
        elif ch == "#":
            return -1
        else:
            i += 1
    return -1


def _scan_value(text: str, state: dict[str, object]) -> None:
    """Track bracket depth and multi-line strings over ``text`` (the rest of a line)."""
    i, n = 0, len(text)
    while i < n:
        ml = state.get("ml")
        if ml:
            end = text.find(str(ml), i)
            if end < 0:
                return
            state["ml"] = None
            i = end + 3
            continue
        ch = text[i]
        if text.startswith('"""', i) or text.startswith("'''", i):
            state["ml"] = text[i : i + 3]
            i += 3
        elif ch in "\"'":
            j = i + 1
            while j < n and text[j] != ch:
                j += 2 if (ch == '"' and text[j] == "\\") else 1
            i = j + 1
        elif ch in "[{":
            state["depth"] = int(str(state.get("depth", 0))) + 1
            i += 1
        elif ch in "]}":
            state["depth"] = int(str(state.get("depth", 0))) - 1
            i += 1
        elif ch == "#":
            return
        else:
            i += 1


def key_positions(text: str) -> dict[str, tuple[int, int]]:
    """Every table and key of a TOML document -> (first line, last line), 1-based.

    Keys are dotted with :func:`join_key`; array-of-tables entries get their index (``hooks.pre_tool_use.0``).
    """
    positions: dict[str, tuple[int, int]] = {}
    table: list[str] = []
    aot_counts: dict[str, int] = {}
    state: dict[str, object] = {"depth": 0, "ml": None}
    open_key: tuple[str, int] | None = None
    for number, raw in enumerate(text.splitlines(), start=1):
        if state.get("ml") or int(str(state.get("depth", 0))) > 0:
            _scan_value(raw, state)
            if open_key and not state.get("ml") and int(str(state.get("depth", 0))) <= 0:
                positions[open_key[0]] = (open_key[1], number)
                open_key = None
            continue
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith("[["):
            end = line.find("]]")
            try:
                parts = split_key(line[2:end])
            except ValueError:
                continue
            base = join_key(parts)
            index = aot_counts.get(base, 0)
            aot_counts[base] = index + 1
            table = [*parts, str(index)]
            positions.setdefault(base, (number, number))
            positions[join_key(table)] = (number, number)
            continue
        if line.startswith("["):
            end = line.rfind("]")
            try:
                table = split_key(line[1:end])
            except ValueError:
                continue
            positions[join_key(table)] = (number, number)
            continue
        bare = _BARE_KEY_LINE.match(line)
        if bare is not None:  # the common line, ``name = "value"``: the same result without scanning it
            eq = bare.end() - 1
            parts = [bare.group(1)]
        else:
            eq = _key_end(line)
            if eq < 0:
                continue
            try:
                parts = split_key(line[:eq])
            except ValueError:
                continue
        full = [*table, *parts]
        key = join_key(full)
        for depth in range(len(table) + 1, len(full)):
            positions.setdefault(join_key(full[:depth]), (number, number))
        state["depth"] = 0
        if bare is not None and (
            _PLAIN_VALUE.fullmatch(line, eq + 1) or (_FLAT_VALUE.fullmatch(line, eq + 1) and '"""' not in line and "'''" not in line)
        ):
            positions[key] = (number, number)
            continue
        _scan_value(line[eq + 1 :], state)
        if state.get("ml") or int(str(state.get("depth", 0))) > 0:
            open_key = (key, number)
            positions[key] = (number, number)
        else:
            positions[key] = (number, number)
    return positions


def item_line(text_lines: list[str], span: tuple[int, int], item: str) -> int:
    """The line within ``span`` where the string ``item`` of an array is written (the span's start if unsure)."""
    start, end = span
    for quoted in (f'"{item}"', f"'{item}'"):
        for number in range(start, end + 1):
            if quoted in text_lines[number - 1]:
                return number
    return start
