"""The plugin manifest: Kairox's fields plus what Claude Code and Codex plugins carry (P2).

Unknown fields warn; a known field of the wrong type fails the plugin that carries it, never the others.
"""

import enum
import json
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from kairox._util._decode import DecodeProblem, decode_json
from kairox.config import ApprovalPolicy, SandboxPolicy
from kairox.errors import Diagnostic, ExtensionLoadFailure, Severity

MANIFEST_DIRS = (".kairox-plugin", ".codex-plugin", ".claude-plugin")
"""Manifest folders in resolution order: the first one holding ``plugin.json`` is authoritative."""

MANIFEST_FORMATS = {".kairox-plugin": "kairox", ".codex-plugin": "codex", ".claude-plugin": "claude"}


class TrustLevel(enum.StrEnum):
    """Who stands behind a plugin. Only ``local`` plugins run hooks without the user's approval."""

    OFFICIAL = "official"
    VERIFIED = "verified"
    COMMUNITY = "community"
    LOCAL = "local"
    """A folder the user put there themselves (workspace, ``[plugins] paths``, a validated tree)."""

    @property
    def vouched(self) -> bool:
        """Someone the user can name stands behind it: every level but ``community``."""
        return self is not TrustLevel.COMMUNITY


class _Lenient(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True, populate_by_name=True)


class Author(_Lenient):
    name: str = ""
    email: str | None = None
    url: str | None = None

    def __str__(self) -> str:
        return f"{self.name} <{self.email}>" if self.email else self.name


class PluginPermissions(_Lenient):
    """What the plugin asks for. It can only narrow the user's policy (see ``narrow_policy``)."""

    approval_policy: ApprovalPolicy | None = Field(default=None, alias="approvalPolicy")
    sandbox_policy: SandboxPolicy | None = Field(default=None, alias="sandboxPolicy")
    network_access: bool | None = Field(default=None, alias="networkAccess")
    tools: list[str] | None = None
    """Tools the plugin's skills and commands may use; ``None`` leaves the user's list as it is."""

    @field_validator("approval_policy", "sandbox_policy", mode="before")
    @classmethod
    def _snake_case(cls, value: object) -> object:
        # Codex writes "workspace-write" and "on-request"
        return value.strip().lower().replace("-", "_") if isinstance(value, str) else value


class Compatibility(_Lenient):
    kairox_version: str | None = Field(default=None, alias="kairoxVersion")
    platforms: list[str] | None = None
    requires: list[str] | None = None


class ToolDeclaration(_Lenient):
    """A Kairox command tool: the command gets the arguments as JSON on stdin and prints the result."""

    name: str = Field(min_length=1)
    description: str = ""
    input_schema: dict[str, Any] = Field(default_factory=lambda: {"type": "object"}, alias="inputSchema")
    command: str = Field(min_length=1)
    args: list[str] = Field(default_factory=list)
    env: dict[str, str] = Field(default_factory=dict)
    timeout_sec: float | None = Field(default=None, alias="timeoutSec", gt=0)
    path_args: list[str] = Field(default_factory=list, alias="pathArgs")
    """Arguments holding file paths (checked against the sandbox roots by the policy)."""


class HookDeclaration(_Lenient):
    """The Kairox list form: ``{"event": "pre_turn", "script": "./hooks/x.js", "matcher": "fs.*"}``."""

    event: str
    command: str | None = None
    script: str | None = None
    matcher: str | None = None
    timeout: float | None = Field(default=None, gt=0)


class PluginManifest(BaseModel):
    """``plugin.json``. Field names follow the JSON (camelCase); Python names are snake_case."""

    model_config = ConfigDict(extra="allow", frozen=True, populate_by_name=True)

    name: str | None = None
    version: str | None = None
    description: str | None = None
    homepage: str | None = None
    repository: str | dict[str, Any] | None = None
    license: str | None = None
    keywords: list[str] = Field(default_factory=list)
    author: Author | str | None = None
    publisher: Author | str | None = None
    skills: str | list[str] | None = None
    commands: str | list[str] | None = None
    agents: str | list[str] | None = None
    tools: list[ToolDeclaration] = Field(default_factory=list)
    mcp_servers: str | dict[str, Any] | None = Field(default=None, alias="mcpServers")
    lsp_servers: str | dict[str, Any] | None = Field(default=None, alias="lspServers")
    hooks: str | list[HookDeclaration] | dict[str, Any] | None = None
    permissions: PluginPermissions | None = None
    compatibility: Compatibility | None = None
    trust: TrustLevel | None = None

    @property
    def publisher_name(self) -> str | None:
        for who in (self.publisher, self.author):
            if who:
                return str(who)
        return None


KNOWN_FOREIGN_FIELDS = frozenset(
    {
        "$schema",
        "displayName",
        "interface",
        "category",
        "tags",
        "strict",
        "outputStyles",
        "source",
        "sessionStart",
        "skillInstructions",
        "apps",
        "id",
        "icon",
        "engines",
        "contributors",
        "userConfig",
        "channels",
        "settings",
        "dependencies",
    }
)
"""Fields other hosts define that Kairox reads past without a warning."""


def read_json(path: Path, *, name: str | None = None) -> tuple[Any, Diagnostic | None]:
    """The decoded JSON of ``path``, or a diagnostic (named ``name``, default the file's name) saying why not."""
    name = name or path.name
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        return None, ExtensionLoadFailure(kind="plugin", name=name, reason=f"cannot read: {exc}", source=str(path))
    try:
        return decode_json(text), None
    except DecodeProblem as exc:
        return None, ExtensionLoadFailure(
            kind="plugin",
            name=name,
            reason=f"not valid JSON: {exc}",
            source=str(path),
            line=exc.line,
            hint="fix the JSON at that line",
        )


def field_line(path: Path, field: str) -> int | None:
    """The line of ``path`` where the JSON key ``field`` is first written (None when it cannot be told)."""
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    found = text.find(json.dumps(field))
    return text.count("\n", 0, found) + 1 if found >= 0 else None


def _location(loc: tuple[int | str, ...]) -> str:
    return ".".join(str(part) for part in loc) or "(root)"


def parse_manifest(data: Any, *, source: Path, plugin: str) -> tuple[PluginManifest | None, list[Diagnostic]]:
    """Validate a decoded ``plugin.json``; wrong types fail (one error naming every field), unknown fields warn."""
    if not isinstance(data, dict):
        return None, [
            ExtensionLoadFailure(
                kind="plugin",
                name=plugin,
                reason=f"the manifest must be a JSON object, not {type(data).__name__}",
                source=str(source),
            )
        ]
    try:
        manifest = PluginManifest.model_validate(data)
    except ValidationError as exc:
        errors = exc.errors()
        problems = "; ".join(f"{_location(e['loc'])}: {e['msg']}" for e in errors)
        first = str(errors[0]["loc"][0]) if errors and errors[0]["loc"] else None
        return None, [
            ExtensionLoadFailure(
                kind="plugin",
                name=str(data.get("name") or plugin),
                reason=f"manifest fields have the wrong type: {problems}",
                source=str(source),
                line=field_line(source, first) if first else None,
                hint="fix those fields; the other plugins still load",
            )
        ]
    diagnostics: list[Diagnostic] = []
    for key in sorted(manifest.model_extra or {}):
        if key in KNOWN_FOREIGN_FIELDS:
            continue
        diagnostics.append(
            Diagnostic(
                kind="plugin",
                name=manifest.name or plugin,
                reason=f"unknown manifest field {key!r} is ignored",
                severity=Severity.WARNING,
                source=str(source),
            )
        )
    return manifest, diagnostics
