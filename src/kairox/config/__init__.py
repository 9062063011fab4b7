"""Every setting's model, the layers, merge with provenance, trust, the config writer and the workspace
``.mcp.json`` (C1-C6, C8, M1)."""

from typing import TYPE_CHECKING

from kairox._util._lazy import lazy_exports

if TYPE_CHECKING:
    from kairox.config._display import lookup_value, provenance_lines, value_text
    from kairox.config._keys import join_key, split_key
    from kairox.config._layers import Layer, find_workspace, kairox_home
    from kairox.config._mcp_json import MCP_JSON, McpJsonFile, mcp_server_config, workspace_mcp_servers
    from kairox.config._merge import KeyOrigin
    from kairox.config._models import (
        AgentConfig,
        HooksConfig,
        InstructionsConfig,
        KairoxConfig,
        ModelProviderConfig,
        PolicyConfig,
        RulesConfig,
        SkillsConfig,
        ToolsConfig,
    )
    from kairox.config._modes import ApprovalPolicy, SandboxPolicy
    from kairox.config._own_writes import write_own
    from kairox.config._pins import hash_files
    from kairox.config._redact import REDACTED, command_words, is_secret_key, redact_command, redact_tree, redact_urls
    from kairox.config._resolve import ResolvedConfig, parse_cli_value, resolve_config, trust_workspace
    from kairox.config._scrub import SecretScrubber
    from kairox.config._servers import DapServerConfig, LspServerConfig, McpServerConfig
    from kairox.config._trust import TrustStore
    from kairox.config._writer import append_value, remove_value, set_value, unset_value

__all__ = [
    "MCP_JSON",
    "REDACTED",
    "AgentConfig",
    "ApprovalPolicy",
    "DapServerConfig",
    "HooksConfig",
    "InstructionsConfig",
    "KairoxConfig",
    "KeyOrigin",
    "Layer",
    "LspServerConfig",
    "McpJsonFile",
    "McpServerConfig",
    "ModelProviderConfig",
    "PolicyConfig",
    "ResolvedConfig",
    "RulesConfig",
    "SandboxPolicy",
    "SecretScrubber",
    "SkillsConfig",
    "ToolsConfig",
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
    "redact_command",
    "redact_tree",
    "redact_urls",
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
            "._layers": ("Layer", "find_workspace", "kairox_home"),
            "._mcp_json": ("MCP_JSON", "McpJsonFile", "mcp_server_config", "workspace_mcp_servers"),
            "._merge": ("KeyOrigin",),
            "._models": (
                "AgentConfig",
                "HooksConfig",
                "InstructionsConfig",
                "KairoxConfig",
                "ModelProviderConfig",
                "PolicyConfig",
                "RulesConfig",
                "SkillsConfig",
                "ToolsConfig",
            ),
            "._modes": ("ApprovalPolicy", "SandboxPolicy"),
            "._own_writes": ("write_own",),
            "._pins": ("hash_files",),
            "._display": ("lookup_value", "provenance_lines", "value_text"),
            "._scrub": ("SecretScrubber",),
            "._redact": ("REDACTED", "command_words", "is_secret_key", "redact_command", "redact_tree", "redact_urls"),
            "._resolve": ("ResolvedConfig", "parse_cli_value", "resolve_config", "trust_workspace"),
            "._servers": ("DapServerConfig", "LspServerConfig", "McpServerConfig"),
            "._trust": ("TrustStore",),
            "._writer": ("append_value", "remove_value", "set_value", "unset_value"),
        },
    )
