"""What trust pins (Y9): a fingerprint of every project value that waits for trust, recorded by ``kairox trust``.

A trusted workspace takes from its project files only what was there when the user trusted it. Each value the
gate would hold back in an untrusted workspace (a server, a hook, a plugin folder, a widening policy key) is
fingerprinted with the file that sets it, and for what runs, with the files it runs: a server's command and
arguments that name files, a hook's scripts, a plugin's whole folder. A new or changed value waits again.
"""

import hashlib
import json
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from kairox._util._decode import DecodeProblem, decode_json
from kairox.config._keys import split_key
from kairox.config._merge import KeyOrigin
from kairox.config._models import SERVER_SECTIONS
from kairox.config._redact import command_words

_MAX_HASHED_FILES = 200
_MAX_TREE_FILES = 2_000
_TREE_SKIP = frozenset({".git", "__pycache__"})


class Digest(Protocol):
    def update(self, data: bytes, /) -> None: ...


_WHAT = {"mcp_servers": "MCP server", "lsp_servers": "language server", "dap_servers": "debug adapter"}


def hashed_files(scripts: Iterable[Path]) -> list[Path]:
    """The scripts and the files beside them: a script often runs a helper from its own folder."""
    files = set(scripts)
    for folder in sorted({script.parent for script in files}):
        try:
            beside = sorted(entry for entry in folder.iterdir() if entry.is_file())
        except OSError:
            continue
        files.update(beside[:_MAX_HASHED_FILES])
    return sorted(files)


def hash_files(digest: Digest, scripts: Iterable[Path]) -> None:
    """Feed every script, and the files beside it, into ``digest`` (a missing file hashes as missing)."""
    for script in hashed_files(scripts):
        digest.update(b"\0" + str(script).encode() + b"\0")
        try:
            digest.update(script.read_bytes())
        except OSError:
            digest.update(b"<missing>")


def tree_hash(digest: Digest, folder: Path) -> None:
    """Feed every file under ``folder`` (names and contents, at most 2000 files) into ``digest``."""
    count = 0
    for walked, dirs, names in os.walk(folder):
        dirs[:] = sorted(d for d in dirs if d not in _TREE_SKIP)
        for name in sorted(names):
            path = Path(walked) / name
            digest.update(b"\0" + str(path.relative_to(folder)).encode() + b"\0")
            try:
                digest.update(path.read_bytes() if not path.is_symlink() else os.readlink(path).encode())
            except OSError:
                digest.update(b"<unreadable>")
            count += 1
            if count >= _MAX_TREE_FILES:
                digest.update(b"<more>")
                return


def referenced_files(words: Iterable[str], base: Path) -> tuple[Path, ...]:
    """The existing files that command words name (``./run.sh``, ``server.js``, ``--config=tools/x.json``)."""
    found: set[Path] = set()
    for word in words:
        text = word.partition("=")[2] if word.startswith("-") else word
        if not text or text.startswith("-"):
            continue
        path = Path(os.path.expanduser(text))
        path = path if path.is_absolute() else base / path
        try:
            if path.is_file():
                found.add(Path(os.path.realpath(path)))
        except OSError:
            continue
    return tuple(sorted(found))


def _canonical(value: Any) -> bytes:
    return json.dumps(value, sort_keys=True, ensure_ascii=False, default=str).encode()


def _server_files(entry: Any, base: Path) -> tuple[Path, ...]:
    if not isinstance(entry, Mapping):
        return ()
    words = [
        str(entry.get("command") or ""),
        *(str(a) for a in entry.get("args") or [] if isinstance(a, str | int | float)),
    ]
    cwd = entry.get("cwd")
    bases = [base]
    if isinstance(cwd, str) and cwd:
        folder = Path(os.path.expanduser(cwd))
        bases.insert(0, folder if folder.is_absolute() else base / folder)
    return tuple(sorted({f for b in bases for f in referenced_files(words, b)}))


def reads_files(key: str) -> bool:
    """Whether the fingerprint of ``key`` covers files besides the value (a server's, a hook's, a plugin's)."""
    return (
        key.split(".", 1)[0] in SERVER_SECTIONS
        or key.startswith("hooks.")
        or key == "plugins.paths"
        or (key.startswith("plugins.entries.") and key.endswith(".path"))
        or key.startswith("plugins.workspace.")
    )


def fingerprint(key: str, value: Any, base: Path) -> str:
    """SHA-256 of a project value as written, and of the files it runs or loads.

    Servers: the entry (command, args, env, cwd ...) and every file its command and arguments name, with the
    files beside them (as hook approvals hash a hook's scripts). Hooks: the entry and its command's scripts.
    Plugin folders: every file in them. Anything else: the value.
    """
    digest = hashlib.sha256(_canonical(value))
    top = key.split(".", 1)[0]
    if top in SERVER_SECTIONS:
        hash_files(digest, _server_files(value, base))
    elif top == "hooks" and isinstance(value, Mapping):
        hash_files(digest, referenced_files(command_words(str(value.get("command") or "")), base))
    elif (
        key == "plugins.paths"
        or (key.startswith("plugins.entries.") and key.endswith(".path"))
        or key.startswith("plugins.workspace.")
    ):
        for item in value if isinstance(value, list) else [value]:
            folder = Path(os.path.expanduser(str(item)))
            tree_hash(digest, folder if folder.is_absolute() else base / folder)
    return digest.hexdigest()


