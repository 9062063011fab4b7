"""Dotted keys (``skills.entries."pr-review".enabled``) and where each key of a TOML file sits.

``tomllib`` gives no positions, so a small line scanner finds the line of every table header and key, which
is enough to say "kairox.toml:12" in provenance and error messages.
"""

import re

_BARE = re.compile(r"[A-Za-z0-9_-]+")


def split_key(key: str) -> list[str]:
    """``a."b.c".d`` -> ``["a", "b.c", "d"]``, quoted segments read as TOML reads them (escapes in double quotes,
    none in single quotes). Raises ValueError on a malformed key."""
    parts: list[str] = []
    i, n = 0, len(key)
    while i < n:
        while i < n and key[i] in " \t":
            i += 1
        if i < n and key[i] == '"':
            part, i = _basic_string(key, i)
            parts.append(part)
        elif i < n and key[i] == "'":
            end = key.find("'", i + 1)
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


_ESCAPES = {'"': '"', "\\": "\\", "b": "\b", "t": "\t", "n": "\n", "f": "\f", "r": "\r"}
_HEX = frozenset("0123456789abcdefABCDEF")


def _basic_string(key: str, start: int) -> tuple[str, int]:
    """The text of the double-quoted segment opening at ``key[start]``, and the index just after its quote."""
    out: list[str] = []
    i, n = start + 1, len(key)
    while i < n:
        ch = key[i]
        if ch == '"':
            return "".join(out), i + 1
        if ch != "\\":
            out.append(ch)
            i += 1
            continue
        escape = key[i + 1 : i + 2]
        if escape in _ESCAPES:
            out.append(_ESCAPES[escape])
            i += 2
            continue
        width = {"u": 4, "U": 8}.get(escape)
        digits = key[i + 2 : i + 2 + width] if width else ""
        if not width or len(digits) != width or not _HEX.issuperset(digits) or not _scalar(int(digits, 16)):
            raise ValueError(f"invalid escape {key[i : i + 2 + (width or 0)]!r} in key {key!r}")
        out.append(chr(int(digits, 16)))
        i += 2 + width
    raise ValueError(f"unterminated quote in key {key!r}")


def _scalar(code: int) -> bool:
    return code <= 0x10FFFF and not 0xD800 <= code <= 0xDFFF


def _segment(part: str) -> str:
    if _BARE.fullmatch(part):
        return part
    return (
        '"' + "".join(_QUOTED.get(ch) or (f"\\u{ord(ch):04x}" if ch < " " or ch == "\x7f" else ch) for ch in part) + '"'
    )


_QUOTED = {'"': '\\"', "\\": "\\\\", "\b": "\\b", "\t": "\\t", "\n": "\\n", "\f": "\\f", "\r": "\\r"}


def join_key(parts: list[str] | tuple[str, ...]) -> str:
    """The inverse of :func:`split_key`; segments that are not bare words are quoted."""
    return ".".join(map(_segment, parts))


def _key_end(line: str) -> int:
    """Index of the ``=`` ending the key at the start of ``line``, or -1."""
    i, n = 0, len(line)
    while i < n:
        ch = line[i]
        if ch == '"':
            try:
                i = _basic_string(line, i)[1]
            except ValueError:
                return -1
        elif ch == "'":
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
        _scan_value(line[eq + 1 :], state)
        positions[key] = (number, number)
        if state.get("ml") or int(str(state.get("depth", 0))) > 0:
            open_key = (key, number)
    return positions


def item_line(text_lines: list[str], span: tuple[int, int], item: str) -> int:
    """The line within ``span`` where the string ``item`` of an array is written (the span's start if unsure)."""
    start, end = span
    for quoted in (f'"{item}"', f"'{item}'"):
        for number in range(start, end + 1):
            if quoted in text_lines[number - 1]:
                return number
    return start
