"""Approvals of plugin hooks, recorded against a hash of the event, matcher, command and the scripts it runs.

A hook of a plugin that is not ``local`` runs only once the user approved it; when the command, one of its
scripts or a file beside those scripts changes, the hash changes and the user is asked again.
"""

import hashlib
import json
import os
import tempfile
from pathlib import Path

from kairox.config import hash_files
from kairox.hooks._model import HookSpec


def hook_key(hook: HookSpec) -> str:
    """What an approval is filed under: ``<plugin>:<event>:<name>``."""
    return f"{hook.plugin or 'config'}:{hook.event}:{hook.name}"


def hook_hash(hook: HookSpec) -> str:
    """SHA-256 of the event, the matcher (a wider one shows the hook more calls), the command, every script
    file it names and the files in those scripts' folders (missing files hash as missing)."""
    digest = hashlib.sha256()
    digest.update(f"{hook.event}\0{hook.matcher or '*'}\0".encode())
    digest.update(hook.command.encode())
    hash_files(digest, hook.scripts)
    return digest.hexdigest()


class HookApprovalStore:
    """``$KAIROX_HOME/hook-approvals.json``: approved hook hashes, by hook key."""

    def __init__(self, home: Path) -> None:
        self.file = home / "hook-approvals.json"

    def _read(self) -> dict[str, str]:
        try:
            data = json.loads(self.file.read_text(encoding="utf-8"))
        except (OSError, ValueError):  # missing, not JSON, not UTF-8
            return {}
        approved = data.get("approved") if isinstance(data, dict) else None
        return {str(k): str(v) for k, v in approved.items()} if isinstance(approved, dict) else {}

    def is_approved(self, hook: HookSpec) -> bool:
        return self._read().get(hook_key(hook)) == hook_hash(hook)

    def approve(self, hook: HookSpec) -> None:
        approved = self._read()
        approved[hook_key(hook)] = hook_hash(hook)
        self._write(approved)

    def _write(self, approved: dict[str, str]) -> None:
        self.file.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=self.file.parent, prefix=".hook-approvals.")
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            json.dump({"approved": dict(sorted(approved.items()))}, handle, indent=2)
            handle.write("\n")
        os.replace(tmp, self.file)
