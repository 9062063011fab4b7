"""Decoding text from outside (manifests, configuration, server replies) into bounded data.

``json.loads`` and ``tomllib.loads`` raise ``RecursionError`` on deeply nested input and a plain ``ValueError`` on
an integer of more than 4,300 digits; values nested hundreds of levels deep also break the code that walks them
later. :func:`decode_json` turns all of that into one :class:`DecodeProblem` that says what and on which line, and
:func:`nesting_depth` lets other decoders (TOML, YAML) hold their results to the same limit.
"""

import json
import re
from collections.abc import Callable
from typing import Any

from kairox._util._json import JsonValue

MAX_DEPTH = 64
"""Deepest nesting of arrays and objects (tables) accepted from a file or a server."""
_DIGITS = re.compile(r"\d(?:_?\d){4300,}")


class DecodeProblem(ValueError):
    """Text that cannot become data: ``message`` says why, ``line`` (1-based) says where when known."""

    def __init__(self, message: str, *, line: int | None = None, column: int | None = None) -> None:
        where = f" at line {line}" + (f" column {column}" if column else "") if line else ""
        super().__init__(message + where)
        self.message, self.line, self.column = message, line, column


def nesting_depth(value: Any, *, limit: int = MAX_DEPTH) -> int:
    """How deep ``value`` nests lists and dicts (a scalar is 0), counted without recursion; stops past ``limit``."""
    deepest = 0
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            children: Any = item.values()
        elif isinstance(item, list | tuple):
            children = item
        else:
            continue
        depth += 1
        deepest = max(deepest, depth)
        if deepest > limit:
            return deepest
        stack.extend((child, depth) for child in children)
    return deepest


def bracket_line(text: str, limit: int, *, toml: bool = False) -> int | None:
    """The first line where ``[`` / ``{`` nesting goes past ``limit``, outside strings (and, for ``toml``, comments)."""
    quotes = "\"'" if toml else '"'
    depth, line, i, n = 0, 1, 0, len(text)
    while i < n:
        ch = text[i]
        if ch == "\n":
            line += 1
        elif ch in quotes:
            if toml and text.startswith(ch * 3, i):
                end = text.find(ch * 3, i + 3)
                end = n if end < 0 else end + 3
            else:
                end = i + 1
                while end < n and text[end] not in (ch, "\n"):
                    end += 2 if ch == '"' and text[end] == "\\" else 1
                end += 1
            line += text.count("\n", i, min(end, n))
            i = end
            continue
        elif toml and ch == "#":
            end = text.find("\n", i)
            i = n if end < 0 else end
            continue
        elif ch in "[{":
            depth += 1
            if depth > limit:
                return line
        elif ch in "]}":
            depth -= 1
        i += 1
    return None


def long_integer_line(text: str) -> int | None:
    """The line of the first run of more than 4,300 digits (Python refuses to convert those to ``int``)."""
    found = _DIGITS.search(text)
    return text.count("\n", 0, found.start()) + 1 if found else None


def too_deep(limit: int) -> str:
    return f"nested more than {limit} levels deep"


def guarded_decode(decode: Callable[[], Any], text: str, *, limit: int = MAX_DEPTH, toml: bool = False) -> Any:
    """``decode()`` with its recursion and digit-limit failures (and
    results nested past ``limit``) as a :class:`DecodeProblem`."""
    try:
        value = decode()
    except RecursionError:
        raise DecodeProblem(too_deep(limit), line=bracket_line(text, limit, toml=toml)) from None
    except ValueError as exc:
        if "integer string conversion" not in str(exc):
            raise
        raise DecodeProblem("an integer has more than 4300 digits", line=long_integer_line(text)) from None
    if nesting_depth(value, limit=limit) > limit:
        raise DecodeProblem(too_deep(limit), line=bracket_line(text, limit, toml=toml))
    return value


def decode_json(text: str | bytes, *, limit: int = MAX_DEPTH) -> JsonValue:
    """``text`` as JSON, or a :class:`DecodeProblem` (syntax, nesting past ``limit``, an over-long integer)."""
    if isinstance(text, bytes):
        text = text.decode("utf-8", errors="replace")
    try:
        return guarded_decode(lambda: json.loads(text), text, limit=limit)
    except json.JSONDecodeError as exc:
        raise DecodeProblem(exc.msg, line=exc.lineno, column=exc.colno) from None


def decode_toml(text: str, *, limit: int = MAX_DEPTH) -> dict[str, Any]:
    """``text`` as TOML, or a :class:`DecodeProblem` (syntax, nesting past ``limit``, an over-long integer).

    Nesting counts tables too, so ``a.b.c = 1`` is three levels deep.
    """
    import tomllib  # here, not at the top: a process that reads no TOML (an MCP server host) never loads it

    try:
        data: dict[str, Any] = guarded_decode(lambda: tomllib.loads(text), text, limit=limit, toml=True)
    except tomllib.TOMLDecodeError as exc:
        found = re.search(r"\(at line (\d+), column (\d+)\)", str(exc))
        message = str(exc).split(" (at line")[0]
        raise DecodeProblem(
            message, line=int(found.group(1)) if found else None, column=int(found.group(2)) if found else None
        ) from None
    except DecodeProblem as exc:
        if exc.line is not None:
            raise
        # nesting by dotted keys and table headers, not brackets: the line with the most dots holds it
        lines = text.splitlines() or [""]
        line = max(range(len(lines)), key=lambda index: lines[index].count(".")) + 1
        raise DecodeProblem(exc.message, line=line) from None
    return data
