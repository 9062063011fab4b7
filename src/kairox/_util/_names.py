import hashlib
import re
from collections.abc import Iterable

_UNSAFE = re.compile(r"[^A-Za-z0-9_-]")
MAX_TOOL_NAME = 64


def normalize_tool_name(name: str) -> str:
    """Replace every character outside ``[A-Za-z0-9_-]`` with ``_``."""
    return _UNSAFE.sub("_", name)


def mcp_tool_name(server: str, tool: str) -> str:
    """The registry name of an MCP tool: ``mcp__<server>__<tool>``.

    Normalised to ``[A-Za-z0-9_-]`` and at most 64 characters; a longer name is cut and given a stable
    8-character hash of the full original, so two long names never collide and a name never changes between
    runs.
    """
    full = f"mcp__{normalize_tool_name(server)}__{normalize_tool_name(tool)}"
    if len(full) <= MAX_TOOL_NAME:
        return full
    digest = hashlib.sha256(f"{server}\0{tool}".encode()).hexdigest()[:8]
    return f"{full[: MAX_TOOL_NAME - 9]}_{digest}"


def suggest(word: str, choices: Iterable[str]) -> str | None:
    """The closest of ``choices`` to a misspelt ``word``, or None when nothing is close."""
    import difflib  # only a misspelling needs it

    matches = difflib.get_close_matches(word, list(choices), n=1, cutoff=0.6)
    return matches[0] if matches else None
