"""Which MCP servers a workspace has, from ``kairox.toml`` layers and the workspace ``.mcp.json``."""

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kairox.config import McpJsonFile, McpServerConfig, ResolvedConfig, join_key, redact_tree, workspace_mcp_servers
from kairox.errors import Diagnostic
from kairox.sandbox import ServerProfile, resolved_profile, server_profile

if TYPE_CHECKING:
    from kairox.sandbox import SandboxSettings, ServerConfinement


@dataclass(frozen=True, kw_only=True, slots=True)
class ConfiguredServer:
    name: str
    config: McpServerConfig
    layer: str
    """``user``, ``project``, ``local``, ``cli`` ..., or ``.mcp.json`` / ``plugin:<name>``."""
    where: str | None
    """``file:line`` that defines it."""
    pending_trust: bool
    base_dir: Path
    profile: ServerProfile | None = None
    """The sandbox profile it runs under (a stdio server), after what its source may not set was clamped."""

    def to_json(self) -> dict[str, Any]:
        """The entry as shown to people and pipes: secrets in args and url redacted like ``config show``."""
        shown: dict[str, Any] = redact_tree(
            {
                "name": self.name,
                "transport": self.config.transport,
                "enabled": self.config.enabled,
                "required": self.config.required,
                "trust": "pending" if self.pending_trust else "trusted",
                "layer": self.layer,
                "source": self.where,
                "command": self.config.command,
                "args": list(self.config.args),
                "url": self.config.url,
            }
        )
        if self.profile is not None:
            shown["profile"] = self.profile.to_json()
        return shown


def configured_servers(
    resolved: ResolvedConfig, *, extra: tuple[McpJsonFile, ...] = ()
) -> tuple[dict[str, ConfiguredServer], tuple[Diagnostic, ...]]:
    """Every server: ``[mcp_servers]`` of the resolved layers first, then ``.mcp.json`` entries not defined there.

    A workspace ``.mcp.json`` is a project file: its servers wait for trust like project-layer ones.
    ``extra`` adds other files (a plugin's ``.mcp.json``), lowest precedence, with their own source label.
    """
    servers: dict[str, ConfiguredServer] = {}
    for name, config in resolved.config.mcp_servers.items():
        key = join_key(["mcp_servers", name])
        origin = resolved.origin(key)
        layer = str(origin.layer) if origin is not None else "default"
        where = origin.where() if origin is not None else None
        servers[name] = ConfiguredServer(
            name=name,
            config=config,
            layer=layer,
            where=where,
            pending_trust=resolved.is_pending(key),
            base_dir=resolved.base_dir(key),
            profile=_profile(resolved, name, config, layer, where, resolved.base_dir(key)),
        )
    diagnostics: list[Diagnostic] = []
    workspace_file = workspace_mcp_servers(resolved.workspace)
    for file in (workspace_file, *extra):
        # the workspace file is a project file: untrusted, or (trusted) not pinned by trust, it waits
        untrusted = file is workspace_file and not resolved.trusted
        diagnostics.extend(file.diagnostics)
        for name, config in file.servers.items():
            if name in servers:
                continue
            line = file.lines.get(name)
            layer = file.path.name if file.source == str(file.path) else file.source
            where = f"{file.path}:{line}" if line else str(file.path)
            servers[name] = ConfiguredServer(
                name=name,
                config=config,
                layer=layer,
                where=where,
                profile=_profile(resolved, name, config, layer, where, file.path.parent),
                pending_trust=untrusted
                or (file is workspace_file and resolved.is_pending(join_key(["mcp_servers", name]))),
                base_dir=file.path.parent,
            )
    return servers, tuple(diagnostics)


def _profile(
    resolved: ResolvedConfig, name: str, config: McpServerConfig, layer: str, where: str | None, base: Path
) -> ServerProfile | None:
    if config.transport != "stdio":
        return None
    return resolved_profile(resolved, "mcp_servers", name, config, layer=layer, where=where, base_dir=base)


def server_confiner(
    servers: Mapping[str, ConfiguredServer], *, sandbox: "SandboxSettings | None", workspace: Path, home: Path | None
) -> "Callable[[str, McpServerConfig], ServerConfinement | None]":
    """For the manager: the confinement of each stdio server by name. A server added later (a catalog install)
    that the configuration did not have counts as a project's: it runs confined, and never unconfined without a
    sandbox. Without ``sandbox`` (the policy's settings) nothing is confined."""
    from kairox.config import kairox_home
    from kairox.sandbox import ServerConfinement

    root = home or kairox_home()

    def confine(name: str, config: McpServerConfig) -> "ServerConfinement | None":
        if sandbox is None:
            return None
        known = servers.get(name)
        profile = known.profile if known is not None and known.config is config else None
        if profile is None:
            base = known.base_dir if known is not None else workspace
            profile = server_profile(
                "mcp_servers",
                name,
                config,
                layer="added",
                where=None,
                base_dir=base,
                workspace=workspace,
                home=root,
                session_domains=sandbox.allowed_domains,
            )
        return ServerConfinement(profile=profile, sandbox=sandbox, home=root, workspace=workspace)

    return confine
