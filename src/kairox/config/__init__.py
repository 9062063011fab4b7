"""Every setting's model, the layers, merge with provenance, trust, the config writer and the workspace
``.mcp.json`` (C1-C6, C8, M1)."""

from typing import TYPE_CHECKING

from kairox._util._lazy import lazy_exports

if TYPE_CHECKING:
    from kairox.config._display import lookup_value, provenance_lines, value_text
    from kairox.config._keys import join_key, split_key
    from kairox.config._layers import Layer, LayerInfo, LayerStatus, find_workspace, kairox_home
    from kairox.config._mcp_json import MCP_JSON, McpJsonFile, mcp_server_config, read_mcp_json, workspace_mcp_servers
    from kairox.config._merge import KeyOrigin
    from kairox.config._models import (
        AgentConfig,
        CatalogSourceConfig,
        HookConfig,
        HooksConfig,
        InstructionsConfig,
        KairoxConfig,
        McpCatalogConfig,
        ModelProviderConfig,
        PluginEntryConfig,
        PluginsConfig,
        PolicyConfig,
        RulesConfig,
        SkillsConfig,
        ToolsConfig,
    )
    from kairox.config._modes import ApprovalPolicy, SandboxPolicy
    from kairox.config._own_writes import write_own
    from kairox.config._parse_cache import ConfigParseCache
    from kairox.config._pins import PinnedValue, command_words, hash_files, referenced_files
    from kairox.config._redact import REDACTED, is_secret_key, redact_command, redact_tree, redact_urls
    from kairox.config._resolve import (
        PendingTrust,
        PolicyRule,
        ResolvedConfig,
        parse_cli_value,
        resolve_config,
        trust_workspace,
    )
    from kairox.config._scrub import SecretScrubber
    from kairox.config._servers import DapServerConfig, LspServerConfig, McpServerConfig
    from kairox.config._trust import TrustReview, TrustStore
    from kairox.config._trust_gate import STANDARD_INSTRUCTION_FILES
    from kairox.config._writer import append_value, remove_value, set_value, unset_value
    from kairox.errors import ConfigError, TrustError

__all__ = [
    "MCP_JSON",
    "REDACTED",
    "STANDARD_INSTRUCTION_FILES",
    "AgentConfig",
    "ApprovalPolicy",
    "CatalogSourceConfig",
    "ConfigError",
    "ConfigParseCache",
    "DapServerConfig",
    "HookConfig",
    "HooksConfig",
    "InstructionsConfig",
    "KairoxConfig",
    "KeyOrigin",
    "Layer",
    "LayerInfo",
    "LayerStatus",
    "LspServerConfig",
    "McpCatalogConfig",
    "McpJsonFile",
    "McpServerConfig",
    "ModelProviderConfig",
    "PendingTrust",
    "PinnedValue",
    "PluginEntryConfig",
    "PluginsConfig",
    "PolicyConfig",
    "PolicyRule",
    "ResolvedConfig",
    "RulesConfig",
    "SandboxPolicy",
    "SecretScrubber",
    "SkillsConfig",
    "ToolsConfig",
    "TrustError",
    "TrustReview",
    "TrustStore",
    "append_value",
    "command_words",
    "find_workspace",
    "hash_files",
    "is_secret_key",
    "join_key",
    "kairox_home",
    "lookup_value",
    "mcp_server_config",
    "parse_cli_value",
    "provenance_lines",
    "read_mcp_json",
    "redact_command",
    "redact_tree",
    "redact_urls",
    "referenced_files",
    "remove_value",
    "resolve_config",
    "set_value",
    "split_key",
    "trust_workspace",
    "unset_value",
    "value_text",
    "workspace_mcp_servers",
    "write_own",
]

# names load their module when first read: a process that only starts an MCP server imports the models, not
# the resolver, the trust store or the TOML writer
if not TYPE_CHECKING:
    __getattr__, __dir__ = lazy_exports(
        __name__,
        {
            "._keys": ("join_key", "split_key"),
            "._layers": ("Layer", "LayerInfo", "LayerStatus", "find_workspace", "kairox_home"),
            "._mcp_json": ("MCP_JSON", "McpJsonFile", "mcp_server_config", "read_mcp_json", "workspace_mcp_servers"),
            "._merge": ("KeyOrigin",),
            "._models": (
                "AgentConfig",
                "CatalogSourceConfig",
                "HookConfig",
                "HooksConfig",
                "InstructionsConfig",
                "KairoxConfig",
                "McpCatalogConfig",
                "ModelProviderConfig",
                "PluginEntryConfig",
                "PluginsConfig",
                "PolicyConfig",
                "RulesConfig",
                "SkillsConfig",
                "ToolsConfig",
            ),
            "._modes": ("ApprovalPolicy", "SandboxPolicy"),
            "._own_writes": ("write_own",),
            "._parse_cache": ("ConfigParseCache",),
            "._pins": ("PinnedValue", "command_words", "hash_files", "referenced_files"),
            "._display": ("lookup_value", "provenance_lines", "value_text"),
            "._scrub": ("SecretScrubber",),
            "._redact": ("REDACTED", "is_secret_key", "redact_command", "redact_tree", "redact_urls"),
            "._resolve": (
                "PendingTrust",
                "PolicyRule",
                "ResolvedConfig",
                "parse_cli_value",
                "resolve_config",
                "trust_workspace",
            ),
            "._servers": ("DapServerConfig", "LspServerConfig", "McpServerConfig"),
            "._trust": ("TrustReview", "TrustStore"),
            "._trust_gate": ("STANDARD_INSTRUCTION_FILES",),
            "._writer": ("append_value", "remove_value", "set_value", "unset_value"),
            "kairox.errors": ("ConfigError", "TrustError"),
        },
    )
