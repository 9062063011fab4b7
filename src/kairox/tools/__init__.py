"""The tool model (R1), the ToolProvider interface, the hook interface, and the built-in tools (R6)."""

from typing import TYPE_CHECKING

from kairox._util._lazy import lazy_exports

if TYPE_CHECKING:
    from kairox.tools._builtin import BUILTIN_ORIGIN, BUILTIN_SPECS, BuiltinSettings, BuiltinToolProvider, ToolHost
    from kairox.tools._builtin_shell import HostCommand, scrubbed_environment
    from kairox.tools._gitignore import walk_files
    from kairox.tools._model import (
        READ_ONLY,
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
        ToolsChangedListener,
    )
    from kairox.tools._web_fetch import host_kind, rule_hosts, url_host

__all__ = [
    "BUILTIN_ORIGIN",
    "BUILTIN_SPECS",
    "READ_ONLY",
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
    "TextContent",
    "ToolAnnotations",
    "ToolCall",
    "ToolHooks",
    "ToolHost",
    "ToolProvider",
    "ToolResult",
    "ToolSource",
    "ToolSpec",
    "ToolsChangedListener",
    "host_kind",
    "object_schema",
    "rule_hosts",
    "scrubbed_environment",
    "url_host",
    "walk_files",
]

# names load their module when first read: the tool model does not bring the built-in tools or the shell along
if not TYPE_CHECKING:
    __getattr__, __dir__ = lazy_exports(
        __name__,
        {
            "._builtin": ("BUILTIN_ORIGIN", "BUILTIN_SPECS", "BuiltinSettings", "BuiltinToolProvider", "ToolHost"),
            "._builtin_shell": ("HostCommand", "scrubbed_environment"),
            "._web_fetch": ("host_kind", "rule_hosts", "url_host"),
            "._gitignore": ("walk_files",),
            "._model": (
                "READ_ONLY",
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
                "ToolsChangedListener",
            ),
        },
    )
