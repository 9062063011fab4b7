"""Secrets never printed (C5): header and env values, keys that look like credentials, passwords and secret query
parameters in URLs, and the values of secret-looking flags in server arguments are redacted."""

import re
from typing import Any

REDACTED = "<redacted>"
_SECRET_WORDS = ("key", "token", "secret", "password")
_NAME_SUFFIXES = ("_env", "_env_var")
"""Keys like ``api_key_env`` hold the *name* of a variable, not a secret."""
_URL = re.compile(r"^(?P<scheme>[A-Za-z][A-Za-z0-9+.-]*://)(?P<userinfo>[^/?#@]*@)?(?P<rest>[^?#]*)(?P<query>\?[^#]*)?(?P<fragment>#.*)?$", re.DOTALL)


def is_secret_key(name: str) -> bool:
    lowered = name.lower()
    return any(word in lowered for word in _SECRET_WORDS) and not lowered.endswith(_NAME_SUFFIXES)


def redact_url(text: str) -> str:
    """``https://user:pw@host/x?token=t`` -> ``https://user:<redacted>@host/x?token=<redacted>``; other text unchanged."""
    match = _URL.match(text)
    if match is None:
        return text
    userinfo = match.group("userinfo") or ""
    if userinfo:
        user, colon, _password = userinfo[:-1].partition(":")
        # a lone user part is often a token (https://<token>@host)
        userinfo = f"{user}:{REDACTED}@" if colon else f"{REDACTED}@"
    query = match.group("query") or ""
    if query:
        pairs = []
        for pair in query[1:].split("&"):
            name, equals, value = pair.partition("=")
            pairs.append(f"{name}={REDACTED}" if equals and value and is_secret_key(name) else pair)
        query = "?" + "&".join(pairs)
    return f"{match.group('scheme')}{userinfo}{match.group('rest')}{query}{match.group('fragment') or ''}"


def _redact_args(items: list[Any]) -> list[Any]:
    """``["--api-key", "sk-..", "--token=t"]``: the values of flags whose names look like credentials."""
    result: list[Any] = []
    hide_next = False
    for item in items:
        if not isinstance(item, str):
            result.append(redact_tree(item))
            hide_next = False
            continue
        if hide_next and item and not item.startswith("-"):
            result.append(REDACTED)
            hide_next = False
            continue
        hide_next = False
        flag, equals, value = item.partition("=")
        if item.startswith("-") and is_secret_key(flag.lstrip("-")):
            if equals:
                result.append(f"{flag}={REDACTED}" if value else item)
                continue
            hide_next = True
        result.append(redact_url(item))
    return result


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
        if parent == "args":
            return _redact_args(value)
        return [redact_tree(item, parent=parent) for item in value]
    if isinstance(value, str):
        return redact_url(value)
    return value
