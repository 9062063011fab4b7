"""The tool model (R1), the ToolProvider interface, the hook interface, and the built-in tools (R6)."""

from typing import TYPE_CHECKING

from kairox._util._lazy import lazy_exports

if TYPE_CHECKING:
    from kairox.sandbox import SandboxSettings
    from kairox.tools._builtin import BUILTIN_SPECS, BuiltinSettings, BuiltinToolProvider, ToolHost
    from kairox.tools._builtin_shell import HostCommand
    from kairox.tools._gitignore import walk_files
    from kairox.tools._model import (
        Access,
        AudioContent,
        CallContext,
        Confinement,
        Content,
        EmbeddedResource,
        ImageContent,
        PermissionProfile,
        ProgramArgs,
        ProgressCallback,
        ResourceLink,
        TextContent,
        ToolAnnotations,
        ToolCall,
        ToolResult,
        ToolSource,
        ToolSpec,
        object_schema,
    )
    from kairox.tools._provider import (
        HookDecision,
        PostToolUseOutcome,
        PreToolUseOutcome,
        ToolHooks,
        ToolProvider,
    )
    from kairox.tools._web_fetch import host_kind, rule_hosts, url_host

__all__ = [
    "BUILTIN_SPECS",
    "Access",
    "AudioContent",
    "BuiltinSettings",
    "BuiltinToolProvider",
    "CallContext",
    "Confinement",
    "Content",
    "EmbeddedResource",
    "HookDecision",
    "HostCommand",
    "ImageContent",
    "PermissionProfile",
    "PostToolUseOutcome",
    "PreToolUseOutcome",
    "ProgramArgs",
    "ProgressCallback",
    "ResourceLink",
    "SandboxSettings",
    "TextContent",
    "ToolAnnotations",
    "ToolCall",
    "ToolHooks",
    "ToolHost",
    "ToolProvider",
    "ToolResult",
    "ToolSource",
    "ToolSpec",
    "host_kind",
    "object_schema",
    "rule_hosts",
    "url_host",
    "walk_files",
]

# names load their module when first read: the tool model does not bring the built-in tools or the shell along
if not TYPE_CHECKING:
    __getattr__, __dir__ = lazy_exports(
        __name__,
        {
            "._builtin": ("BUILTIN_SPECS", "BuiltinSettings", "BuiltinToolProvider", "ToolHost"),
            "._builtin_shell": ("HostCommand",),
            "._web_fetch": ("host_kind", "rule_hosts", "url_host"),
            "._gitignore": ("walk_files",),
            "kairox.sandbox": ("SandboxSettings",),
            "._model": (
                "Access",
                "AudioContent",
                "CallContext",
                "Confinement",
                "Content",
                "EmbeddedResource",
                "ImageContent",
                "PermissionProfile",
                "ProgramArgs",
                "ProgressCallback",
                "ResourceLink",
                "TextContent",
                "ToolAnnotations",
                "ToolCall",
                "ToolResult",
                "ToolSource",
                "ToolSpec",
                "object_schema",
            ),
            "._provider": (
                "HookDecision",
                "PostToolUseOutcome",
                "PreToolUseOutcome",
                "ToolHooks",
                "ToolProvider",
            ),
        },
    )
