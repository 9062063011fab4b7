import math
from typing import Any, TypeAlias

JsonValue: TypeAlias = Any
"""A value decoded from JSON: dict, list, str, int, float, bool or None."""

JsonObject: TypeAlias = dict[str, Any]
"""A JSON object as decoded by :mod:`json`."""


_INT_LIMIT = 2**31 - 1
"""Largest integer the protocols Kairox reads use (LSP's ``uinteger``, DAP's ids and lines)."""


def json_int(value: Any, default: int = 0) -> int:
    """``value`` as the integer a protocol field should hold, ``default`` when it is not a number; held to
    -2^31..2^31-1, so a server's reply cannot make a position or a reference absurdly large."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return default
    if isinstance(value, float) and not math.isfinite(value):
        return default
    return max(-_INT_LIMIT - 1, min(_INT_LIMIT, int(value)))


def json_dict(value: Any) -> JsonObject:
    """``value`` when it is a JSON object, else an empty one."""
    return value if isinstance(value, dict) else {}


def json_list(value: Any) -> list[Any]:
    """``value`` when it is a JSON array, else an empty one."""
    return value if isinstance(value, list) else []
