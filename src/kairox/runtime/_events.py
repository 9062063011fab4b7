"""Events of the extension pipeline: each stage says when it is done, so a trace shows the order."""

from dataclasses import dataclass

from kairox.events import Event


@dataclass(frozen=True, kw_only=True, slots=True)
class PluginsLoaded(Event):
    active: tuple[str, ...]
    """Enabled, compatible plugins whose contributions are routed."""
    found: int
    diagnostics: int


@dataclass(frozen=True, kw_only=True, slots=True)
class SkillsReady(Event):
    offered: int
    """Skills the model is offered (enabled, trusted, not shadowed)."""
    total: int


@dataclass(frozen=True, kw_only=True, slots=True)
class RegistryBuilt(Event):
    tools: int
    """Tools the model may see."""
    sources: dict[str, int]
    """Visible tools per source (builtin, mcp, plugin, skill, lsp, dap)."""


@dataclass(frozen=True, kw_only=True, slots=True)
class ExtensionContextReady(Event):
    tools: int
    diagnostics: int
    prompt_chars: int


@dataclass(frozen=True, kw_only=True, slots=True)
class ExtensionContextClosed(Event):
    workspace: str


@dataclass(frozen=True, kw_only=True, slots=True)
class CatalogInstallFinished(Event):
    """``kairox mcp catalog install`` (or a front end's install) ended: what was written, and why not."""

    entry: str
    version: str
    server: str
    file: str
    outcome: str
    """``installed``, ``written_disabled``, ``not_ready``, ``preflight_failed``, ``denied`` or ``exists``."""
    tools: int = 0
    reason: str | None = None
