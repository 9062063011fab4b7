"""``PluginManifestView``: the flat inventory settings pages, the marketplace and ``validate`` show (P4)."""

from dataclasses import dataclass, field

from kairox.errors import Diagnostic
from kairox.plugins._compat import CompatibilityVerdict
from kairox.plugins._model import Contribution, Plugin


@dataclass(frozen=True, kw_only=True, slots=True)
class PluginManifestView:
    name: str
    version: str | None
    description: str | None
    path: str
    manifest: str | None
    """The authoritative manifest file (``None`` for a layout-only folder or a marketplace entry)."""
    manifest_format: str
    other_manifests: tuple[str, ...]
    origin: str
    marketplace: str | None
    publisher: str | None
    homepage: str | None
    trust: str
    enabled: bool
    active: bool
    """Enabled and compatible: its contributions are loaded."""
    disabled_reason: str | None
    permissions: dict[str, object]
    compatibility: CompatibilityVerdict
    contributions: tuple[Contribution, ...]
    diagnostics: tuple[Diagnostic, ...] = field(default=())

    @classmethod
    def of(cls, plugin: Plugin) -> "PluginManifestView":
        manifest = plugin.manifest
        reason = plugin.disabled_reason
        if reason is None and not plugin.compatibility.compatible:
            reason = "incompatible: " + "; ".join(plugin.compatibility.reasons)
        return cls(
            name=plugin.name,
            version=plugin.version,
            description=manifest.description,
            path=str(plugin.root),
            manifest=str(plugin.manifest_path) if plugin.manifest_path else None,
            manifest_format=plugin.manifest_format,
            other_manifests=tuple(str(p) for p in plugin.other_manifests),
            origin=str(plugin.origin),
            marketplace=plugin.marketplace,
            publisher=manifest.publisher_name,
            homepage=manifest.homepage,
            trust=str(plugin.trust),
            enabled=plugin.enabled,
            active=plugin.active,
            disabled_reason=reason,
            permissions=plugin.permissions.model_dump(by_alias=True, exclude_none=True, mode="json"),
            compatibility=plugin.compatibility,
            contributions=plugin.contributions(),
            diagnostics=plugin.diagnostics,
        )

    def to_json(self) -> dict[str, object]:
        """The shape of ``kairox plugins validate --json`` (plus the settings-page fields)."""
        return {
            "name": self.name,
            "version": self.version,
            "description": self.description,
            "path": self.path,
            "manifest": self.manifest,
            "manifest_format": self.manifest_format,
            "other_manifests": list(self.other_manifests),
            "origin": self.origin,
            "marketplace": self.marketplace,
            "publisher": self.publisher,
            "homepage": self.homepage,
            "trust": self.trust,
            "enabled": self.enabled,
            "active": self.active,
            "disabled_reason": self.disabled_reason,
            "permissions": self.permissions,
            "compatibility": self.compatibility.to_json(),
            "contributions": [{"kind": str(c.kind), "name": c.name, "enabled": c.enabled} for c in self.contributions],
        }


def diagnostic_json(diagnostic: Diagnostic) -> dict[str, object]:
    """``{"path", "severity", "reason"}`` plus the rest of the record, for ``--json`` output."""
    return {
        "path": diagnostic.source,
        "severity": str(diagnostic.severity),
        "reason": diagnostic.reason,
        "kind": diagnostic.kind,
        "name": diagnostic.name,
        "line": diagnostic.line,
        "hint": diagnostic.hint,
    }
