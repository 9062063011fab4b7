"""Tiny pure helpers shared by every layer: names, ``${VAR}`` expansion, JSON aliases."""

from kairox._util._expand import ExpansionResult, expand_vars
from kairox._util._glob import glob_to_regex
from kairox._util._json import JsonObject, JsonValue
from kairox._util._names import mcp_tool_name, normalize_tool_name, suggest
from kairox._util._search_path import absolute_path, which_absolute

__all__ = [
    "ExpansionResult",
    "JsonObject",
    "JsonValue",
    "absolute_path",
    "expand_vars",
    "glob_to_regex",
    "mcp_tool_name",
    "normalize_tool_name",
    "suggest",
    "which_absolute",
]
