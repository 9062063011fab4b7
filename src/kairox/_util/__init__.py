"""Tiny pure helpers shared by every layer: names, ``${VAR}`` expansion, JSON aliases, bounded decoding."""

from kairox._util._decode import (
    MAX_DEPTH,
    DecodeProblem,
    bracket_line,
    decode_json,
    decode_toml,
    long_integer_line,
    nesting_depth,
)
from kairox._util._expand import expand_vars
from kairox._util._files import open_private, private_folder, tighten
from kairox._util._glob import glob_to_regex
from kairox._util._json import JsonObject, json_dict, json_int, json_list
from kairox._util._logfile import LOG_LIMIT_BYTES, RotatingLog
from kairox._util._names import mcp_tool_name, mcp_tool_namer, normalize_tool_name, suggest
from kairox._util._search_path import absolute_path, which_absolute

__all__ = [
    "LOG_LIMIT_BYTES",
    "MAX_DEPTH",
    "DecodeProblem",
    "JsonObject",
    "RotatingLog",
    "absolute_path",
    "bracket_line",
    "decode_json",
    "decode_toml",
    "expand_vars",
    "glob_to_regex",
    "json_dict",
    "json_int",
    "json_list",
    "long_integer_line",
    "mcp_tool_name",
    "mcp_tool_namer",
    "nesting_depth",
    "normalize_tool_name",
    "open_private",
    "private_folder",
    "suggest",
    "tighten",
    "which_absolute",
]
