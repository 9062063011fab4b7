"""Workspace trust applied while layers merge (C6): what an untrusted project may set, and what waits for trust."""

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kairox._util._domains import covered
from kairox.config._layers import Layer
from kairox.config._merge import KeyOrigin, LayerData, Merged
from kairox.config._models import NARROW_ONLY_KEYS, PROJECT_FORBIDDEN, USER_ONLY_KEYS
from kairox.config._pins import PinnedValue, Pins, PinState, describe, fingerprint, reads_files
from kairox.errors import Diagnostic

_APPROVAL_RANK = {"untrusted": 0, "never": 1, "on_request": 1, "on_failure": 2}
_SANDBOX_RANK = {"read_only": 0, "workspace_write": 1, "danger_full_access": 2}
_NETWORK_RANK = {"off": 0, "allowlist": 1, "on": 2}
_WATCHED = frozenset((*NARROW_ONLY_KEYS, *USER_ONLY_KEYS, "policy.network_access"))
PROJECT_LAYERS = (Layer.PROJECT, Layer.LOCAL)
STANDARD_INSTRUCTION_FILES = frozenset({"AGENTS.md", "KAIROX.md", "CLAUDE.md"})
"""The memory and instruction files an untrusted project may name: the ones every host reads anyway."""
_INSTRUCTION_KEYS = ("instructions.files", "instructions.memory_files", "instructions.fallback_memory_files")


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
    """Decides which values of project layers are taken, and records what waits for trust.

    An untrusted workspace's project values that would widen anything wait. A trusted workspace's wait too
    unless trust pinned them: each is fingerprinted (``pinnable``) and compared with what ``kairox trust``
    recorded, so a server, hook or policy key added or changed after trusting waits for the user again.
    """

    def __init__(
        self,
        base: Merged | None,
        workspace: Path,
        project_files: frozenset[Path] = frozenset(),
        *,
        pins: Pins | None = None,
    ) -> None:
        self.base = base
        self.workspace = workspace
        self.project_files = project_files  # what a profile written in these files sets comes from them too
        self.pins = pins
        """None: the workspace is not trusted."""
        self.pending: list[PendingTrust] = []
        self.diagnostics: list[Diagnostic] = []
        self.pinnable: list[PinnedValue] = []
        self._users: dict[str, Any] = {}
        """The network keys as the layers below the project files set them (what a project value may narrow)."""

    def pin_of(self, key: str, value: Any, origin: KeyOrigin, *, item: Any = None) -> PinnedValue:
        label = f"{key}[{item}]" if item is not None and not isinstance(item, dict) else key
        return PinnedValue(
            key=label,
            what=describe(label, value),
            fingerprint=fingerprint(key, value, base_folder(origin, self.workspace)),
            origin=origin,
            item=item is not None,
        )

    def waits(
        self, pin: PinnedValue, reason: str, *, replaces_trusted: bool = False, made: dict[Any, Any] | None = None
    ) -> bool:
        """Whether a held-back value waits (True) or trust pinned it as it is (False); a waiting one is listed.

        ``made``: what earlier resolves listed for this pin, by everything that decides it (kept with the file)."""
        self.pinnable.append(pin)
        state = None
        if self.pins is not None:
            state = self.pins.state(pin)
            if state == PinState.PINNED:
                return False
        slot = (reason, replaces_trusted, state, self.workspace)
        listed = made.get(slot) if made is not None else None
        if listed is None:
            diagnostic = None
            if self.pins is not None and state is not None:
                reason = self.pins.reason(pin, state, self.workspace)
                diagnostic = Diagnostic(
                    kind="trust",
                    name=pin.key,
                    source=str(pin.origin.file) if pin.origin.file else pin.origin.source,
                    line=pin.origin.line,
                    reason=reason,
                    hint="run `kairox trust` to review and allow it",
                )
            listed = (
                diagnostic,
                PendingTrust(key=pin.key, origin=pin.origin, reason=reason, replaces_trusted=replaces_trusted),
            )
            if made is not None:
                made[slot] = listed
        if listed[0] is not None:
            self.diagnostics.append(listed[0])
        self.pending.append(listed[1])
        return True

    def _hold(
        self, data: LayerData, key: str, value: Any, reason: str, *, item: Any = None, replaces_trusted: bool = False
    ) -> bool:
        pin, made = self._pin(data, key, value, item)
        return self.waits(pin, reason, replaces_trusted=replaces_trusted, made=made)

    def _pin(self, data: LayerData, key: str, value: Any, item: Any) -> tuple[PinnedValue, dict[Any, Any] | None]:
        """The pin of a file's value, kept with the file's parse while the value is the same object (the file
        unchanged) and its fingerprint covers nothing else (``item`` derives from ``value``); with it, what was
        listed for it before."""
        memo = data.pin_memo
        if memo is None or reads_files(key):
            return self.pin_of(key, value, data.origin(key, item), item=item), None
        slot = (key, id(value))
        found = memo.get(slot)
        if found is not None and found[0] is value:
            return found[1], found[2]
        pin = self.pin_of(key, value, data.origin(key, item), item=item)
        made: dict[Any, Any] = {}
        memo[slot] = (value, pin, made)  # holding the value keeps its id from being reused
        return pin, made

    def __call__(self, data: LayerData, key: str, value: Any) -> bool:
        watched = key in _WATCHED or key.split(".", 1)[0] in PROJECT_FORBIDDEN
        project = watched and (data.layer in PROJECT_LAYERS or data.origin(key).file in self.project_files)
        if key in (*NARROW_ONLY_KEYS, "policy.network_access") and not project:
            self._users[key] = value  # what the user's own layers say, for a project value to narrow
        elif key.split(".", 1)[0] in PROJECT_FORBIDDEN and project:
            return self._ignored(data, key, "routes credentials or model endpoints, which project files may not set")
        elif key in USER_ONLY_KEYS and project:
            return self._ignored(data, key, "would run servers without a sandbox, which project files may not decide")
        elif key in NARROW_ONLY_KEYS and project and (wider := self._widens(key, value)) is not None:
            return self._ignored(data, key, f"{wider}: a project file may only narrow the network")
        if not data.untrusted or self.base is None:
            return True
        return self._accept_project(data, key, value)

    def _ignored(self, data: LayerData, key: str, reason: str) -> bool:
        """False, with a diagnostic: a project file's value the user's own file must set."""
        origin = data.origin(key)
        source = str(origin.file) if origin.file else None
        hint = "set it in your user file ($KAIROX_HOME/kairox.toml) instead"
        self.diagnostics.append(
            Diagnostic(kind="config", name=key, source=source, line=origin.line, reason=f"{reason}; ignored", hint=hint)
        )
        return False

    def _widens(self, key: str, value: Any) -> str | None:
        """How a project's ``sandbox.network`` or ``allowed_domains`` would widen the user's own layers', or None."""
        users = self._users
        network = users.get("sandbox.network") or ("on" if users.get("policy.network_access") is True else "off")
        if key == "sandbox.network":
            wider = _NETWORK_RANK.get(str(value), 9) > _NETWORK_RANK.get(str(network), 0)
            return f"it sets the network to {value!r} where yours is {network!r}" if wider else None
        outside = [str(d) for d in value or () if network != "on" and not covered(str(d), users.get(key) or ())]
        return f"it names {', '.join(outside)}, which your own sandbox.allowed_domains does not" if outside else None

    def _accept_project(self, data: LayerData, key: str, value: Any) -> bool:
        assert self.base is not None
        base = self.base.values
        if key in ("policy.approval_policy", "policy.sandbox_policy"):
            ranks = _APPROVAL_RANK if key.endswith("approval_policy") else _SANDBOX_RANK
            default = "on_request" if key.endswith("approval_policy") else "workspace_write"
            if ranks.get(str(value), 99) > ranks.get(str(base.get(key, default)), 1):
                return not self._hold(data, key, value, "would widen the policy")
            return True
        if key == "policy.network_access":
            if value is True and base.get(key) is not True:
                return not self._hold(data, key, value, "would allow network access")
            return True
        if key in ("policy.writable_roots", "policy.allow_unix_sockets"):
            # compared as the paths they name: the same text means another folder in another file
            ours = _folders(value, base_folder(data.origin(key), self.workspace))
            if not ours <= _folders(base.get(key, []), base_folder(self.base.origins.get(key), self.workspace)):
                why = (
                    "would widen the policy"
                    if key.endswith("writable_roots")
                    else "would let sandboxed commands reach host sockets"
                )
                return not self._hold(data, key, value, why)
            return True
        if key == "tools.shell_env_passthrough":
            if isinstance(value, list) and not set(value) <= set(base.get(key, [])):
                return not self._hold(data, key, value, "would widen the policy")
            return True
        if key == "tools.disabled":
            if isinstance(value, list) and not set(base.get(key, [])) <= set(value):
                return not self._hold(data, key, value, "would show tools the user disabled")
            return True
        if key in _INSTRUCTION_KEYS:
            if isinstance(value, list) and not {str(v) for v in value} <= STANDARD_INSTRUCTION_FILES:
                reason = (
                    "an untrusted workspace may name only the standard "
                    "instruction files (AGENTS.md, KAIROX.md, CLAUDE.md)"
                )
                return not self._hold(data, key, value, reason)
            return True
        if key == "policy.rules.allow":
            return not self._hold(
                data, key, value, "allow rules from an untrusted workspace wait for trust", item=value
            )
        if key.startswith("hooks."):
            return not self._hold(data, key, value, "hooks from an untrusted workspace do not run", item=value)
        if key.split(".", 1)[0] in ("mcp_servers", "lsp_servers", "dap_servers"):
            # a user's server of the same name keeps its own definition, and starts
            waits = self._hold(
                data, key, value, "servers from an untrusted workspace do not start", replaces_trusted=key in base
            )
            return not waits or key not in base
        if key == "tools.spill_dir":
            return not self._hold(
                data, key, value, "an untrusted workspace may not choose where tool output is written"
            )
        if key == "mcp_catalog.url":
            return not self._hold(
                data, key, value, "an untrusted workspace may not choose where server templates come from"
            )
        if key == "mcp_catalog.sources":
            label = value.get("name") if isinstance(value, dict) else value
            return not self._hold(data, key, value, "an untrusted workspace may not add catalog sources", item=label)
        if key.startswith("plugins."):
            narrowing = key.endswith(".enabled") and value is False
            if not narrowing:
                return not self._hold(data, key, value, "plugins from an untrusted workspace are not enabled")
        return True
