"""Secrets never printed (C5): header and env values and keys that look like credentials are redacted."""

from typing import Any

REDACTED = "<redacted>"
_SECRET_WORDS = ("key", "token", "secret", "password")
_NAME_SUFFIXES = ("_env", "_env_var")
"""Keys like ``api_key_env`` hold the *name* of a variable, not a secret."""


def is_secret_key(name: str) -> bool:
    lowered = name.lower()
    return any(word in lowered for word in _SECRET_WORDS) and not lowered.endswith(_NAME_SUFFIXES)


def redact_tree(value: Any, *, parent: str = "") -> Any:
    if isinstance(value, dict):
        result: dict[str, Any] = {}
        for name, item in value.items():
            if (parent in ("env", "headers") and isinstance(item, str) and item) or (is_secret_key(name) and isinstance(item, str) and item):
                result[name] = REDACTED
            else:
                result[name] = redact_tree(item, parent=name)
        return result
    if isinstance(value, list):
        return [redact_tree(item, parent=parent) for item in value]
    return value
