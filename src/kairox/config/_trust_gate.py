"""Workspace trust applied while layers merge (C6): what an untrusted project may set, and what waits for trust."""

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kairox.config._layers import Layer
from kairox.config._merge import KeyOrigin, LayerData, Merged
from kairox.config._models import PROJECT_FORBIDDEN
from kairox.errors import Diagnostic

_APPROVAL_RANK = {"untrusted": 0, "never": 1, "on_request": 1, "on_failure": 2}
_SANDBOX_RANK = {"read_only": 0, "workspace_write": 1, "danger_full_access": 2}
PROJECT_LAYERS = (Layer.PROJECT, Layer.LOCAL)


@dataclass(frozen=True, kw_only=True, slots=True)
class PendingTrust:
    """A project setting held back until the workspace is trusted."""

    key: str
    origin: KeyOrigin
    reason: str
    replaces_trusted: bool = False
    """The value in effect comes from a trusted layer (a user's server of the same name); this one waits to
    replace it. Such an entry is listed, but the key is not pending: what is in effect may be used."""

    def to_json(self) -> dict[str, Any]:
        return {"key": self.key, "reason": self.reason, **self.origin.to_json(with_shadowed=False)}


def base_folder(origin: KeyOrigin | None, workspace: Path) -> Path:
    """The folder relative paths of a value are resolved against: its file's (the workspace for project files)."""
    if origin is not None and origin.file is not None:
        folder = origin.file.parent
        return folder.parent if folder.name == ".kairox" and origin.layer in PROJECT_LAYERS else folder
    return workspace


def _folders(items: Any, base: Path) -> set[Path]:
    paths = items if isinstance(items, list) else []
    return {Path(os.path.realpath(base / os.path.expanduser(str(item)))) for item in paths}


class TrustGate:
    """Decides which values of untrusted project layers are taken, and records what waits for trust."""

    def __init__(self, base: Merged | None, workspace: Path, project_files: frozenset[Path] = frozenset()) -> None:
        self.base = base
        self.workspace = workspace
        self.project_files = project_files  # what a profile written in these files sets comes from them too
        self.pending: list[PendingTrust] = []
        self.diagnostics: list[Diagnostic] = []

    def _hold(self, data: LayerData, key: str, reason: str, *, item: Any = None, replaces_trusted: bool = False) -> None:
        label = f"{key}[{item}]" if item is not None else key
        self.pending.append(PendingTrust(key=label, origin=data.origin(key, item), reason=reason, replaces_trusted=replaces_trusted))

    def __call__(self, data: LayerData, key: str, value: Any) -> bool:
        top = key.split(".", 1)[0]
        if top in PROJECT_FORBIDDEN and (data.layer in PROJECT_LAYERS or data.origin(key).file in self.project_files):
            origin = data.origin(key)
            self.diagnostics.append(
                Diagnostic(
                    kind="config", name=key, source=str(origin.file) if origin.file else None, line=origin.line,
                    reason="routes credentials or model endpoints, which project files may not set; ignored",
                    hint="set it in your user file ($KAIROX_HOME/kairox.toml) instead",
                )
            )
            return False
        if not data.untrusted or self.base is None:
            return True
        return self._accept_untrusted(data, key, value)

    def _accept_untrusted(self, data: LayerData, key: str, value: Any) -> bool:
        assert self.base is not None
        base = self.base.values
        if key in ("policy.approval_policy", "policy.sandbox_policy"):
            ranks = _APPROVAL_RANK if key.endswith("approval_policy") else _SANDBOX_RANK
            default = "on_request" if key.endswith("approval_policy") else "workspace_write"
            if ranks.get(str(value), 99) > ranks.get(str(base.get(key, default)), 1):
                self._hold(data, key, "would widen the policy")
                return False
            return True
        if key == "policy.network_access":
            if value is True and base.get(key) is not True:
                self._hold(data, key, "would allow network access")
                return False
            return True
        if key == "policy.writable_roots":
            # compared as the folders they name: the same text means another folder in another file
            ours = _folders(value, base_folder(data.origin(key), self.workspace))
            if not ours <= _folders(base.get(key, []), base_folder(self.base.origins.get(key), self.workspace)):
                self._hold(data, key, "would widen the policy")
                return False
            return True
        if key == "tools.shell_env_passthrough":
            if isinstance(value, list) and not set(value) <= set(base.get(key, [])):
                self._hold(data, key, "would widen the policy")
                return False
            return True
        if key == "tools.disabled":
            if isinstance(value, list) and not set(base.get(key, [])) <= set(value):
                self._hold(data, key, "would show tools the user disabled")
                return False
            return True
        if key == "policy.rules.allow":
            self._hold(data, key, "allow rules from an untrusted workspace wait for trust", item=value)
            return False
        if key.startswith("hooks."):
            self._hold(data, key, "hooks from an untrusted workspace do not run")
            return False
        if key.split(".", 1)[0] in ("mcp_servers", "lsp_servers", "dap_servers"):
            # a user's server of the same name keeps its own definition, and starts
            self._hold(data, key, "servers from an untrusted workspace do not start", replaces_trusted=key in base)
            return key not in base
        if key == "tools.spill_dir":
            self._hold(data, key, "an untrusted workspace may not choose where tool output is written")
            return False
        if key == "mcp_catalog.url":
            self._hold(data, key, "an untrusted workspace may not choose where server templates come from")
            return False
        if key == "mcp_catalog.sources":
            label = value.get("name") if isinstance(value, dict) else value
            self._hold(data, key, "an untrusted workspace may not add catalog sources", item=label)
            return False
        if key.startswith("plugins."):
            narrowing = key.endswith(".enabled") and value is False
            if not narrowing:
                self._hold(data, key, "plugins from an untrusted workspace are not enabled")
                return False
        return True
