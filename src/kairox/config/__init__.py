"""Every setting's model, the layers, merge with provenance, trust and the config writer (C1-C6, C8)."""

from kairox.config._models import (
    ApprovalPolicy,
    DapServerConfig,
    HookConfig,
    HooksConfig,
    InstructionsConfig,
    KairoxConfig,
    LspServerConfig,
    McpServerConfig,
    PluginEntryConfig,
    PluginsConfig,
    PolicyConfig,
    RulesConfig,
    SandboxPolicy,
    SkillsConfig,
    ToolsConfig,
)

__all__ = [
    "ApprovalPolicy",
    "DapServerConfig",
    "HookConfig",
    "HooksConfig",
    "InstructionsConfig",
    "KairoxConfig",
    "LspServerConfig",
    "McpServerConfig",
    "PluginEntryConfig",
    "PluginsConfig",
    "PolicyConfig",
    "RulesConfig",
    "SandboxPolicy",
    "SkillsConfig",
    "ToolsConfig",
]
