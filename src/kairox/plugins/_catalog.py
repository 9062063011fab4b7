"""Marketplace files: Claude Code's ``.claude-plugin/marketplace.json`` (and Codex's ``.agents/plugins``)."""

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kairox.errors import Diagnostic, ExtensionLoadFailure, Severity
from kairox.plugins._manifest import read_json

MARKETPLACE_FILES = (".claude-plugin/marketplace.json", ".agents/plugins/marketplace.json")

_SAFE_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")
"""Marketplace and plugin names become folder names under ``$KAIROX_HOME/plugins``: at most 64 characters."""


@dataclass(frozen=True, kw_only=True, slots=True)
class PluginSource:
    """Where a marketplace entry's files come from."""

    kind: str
    """``path`` (relative to the marketplace), ``git`` (a repository, maybe a sub-folder) or ``folder`` (absolute)."""
    location: str
    subdir: str | None = None
    ref: str | None = None
    sha: str | None = None

    def describe(self) -> str:
        text = self.location
        if self.subdir:
            text += f" ({self.subdir})"
        if self.ref or self.sha:
            text += f" @ {self.sha or self.ref}"
        return text


@dataclass(frozen=True, kw_only=True, slots=True)
class MarketplaceEntry:
    name: str
    source: PluginSource
    version: str | None = None
    description: str | None = None
    strict: bool = True
    """``False``: the entry itself is the manifest (the plugin folder may have none)."""
    raw: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, kw_only=True, slots=True)
class Marketplace:
    name: str
    root: Path
    """The folder the relative sources are resolved against."""
    file: Path
    owner: str | None = None
    entries: tuple[MarketplaceEntry, ...] = ()

    def find(self, plugin: str) -> MarketplaceEntry | None:
        return next((e for e in self.entries if e.name == plugin), None)


def _is_git_url(text: str) -> bool:
    return text.startswith(("http://", "https://", "git@", "ssh://", "git://", "file://")) or text.endswith(".git")


def parse_source(raw: Any) -> PluginSource | None:
    if isinstance(raw, str):
        if _is_git_url(raw):
            return PluginSource(kind="git", location=raw)
        if raw.startswith("/"):
            return PluginSource(kind="folder", location=raw)
        return PluginSource(kind="path", location=raw)
    if not isinstance(raw, dict):
        return None
    kind = raw.get("source")
    ref, sha = raw.get("ref"), raw.get("sha")
    if kind == "github" and isinstance(raw.get("repo"), str):
        return PluginSource(kind="git", location=f"https://github.com/{raw['repo']}.git", ref=ref, sha=sha)
    if kind in ("url", "git") and isinstance(raw.get("url"), str):
        url = raw["url"]
        return parse_source(url) if not _is_git_url(url) else PluginSource(kind="git", location=url, ref=ref, sha=sha)
    if kind == "git-subdir" and isinstance(raw.get("url"), str) and isinstance(raw.get("path"), str):
        return PluginSource(kind="git", location=raw["url"], subdir=raw["path"], ref=ref, sha=sha)
    if kind in ("local", "path", "directory") and isinstance(raw.get("path"), str):
        return parse_source(raw["path"])
    return None


def find_marketplace_file(root: Path) -> Path | None:
    return next((root / f for f in MARKETPLACE_FILES if (root / f).is_file()), None)


def read_marketplace(file: Path) -> tuple[Marketplace | None, list[Diagnostic]]:
    """Parse a marketplace file; a broken entry is a diagnostic and the others stay."""
    data, problem = read_json(file)
    if problem is not None:
        return None, [problem]
    root = file.parent.parent if file.parent.name == ".claude-plugin" else file.parent.parent.parent
    if not isinstance(data, dict) or not isinstance(data.get("name"), str) or not isinstance(data.get("plugins"), list):
        reason = 'a marketplace must be an object with "name" (a string) and "plugins" (a list)'
        return None, [ExtensionLoadFailure(kind="marketplace", name=file.name, reason=reason, source=str(file))]
    if not _SAFE_NAME.match(data["name"]):
        reason = f"marketplace name {data['name']!r} may only hold letters, digits, '.', '_' and '-' (at most 64)"
        return None, [ExtensionLoadFailure(kind="marketplace", name=file.name, reason=reason, source=str(file))]
    diagnostics: list[Diagnostic] = []
    entries: list[MarketplaceEntry] = []
    for index, raw in enumerate(data["plugins"]):
        name = raw.get("name") if isinstance(raw, dict) else None
        if not isinstance(name, str) or not name:
            diagnostics.append(
                ExtensionLoadFailure(
                    kind="marketplace", name=data["name"], reason=f"plugins[{index}] has no name", source=str(file)
                )
            )
            continue
        if not _SAFE_NAME.match(name):
            reason = f"plugins[{index}] name {name!r} may only hold letters, digits, '.', '_' and '-' (at most 64)"
            diagnostics.append(
                ExtensionLoadFailure(kind="marketplace", name=data["name"], reason=reason, source=str(file))
            )
            continue
        source = parse_source(raw.get("source"))
        if source is None:
            diagnostics.append(
                ExtensionLoadFailure(
                    kind="marketplace",
                    name=name,
                    reason=f"plugins[{index}] has a source Kairox cannot read: {raw.get('source')!r}",
                    source=str(file),
                )
            )
            continue
        version = raw.get("version") if isinstance(raw.get("version"), str) else None
        entries.append(
            MarketplaceEntry(
                name=name,
                source=source,
                version=version,
                description=raw.get("description") if isinstance(raw.get("description"), str) else None,
                strict=raw.get("strict") is not False,
                raw=raw,
            )
        )
    owner = data.get("owner")
    owner_name = owner.get("name") if isinstance(owner, dict) else owner if isinstance(owner, str) else None
    if not entries and not diagnostics:
        diagnostics.append(
            Diagnostic(
                kind="marketplace",
                name=data["name"],
                reason="lists no plugins",
                source=str(file),
                severity=Severity.INFO,
            )
        )
    return Marketplace(name=data["name"], root=root, file=file, owner=owner_name, entries=tuple(entries)), diagnostics
