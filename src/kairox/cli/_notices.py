"""Warnings shown once per change: a command that merely touches an extension (``context``, ``tools list``,
``plugins list``) repeats no warning it showed before, until the file the warning is about changes.
``kairox doctor`` and the ``inspect`` / ``validate`` commands always show everything."""

import hashlib
import json
import os
from collections.abc import Iterable
from pathlib import Path

from kairox._util._files import PRIVATE_FILE, write_atomically
from kairox.errors import Diagnostic, Severity

_KEPT = 2000
"""Remembered warnings; the oldest are forgotten first."""


def _file_state(source: str | None) -> str:
    if not source:
        return ""
    try:
        st = os.stat(source)
    except OSError:
        return ""
    return f"{st.st_mtime_ns}:{st.st_size}"


def _key(diagnostic: Diagnostic) -> str:
    text = "\0".join(
        (diagnostic.kind, diagnostic.name, diagnostic.reason, diagnostic.source or "", _file_state(diagnostic.source))
    )
    return hashlib.sha256(text.encode("utf-8", "replace")).hexdigest()[:32]


class ShownWarnings:
    """The warnings already shown, kept in ``$KAIROX_HOME/cache/shown-warnings.json``."""

    def __init__(self, home: Path) -> None:
        self.file = home / "cache" / "shown-warnings.json"

    def _read(self) -> list[str]:
        try:
            data = json.loads(self.file.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return []
        return [k for k in data if isinstance(k, str)] if isinstance(data, list) else []

    def split(self, diagnostics: Iterable[Diagnostic]) -> tuple[list[Diagnostic], int]:
        """The diagnostics to show now (errors always, warnings not shown before) and how many were held back;
        the warnings shown now are remembered."""
        seen = self._read()
        known = set(seen)
        shown: list[Diagnostic] = []
        held = 0
        added = False
        for diagnostic in diagnostics:
            if diagnostic.severity is not Severity.WARNING:
                shown.append(diagnostic)
                continue
            key = _key(diagnostic)
            if key in known:
                held += 1
                continue
            known.add(key)
            seen.append(key)
            added = True
            shown.append(diagnostic)
        if added:
            self._write(seen[-_KEPT:])
        return shown, held

    def _write(self, keys: list[str]) -> None:
        try:
            write_atomically(self.file, json.dumps(keys).encode(), mode=PRIVATE_FILE)
        except OSError:
            return  # a read-only home only means the warnings are shown again next time


def held_back_note(count: int) -> str:
    return (
        f"({count} warning(s) shown before are not repeated until their files change; `kairox doctor` lists every one)"
    )
