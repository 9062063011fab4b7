"""Secrets never printed (C5): header and env values, keys that look like credentials, passwords and secret query
parameters in URLs, and the values of secret-looking flags in server arguments are redacted."""

import re
import shlex
from collections.abc import Iterable
from typing import Any

REDACTED = "<redacted>"
_SECRET_WORDS = ("key", "token", "secret", "password")
_NAME_SUFFIXES = ("_env", "_env_var")
"""Keys like ``api_key_env`` hold the *name* of a variable, not a secret."""
_SPLIT = re.compile(r"[:@/?&=#\s]+")
_URL = re.compile(
    r"^(?P<scheme>[A-Za-z][A-Za-z0-9+.-]*://)(?P<userinfo>[^/?#@]*@)?(?P<rest>[^?#]*)(?P<query>\?[^#]*)?(?P<fragment>#.*)?$",
    re.DOTALL,
)


def is_secret_key(name: str) -> bool:
    """Whether a key or flag name looks like a credential's."""
    lowered = name.lower()
    return any(word in lowered for word in _SECRET_WORDS) and not lowered.endswith(_NAME_SUFFIXES)


def redact_url(text: str) -> str:
    """``https://user:pw@host/x?token=t`` ->
    ``https://user:<redacted>@host/x?token=<redacted>``; other text unchanged."""
    match = _URL.match(text) if "://" in text else None  # no scheme, no URL: the common case, without the regex
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


_URL_IN_TEXT = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://[^\s'\"<>]*[^\s'\"<>.,:;)]")


def redact_urls(text: str) -> str:
    """Every URL inside a sentence (an error message naming the endpoint it could not reach) redacted as
    :func:`redact_url` redacts one."""
    return _URL_IN_TEXT.sub(lambda match: redact_url(match.group(0)), text)


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


_ASSIGNMENT = re.compile(r"^(?P<name>[A-Za-z_][A-Za-z0-9_]*)=(?P<value>.+)$", re.DOTALL)
_HEADER = re.compile(r"^(?P<name>[A-Za-z0-9-]+):\s*(?P<value>.+)$", re.DOTALL)
_HEADER_FLAGS = ("-H", "--header")


def command_words(command: str) -> list[str]:
    """The words of a command line as a shell splits them; with an unmatched quote, the words as typed."""
    try:
        return shlex.split(command)
    except ValueError:
        return command.split()


def redact_command(text: str) -> str:
    """A shell command line as shown to people (a hook's ``command``): secret-looking flag values, ``NAME=value``
    assignments of secret-looking names, header values given with ``-H``, and URL credentials are redacted."""
    words = command_words(text)
    shown: list[str] = []
    for index, word in enumerate(words):
        after_header_flag = index > 0 and words[index - 1] in _HEADER_FLAGS
        assignment = _ASSIGNMENT.match(word)
        header = _HEADER.match(word) if after_header_flag else None
        if header is not None:
            shown.append(f"{header.group('name')}: {REDACTED}")
        elif assignment is not None and is_secret_key(assignment.group("name")):
            shown.append(f"{assignment.group('name')}={REDACTED}")
        else:
            shown.append(word)
    redacted = _redact_args(shown)
    if redacted == words:
        return text  # nothing secret: the text as it was written
    return shlex.join(str(word) for word in redacted)


def redact_tree(value: Any, *, parent: str = "") -> Any:
    if isinstance(value, dict):
        result: dict[str, Any] = {}
        for name, item in value.items():
            if (parent in ("env", "headers") and isinstance(item, str) and item) or (
                is_secret_key(name) and isinstance(item, str) and item
            ):
                result[name] = REDACTED
            elif name == "command" and isinstance(item, str) and any(c.isspace() for c in item):
                result[name] = redact_command(item)  # a shell command line (a hook's), not one program's path
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


def redacted_values(plain: Any) -> tuple[str, ...]:
    """What ``config show`` would redact of one JSON tree: each value it hides, or the hidden parts of one (a URL
    or flag partly redacted)."""
    found: list[str] = []
    for before, after in _leaves(plain, redact_tree(plain)):
        if before == after:
            continue
        if after == REDACTED:
            found.append(before)
        else:  # a URL or flag partly redacted: the parts that are gone
            kept = set(_SPLIT.split(after))
            found.extend(part for part in _SPLIT.split(before) if part not in kept)
    return tuple(found)


def _leaves(before: Any, after: Any) -> Iterable[tuple[str, str]]:
    if before == after:
        return  # nothing redacted below here (most of a configuration): its leaves need no walk
    if isinstance(before, dict) and isinstance(after, dict):
        for key, value in before.items():
            yield from _leaves(value, after.get(key))
    elif isinstance(before, list) and isinstance(after, list):
        for one, other in zip(before, after, strict=False):
            yield from _leaves(one, other)
    elif isinstance(before, str) and isinstance(after, str):
        yield before, after
