"""Which workspaces the user trusts (C6) and what trust allowed
there (Y9), in ``$KAIROX_HOME/trusted_workspaces.json``."""

import json
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from kairox._util._files import write_atomically
from kairox.config._pins import PinnedValue, Pins, pins_record
from kairox.errors import TrustError

TRUST_FILE = "trusted_workspaces.json"


@dataclass(frozen=True, kw_only=True, slots=True)
class TrustReview:
    """What ``kairox trust`` records: every value it allows, and what changed since the last time."""

    workspace: Path
    allowed: tuple[PinnedValue, ...]
    new: tuple[PinnedValue, ...]
    """Values not recorded before (all of them on first trust or after a record without fingerprints)."""
    changed: tuple[PinnedValue, ...]
    removed: tuple[str, ...]
    """Pin ids recorded before that no project file sets any more."""
    first: bool
    """The workspace was not recorded before."""


class TrustStore:
    """Trusted workspace roots. A workspace is trusted when it or one of its ancestors is recorded."""

    def __init__(self, home: Path) -> None:
        self.path = home / TRUST_FILE

    def _read(self) -> dict[str, dict[str, object]]:
        if not self.path.exists():
            return {}
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError) as exc:
            raise TrustError(
                f"{self.path}: cannot read the trust store: {exc}",
                hint="fix or delete the file, then run `kairox trust` again",
            ) from exc
        workspaces = data.get("workspaces", {}) if isinstance(data, dict) else {}
        return workspaces if isinstance(workspaces, dict) else {}

    def _write(self, workspaces: dict[str, dict[str, object]]) -> None:
        text = json.dumps({"workspaces": workspaces}, indent=2, sort_keys=True)
        write_atomically(self.path, text.encode(), mode=0o600)

    def list(self) -> list[Path]:
        return sorted(Path(p) for p in self._read())

    def pins(self, workspace: Path) -> Pins | None:
        """What trust pinned for ``workspace`` (its own record and its trusted parents'); None when not trusted.

        A folder inside a trusted one is trusted, but the parent's fingerprints name the parent's files only:
        the folder's own configuration waits until it is trusted itself.
        """
        root = workspace.resolve()
        workspaces = self._read()
        records = [workspaces[str(f)] for f in (root, *root.parents) if str(f) in workspaces]
        if not records:
            return None
        pinned = [r["pins"] for r in records if isinstance(r, dict) and isinstance(r.get("pins"), dict)]
        if not pinned:
            return Pins(None)
        merged: dict[str, tuple[str, ...]] = {}
        for record in pinned:
            assert isinstance(record, dict)
            for pin_id, hashes in record.items():
                if isinstance(hashes, list):
                    merged[str(pin_id)] = (*merged.get(str(pin_id), ()), *(str(h) for h in hashes))
        return Pins(merged)

    def trust(self, workspace: Path, values: Iterable[PinnedValue]) -> TrustReview:
        """Record ``workspace`` with the fingerprints of ``values``: what its files set now is the resolver's
        ``ResolvedConfig.pinnable`` (:func:`kairox.config.trust_workspace` resolves and records in one call)."""
        allowed = tuple(values)
        workspaces = self._read()
        key = str(workspace.resolve())
        before = workspaces.get(key)
        old = before.get("pins") if isinstance(before, dict) else None
        old_pins: Mapping[str, object] = old if isinstance(old, dict) else {}
        known = {pin_id: {str(h) for h in hashes} for pin_id, hashes in old_pins.items() if isinstance(hashes, list)}
        record = pins_record(allowed)
        new = tuple(p for p in allowed if p.pin_id not in known or (p.item and p.fingerprint not in known[p.pin_id]))
        changed = tuple(p for p in allowed if p.pin_id in known and not p.item and p.fingerprint not in known[p.pin_id])
        removed = tuple(sorted(set(old_pins) - set(record)))
        workspaces[key] = {"trusted_at": int(time.time()), "pins": record}
        self._write(workspaces)
        return TrustReview(
            workspace=Path(key), allowed=allowed, new=new, changed=changed, removed=removed, first=before is None
        )

    def pin(self, workspace: Path, values: Iterable[PinnedValue]) -> bool:
        """Add the fingerprints of ``values`` to what trust allowed in ``workspace``, keeping every other one: what
        Kairox itself just wrote into a trusted workspace's file for the user (an "always" saved in the project
        layer) is in force from the next resolve, while anything else in that file that changed meanwhile still
        waits. The record is the workspace's own, else that of the trusted folder holding it. False when the
        workspace is not trusted (nothing is recorded then)."""
        root = workspace.resolve()
        workspaces = self._read()
        key = next((str(f) for f in (root, *root.parents) if str(f) in workspaces), None)
        if key is None:
            return False
        record = workspaces[key]
        old = record.get("pins") if isinstance(record, dict) else None
        if not isinstance(record, dict) or not isinstance(old, dict):
            return False  # trusted before fingerprints: everything waits once for `kairox trust`, these too
        merged = {str(pin_id): [str(h) for h in hashes] for pin_id, hashes in old.items() if isinstance(hashes, list)}
        for pin in values:  # an item joins the others of its list; a value replaces the one it was
            kept = merged.get(pin.pin_id, []) if pin.item else []
            merged[pin.pin_id] = sorted({*kept, pin.fingerprint})
        workspaces[key] = {**record, "pins": dict(sorted(merged.items()))}
        self._write(workspaces)
        return True

    def revoke(self, workspace: Path) -> bool:
        """Forget ``workspace``; False when it was not recorded."""
        workspaces = self._read()
        if workspaces.pop(str(workspace.resolve()), None) is None:
            return False
        self._write(workspaces)
        return True