def describe(key: str, value: Any) -> str:
    """``MCP server `x```, ``pre_tool_use hook `./check.sh```, ``policy.sandbox_policy = "danger_full_access"``."""
    parts = split_key(key) if "[" not in key else (key,)
    if parts[0] in _WHAT and len(parts) >= 2:
        return f"{_WHAT[parts[0]]} `{parts[1]}`"
    if parts[0] == "hooks" and len(parts) >= 2 and isinstance(value, Mapping):
        return f"{parts[1]} hook `{value.get('command')}`"
    if key.startswith("plugins.workspace.") and len(parts) >= 3:
        return f"workspace plugin `{parts[2]}`"
    if key.startswith("policy.rules.allow"):
        return f"allow rule `{value}`"
    return f"{key} = {json.dumps(value, ensure_ascii=False, default=str)}"


@dataclass(frozen=True, kw_only=True, slots=True)
class PinnedValue:
    """One project value trust covers: what it is, where it is written and its fingerprint."""

    key: str
    """The key as pending entries name it (``mcp_servers.x``, ``policy.rules.allow[shell.exec(*)]``)."""
    what: str
    """For people: ``MCP server `x```."""
    fingerprint: str
    origin: KeyOrigin
    item: bool = False
    """One item of a list that concatenates across layers (a hook, an allow rule)."""

    @property
    def pin_id(self) -> str:
        """What the trust store files the fingerprint under: the file and the key (list items share one)."""
        return f"{self.origin.file or self.origin.source or self.origin.layer}#{self.key.split('[', 1)[0]}"

    def where(self, workspace: Path) -> str:
        file = self.origin.file
        if file is None:
            return self.origin.where()
        shown, root = str(file), str(workspace)
        if shown == root:
            shown = "."
        elif shown.startswith(root.rstrip("/") + "/"):
            shown = shown[len(root.rstrip("/")) + 1 :]  # what ``relative_to`` gives, without its cost per pin
        return f"{shown}:{self.origin.line}" if self.origin.line else shown


class PinState:
    PINNED = "pinned"
    NEW = "new"
    CHANGED = "changed"
    UNRECORDED = "unrecorded"
    """Trusted before Kairox recorded fingerprints."""


@dataclass(frozen=True, slots=True)
class Pins:
    """The fingerprints recorded for a trusted workspace (and its trusted parents)."""

    recorded: Mapping[str, tuple[str, ...]] | None
    """None when the trust record predates fingerprints: everything it would run waits, once."""

    def state(self, pin: PinnedValue) -> str:
        if self.recorded is None:
            return PinState.UNRECORDED
        known = self.recorded.get(pin.pin_id)
        if known is not None and pin.fingerprint in known:
            return PinState.PINNED
        return PinState.CHANGED if known is not None and not pin.item else PinState.NEW

    def reason(self, pin: PinnedValue, state: str, workspace: Path) -> str:
        where = pin.where(workspace)
        if state == PinState.UNRECORDED:
            return (
                f"{pin.what} in {where}: this workspace was trusted before "
                "Kairox recorded what trust allows; run `kairox trust` to review"
            )
        if state == PinState.CHANGED:
            return f"{pin.what} in {where} changed since this workspace was trusted; run `kairox trust` to review"
        return f"new {pin.what} in {where} since this workspace was trusted; run `kairox trust` to review"


def pins_record(values: Iterable[PinnedValue]) -> dict[str, list[str]]:
    """The trust store's form: fingerprints by pin id."""
    record: dict[str, list[str]] = {}
    for pin in values:
        bucket = record.setdefault(pin.pin_id, [])
        if pin.fingerprint not in bucket:
            bucket.append(pin.fingerprint)
    return {k: sorted(v) for k, v in sorted(record.items())}


def read_mcp_json_entries(path: Path) -> dict[str, tuple[Any, int | None]]:
    """The raw server entries of a ``.mcp.json`` and their lines, for fingerprints (a broken file gives none)."""
    try:
        text = path.read_text(encoding="utf-8")
        document = decode_json(text)  # a hostile file (nested too deep) is no crash: it gives no entries
    except (OSError, UnicodeDecodeError, ValueError, DecodeProblem):
        return {}
    entries = document.get("mcpServers", document) if isinstance(document, dict) else None
    if not isinstance(entries, dict):
        return {}
    lines = text.splitlines()
    found: dict[str, tuple[Any, int | None]] = {}
    for name, entry in entries.items():
        needle = json.dumps(name)
        line = next((n for n, t in enumerate(lines, start=1) if t.lstrip().startswith(needle)), None)
        found[str(name)] = (entry, line)
    return found
