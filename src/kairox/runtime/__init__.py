"""The composition root: ``build_extension_context`` runs the pipeline and returns an ``ExtensionContext``."""

from typing import TYPE_CHECKING

from kairox._util._lazy import lazy_exports

if TYPE_CHECKING:
    from kairox.runtime._agents import AgentDef, AgentSet, load_agents
    from kairox.runtime._approvals import ApprovalChoice, ApprovalScope, approval_choices, link_notes
    from kairox.runtime._catalog import (
        INSTALL_SPEC,
        InstallOptions,
        InstallOutcome,
        InstallStage,
        InstallStep,
        install_catalog_entry,
    )
    from kairox.runtime._commands import SlashCommand, extension_commands
    from kairox.runtime._context import (
        ExtensionContext,
        RuntimeOptions,
        build_extension_context,
        build_hooks,
        load_plugins,
        load_skills,
    )
    from kairox.runtime._doctor import doctor_lines, doctor_report
    from kairox.runtime._operations import (
        add_mcp_server,
        restart_lsp_server,
        restart_mcp_server,
        server_layer_file,
        set_dap_server_enabled,
        set_lsp_server_enabled,
        set_mcp_server_enabled,
        set_mcp_tool_enabled,
    )
    from kairox.runtime._plugin_install import PLUGIN_INSTALL_SPEC, plugin_install_gate
    from kairox.runtime._plugin_market import (
        inspect_market_plugin,
        install_market_plugin,
        market_listing,
        marketplaces_of,
    )
    from kairox.runtime._servers import ServerBoard, ServerView, configured_views, held_text, manager_offered_counts
    from kairox.runtime._toggles import (
        CONFIG_WRITE_TOOL,
        ConfigWriteDeniedError,
        ToggleRow,
        agent_rows,
        authorize_config_write,
        plugin_rows,
        set_plugin_folder,
        skill_file,
        skill_rows,
        toggle_agent,
        toggle_plugin,
        toggle_skill,
    )

__all__ = [
    "CONFIG_WRITE_TOOL",
    "INSTALL_SPEC",
    "PLUGIN_INSTALL_SPEC",
    "AgentDef",
    "AgentSet",
    "ApprovalChoice",
    "ApprovalScope",
    "ConfigWriteDeniedError",
    "ExtensionContext",
    "InstallOptions",
    "InstallOutcome",
    "InstallStage",
    "InstallStep",
    "RuntimeOptions",
    "ServerBoard",
    "ServerView",
    "SlashCommand",
    "ToggleRow",
    "add_mcp_server",
    "agent_rows",
    "approval_choices",
    "authorize_config_write",
    "build_extension_context",
    "build_hooks",
    "configured_views",
    "doctor_lines",
    "doctor_report",
    "extension_commands",
    "held_text",
    "inspect_market_plugin",
    "install_catalog_entry",
    "install_market_plugin",
    "link_notes",
    "load_agents",
    "load_plugins",
    "load_skills",
    "manager_offered_counts",
    "market_listing",
    "marketplaces_of",
    "plugin_install_gate",
    "plugin_rows",
    "restart_lsp_server",
    "restart_mcp_server",
    "server_layer_file",
    "set_dap_server_enabled",
    "set_lsp_server_enabled",
    "set_mcp_server_enabled",
    "set_mcp_tool_enabled",
    "set_plugin_folder",
    "skill_file",
    "skill_rows",
    "toggle_agent",
    "toggle_plugin",
    "toggle_skill",
]

# names load their module when first read: a session needs the pipeline, not the catalog installer or the toggles
if not TYPE_CHECKING:
    __getattr__, __dir__ = lazy_exports(
        __name__,
        {
            "._agents": ("AgentDef", "AgentSet", "load_agents"),
            "._approvals": ("ApprovalChoice", "ApprovalScope", "approval_choices", "link_notes"),
            "._commands": ("SlashCommand", "extension_commands"),
            "._plugin_install": ("PLUGIN_INSTALL_SPEC", "plugin_install_gate"),
            "._catalog": (
                "INSTALL_SPEC",
                "InstallOptions",
                "InstallOutcome",
                "InstallStage",
                "InstallStep",
                "install_catalog_entry",
            ),
            "._context": (
                "ExtensionContext",
                "RuntimeOptions",
                "build_extension_context",
                "build_hooks",
                "load_plugins",
                "load_skills",
            ),
            "._doctor": ("doctor_lines", "doctor_report"),
            "._operations": (
                "add_mcp_server",
                "restart_lsp_server",
                "restart_mcp_server",
                "server_layer_file",
                "set_dap_server_enabled",
                "set_lsp_server_enabled",
                "set_mcp_server_enabled",
                "set_mcp_tool_enabled",
            ),
            "._plugin_market": ("inspect_market_plugin", "install_market_plugin", "market_listing", "marketplaces_of"),
            "._servers": ("ServerBoard", "ServerView", "configured_views", "held_text", "manager_offered_counts"),
            "._toggles": (
                "CONFIG_WRITE_TOOL",
                "ConfigWriteDeniedError",
                "ToggleRow",
                "agent_rows",
                "authorize_config_write",
                "plugin_rows",
                "set_plugin_folder",
                "skill_file",
                "skill_rows",
                "toggle_agent",
                "toggle_plugin",
                "toggle_skill",
            ),
        },
    )
