from typing import Any, TypeAlias

JsonValue: TypeAlias = Any
"""A value decoded from JSON: dict, list, str, int, float, bool or None."""

JsonObject: TypeAlias = dict[str, Any]
"""A JSON object as decoded by :mod:`json`."""
