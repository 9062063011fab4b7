"""Servers known to exit on the 2026 discovery probe, remembered across runs so they are not started twice.

``$KAIROX_HOME/mcp-protocol.json`` maps a server (its name and a hash of how it is started) to ``legacy``.
A server whose command or URL changes is probed again.
"""

import contextlib
import hashlib
import json
from pathlib import Path

from kairox.config import McpServerConfig

FILE = "mcp-protocol.json"


def server_key(name: str, config: McpServerConfig) -> str:
    how = json.dumps([config.command, config.args, config.url], ensure_ascii=False)
    return f"{name}:{hashlib.sha256(how.encode()).hexdigest()[:12]}"


def known_legacy(home: Path, key: str) -> bool:
    try:
        data = json.loads((home / FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return isinstance(data, dict) and data.get(key) == "legacy"


def remember_legacy(home: Path, key: str) -> None:
    path = home / FILE
    data: dict[str, str] = {}
    with contextlib.suppress(OSError, ValueError):
        loaded = json.loads(path.read_text(encoding="utf-8"))
        if isinstance(loaded, dict):
            data = {str(k): str(v) for k, v in loaded.items()}
    data[key] = "legacy"
    with contextlib.suppress(OSError):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n", encoding="utf-8")
