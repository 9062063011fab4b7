"""Each MCP server's last tool, resource and prompt lists, remembered between runs (M4).

``$KAIROX_HOME/cache/mcp-tools/<server>-<digest>.json``: the digest is of what in the server's configuration
decides its lists, so a changed command, argument, environment or sandbox is a
miss (``USE_ONLY`` keys are not). The entry also holds what the server said it is
(``serverInfo`` name and version): when a start reports another version, the fresh lists replace the entry, as
they do on every start and every ``list_changed``. A damaged file is a miss, never an error.
"""

import contextlib
import hashlib
import json
import os
import re
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from kairox._util._files import open_private, private_folder
from kairox._util._filestate import FileMemo
from kairox.config import McpServerConfig
from kairox.mcp._content import McpResource, McpTool
from kairox.mcp._files import server_file_stem
from kairox.tools import ToolAnnotations

SCHEMA = 1


USE_ONLY = frozenset(
    {
        "enabled",
        "required",
        "startup",
        "startup_timeout_sec",
        "cache_tools",
        "tool_timeout_sec",
        "max_restarts",
        "enabled_tools",
        "disabled_tools",
        "trust_annotations",
        "max_tools",
        "max_description_chars",
    }
)
"""Keys that decide how Kairox uses a server's lists (when it starts, which tools it offers, for how long it
waits), not what the server lists: changing one keeps the entry (``startup = "lazy"`` finds the lists an eager
start left). The cache holds the server's lists as it sent them; the filters apply on reading."""


def config_digest(name: str, config: McpServerConfig) -> str:
    decisive = config.model_dump(mode="json", exclude=set(USE_ONLY))
    text = json.dumps([name, decisive], sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


@dataclass(frozen=True, kw_only=True, slots=True)
class CachedLists:
    tools: tuple[McpTool, ...]
    resources: tuple[McpResource, ...]
    prompts: tuple[str, ...]
    server_info: dict[str, Any] | None = None
    """The ``serverInfo`` the server reported when the lists were taken."""


def _tool(raw: dict[str, Any]) -> McpTool:
    return McpTool(**{**raw, "annotations": ToolAnnotations(**(raw.get("annotations") or {}))})


_READ: FileMemo[CachedLists | None] = FileMemo(limit=512)
"""Entries read by this process, while their file is unchanged: a process that opens many sessions (the GUI's hub,
``kairox serve``) parses each file once."""


def _parse(path: Path) -> CachedLists | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        if data.get("schema") != SCHEMA:
            return None
        return CachedLists(
            tools=tuple(_tool(t) for t in data["tools"]),
            resources=tuple(McpResource(**r) for r in data.get("resources", [])),
            prompts=tuple(str(p) for p in data.get("prompts", [])),
            server_info=data.get("server_info"),
        )
    except (OSError, ValueError, TypeError, KeyError, AttributeError):
        return None


def _text_of(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None


class ToolListCache:
    def __init__(self, home: Path) -> None:
        self.folder = home / "cache" / "mcp-tools"

    def path(self, name: str, config: McpServerConfig) -> Path:
        return self.folder / f"{server_file_stem(name)}-{config_digest(name, config)}.json"

    def load(self, name: str, config: McpServerConfig) -> CachedLists | None:
        path = self.path(name, config)
        try:
            return _READ.get(path, str(path), lambda _: _parse(path))
        except (OSError, ValueError):
            return None

    def save(self, name: str, config: McpServerConfig, lists: CachedLists) -> None:
        """Write the entry whole (temporary file, then rename); a home that cannot be written only costs the
        next session a cold start."""
        path = self.path(name, config)
        body = {
            "schema": SCHEMA,
            "server": name,
            "server_info": lists.server_info,
            "tools": [asdict(t) for t in lists.tools],
            "resources": [asdict(r) for r in lists.resources],
            "prompts": list(lists.prompts),
        }
        temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        text = json.dumps(body, ensure_ascii=False, default=str)
        try:
            private_folder(path.parent)
            # the same lists as the entry holds (a start of an unchanged server): the file is left as it is, so
            # what this process read of it stays good (``_READ``) and the next session need not parse it again
            if _text_of(path) != text:
                with open_private(temporary, "w", encoding="utf-8") as handle:
                    handle.write(text)
                os.replace(temporary, path)
            # entries of this server under an older configuration are dead: keep the folder small
            mine = re.compile(re.escape(server_file_stem(name)) + r"-[0-9a-f]{16}\.json")
            for old in path.parent.glob(f"{server_file_stem(name)}-*.json"):
                if old != path and mine.fullmatch(old.name):
                    with contextlib.suppress(OSError):
                        old.unlink()
        except OSError:
            with contextlib.suppress(OSError):
                temporary.unlink()
