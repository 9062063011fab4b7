"""Which MCP servers a workspace has, from ``kairox.toml`` layers and the workspace ``.mcp.json``."""

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kairox.config import (
    McpJsonFile,
    McpServerConfig,
    ResolvedConfig,
    join_key,
    redact_tree,
    workspace_mcp_servers,
)
from kairox.errors import Diagnostic


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

    def to_json(self) -> dict[str, Any]:
        """The entry as shown to people and pipes: secrets in args and url redacted like ``config show``."""
        shown: dict[str, Any] = redact_tree({
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
        })
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
        servers[name] = ConfiguredServer(
            name=name,
            config=config,
            layer=str(origin.layer) if origin is not None else "default",
            where=origin.where() if origin is not None else None,
            pending_trust=resolved.is_pending(key),
            base_dir=resolved.base_dir(key),
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
            servers[name] = ConfiguredServer(
                name=name,
                config=config,
                layer=file.path.name if file.source == str(file.path) else file.source,
                where=f"{file.path}:{line}" if line else str(file.path),
                pending_trust=untrusted or (file is workspace_file and resolved.is_pending(join_key(["mcp_servers", name]))),
                base_dir=file.path.parent,
            )
    return servers, tuple(diagnostics)
