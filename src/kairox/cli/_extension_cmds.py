"""Registers the command groups of the feature packages. Each group's module imports its feature lazily."""

import importlib

import typer

# (module, attribute holding a typer.Typer, group name, help)
_GROUPS: list[tuple[str, str, str, str]] = [
    ("kairox.cli._skills_cmds", "skills_app", "skills", "List, match, enable, install and validate skills."),
    ("kairox.cli._tools_cmds", "tools_app", "tools", "List and call tools through the permission gate."),
    ("kairox.cli._tools_cmds", "policy_app", "policy", "Ask the permission policy what it would decide."),
    ("kairox.cli._plugins_cmds", "plugins_app", "plugins", "List, inspect, enable, install and validate plugins."),
    ("kairox.cli._plugins_cmds", "hooks_app", "hooks", "List and approve hooks."),
    ("kairox.cli._mcp_cmds", "mcp_app", "mcp", "MCP servers: list, status, tools, call, add, remove."),
    ("kairox.cli._lsp_cmds", "lsp_app", "lsp", "Language servers: status of the configured ones."),
    ("kairox.cli._lsp_cmds", "dap_app", "dap", "Debug adapters and debug sessions."),
    ("kairox.cli._agents_cmds", "agents_app", "agents", "Subagents: list and show the agents the task tool starts."),
]


def register(app: typer.Typer) -> None:
    for module_name, attribute, name, help_text in _GROUPS:
        module = importlib.import_module(module_name)
        app.add_typer(getattr(module, attribute), name=name, help=help_text)
