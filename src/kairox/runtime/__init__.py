"""The composition root: ``build_extension_context`` runs the pipeline and returns an ``ExtensionContext``."""

from kairox.runtime._catalog import (
    INSTALL_SPEC,
    DryRunReport,
    DryRunTool,
    InstallOptions,
    InstallOutcome,
    InstallReport,
    dry_run_server,
    install_catalog_entry,
    prefetch_command,
)
from kairox.runtime._context import (
    ExtensionContext,
    PluginStage,
    RuntimeOptions,
    build_extension_context,
    build_hooks,
    load_plugins,
    load_skills,
)
from kairox.runtime._events import (
    CatalogInstallFinished,
    ExtensionContextClosed,
    ExtensionContextReady,
    PluginsLoaded,
    RegistryBuilt,
    SkillsReady,
)
from kairox.runtime._memory import MemoryFile, gather_memory
from kairox.runtime._operations import (
    add_mcp_server,
    restart_mcp_server,
    server_layer_file,
    set_mcp_server_enabled,
    set_mcp_tool_enabled,
    start_mcp_server,
    stop_mcp_server,
)
from kairox.runtime._prompt import render_prompt_context

__all__ = [
    "INSTALL_SPEC",
    "CatalogInstallFinished",
    "DryRunReport",
    "DryRunTool",
    "ExtensionContext",
    "ExtensionContextClosed",
    "ExtensionContextReady",
    "InstallOptions",
    "InstallOutcome",
    "InstallReport",
    "MemoryFile",
    "PluginStage",
    "PluginsLoaded",
    "RegistryBuilt",
    "RuntimeOptions",
    "SkillsReady",
    "add_mcp_server",
    "build_extension_context",
    "build_hooks",
    "dry_run_server",
    "gather_memory",
    "install_catalog_entry",
    "load_plugins",
    "load_skills",
    "prefetch_command",
    "render_prompt_context",
    "restart_mcp_server",
    "server_layer_file",
    "set_mcp_server_enabled",
    "set_mcp_tool_enabled",
    "start_mcp_server",
    "stop_mcp_server",
]
