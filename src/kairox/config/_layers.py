"""Where each configuration layer lives and how a workspace root is found (C1)."""

import enum
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

SYSTEM_CONFIG = Path("/etc/kairox/kairox.toml")
WORKSPACE_MARKERS = (".git", "kairox.toml", ".kairox")


class Layer(enum.StrEnum):
    """Configuration layers, lowest first."""

    DEFAULT = "default"
    SYSTEM = "system"
    USER = "user"
    PROJECT = "project"
    LOCAL = "local"
    PROFILE = "profile"
    ENV = "env"
    CLI = "cli"
    PLUGIN = "plugin"
    """Contributions of plugins (MCP / LSP servers), merged by the runtime with ``plugin:<name>`` provenance."""


class LayerStatus(enum.StrEnum):
    LOADED = "loaded"
    NOT_FOUND = "not_found"
    UNTRUSTED = "untrusted"
    """Read, but what it would widen waits for ``kairox trust``."""
    ERROR = "error"
    SHARED = "shared"
    """A project or local file that is the user's or system file (a link): read as that layer only."""


@dataclass(frozen=True, kw_only=True, slots=True)
class LayerInfo:
    layer: Layer
    file: Path | None
    status: LayerStatus
    detail: str | None = None

    def to_json(self) -> dict[str, object]:
        return {
            "name": str(self.layer),
            "file": str(self.file) if self.file else None,
            "exists": bool(self.file and self.file.exists()),
            "status": str(self.status),
            "detail": self.detail,
        }


def kairox_home(env: Mapping[str, str] | None = None) -> Path:
    """``$KAIROX_HOME``, default ``~/.kairox``."""
    env = os.environ if env is None else env
    value = env.get("KAIROX_HOME")
    return Path(value).expanduser() if value else Path.home() / ".kairox"


def system_config_path(env: Mapping[str, str] | None = None) -> Path:
    """``$KAIROX_SYSTEM_CONFIG``, default ``/etc/kairox/kairox.toml``."""
    env = os.environ if env is None else env
    value = env.get("KAIROX_SYSTEM_CONFIG")
    return Path(value).expanduser() if value else SYSTEM_CONFIG


def find_workspace(start: Path) -> Path:
    """The nearest ancestor of ``start`` holding ``.git``, ``kairox.toml`` or ``.kairox``; else ``start``.

    The home folder itself is never taken as a workspace (its ``.kairox`` is the user layer).
    """
    start = start.resolve()
    home = Path.home().resolve()
    for folder in (start, *start.parents):
        if folder == home:
            break
        if any((folder / marker).exists() for marker in WORKSPACE_MARKERS):
            return folder
    return start


def project_config_path(workspace: Path) -> Path:
    """``kairox.toml`` at the root, or ``.kairox/kairox.toml`` when only that exists."""
    root_file = workspace / "kairox.toml"
    nested = workspace / ".kairox" / "kairox.toml"
    if not root_file.exists() and nested.exists():
        return nested
    return root_file


def local_config_path(workspace: Path) -> Path:
    return workspace / ".kairox" / "kairox.local.toml"
