"""Which workspaces the user trusts (C6), recorded in ``$KAIROX_HOME/trusted_workspaces.json``."""

import json
import os
import tempfile
import time
from pathlib import Path

from kairox.errors import TrustError

TRUST_FILE = "trusted_workspaces.json"


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
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=self.path.parent, prefix=".trust-")
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            json.dump({"workspaces": workspaces}, handle, indent=2, sort_keys=True)
        os.replace(tmp, self.path)

    def list(self) -> list[Path]:
        return sorted(Path(p) for p in self._read())

    def is_trusted(self, workspace: Path) -> bool:
        root = workspace.resolve()
        trusted = {Path(p) for p in self._read()}
        return any(folder in trusted for folder in (root, *root.parents))

    def trust(self, workspace: Path) -> bool:
        """Record ``workspace``; False when it was already recorded."""
        workspaces = self._read()
        key = str(workspace.resolve())
        if key in workspaces:
            return False
        workspaces[key] = {"trusted_at": int(time.time())}
        self._write(workspaces)
        return True

    def revoke(self, workspace: Path) -> bool:
        """Forget ``workspace``; False when it was not recorded."""
        workspaces = self._read()
        if workspaces.pop(str(workspace.resolve()), None) is None:
            return False
        self._write(workspaces)
        return True
