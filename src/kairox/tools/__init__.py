"""The tool model (R1), the ToolProvider interface, the hook interface, and the built-in tools (R6)."""

from typing import TYPE_CHECKING

from kairox._util._lazy import lazy_exports

if TYPE_CHECKING:
    from kairox.tools._builtin import BUILTIN_ORIGIN, BUILTIN_SPECS, BuiltinSettings, BuiltinToolProvider
    from kairox.tools._builtin_shell import scrubbed_environment
    from kairox.tools._model import (
        READ_ONLY,
        Access,
        AudioContent,
        CallContext,
        Content,
        EmbeddedResource,
        HiddenPaths,
        ImageContent,
        PermissionProfile,
        ProgressCallback,
        ResourceLink,
        SandboxSettings,
        TextContent,
        ToolAnnotations,
        ToolCall,
        ToolResult,
        ToolSource,
        ToolSpec,
        object_schema,
    )
    from kairox.tools._protected import PROTECTED_DIRS, PROTECTED_FILES, protected_inside
    from kairox.tools._provider import (
        HookDecision,
        PostToolUseOutcome,
        PreToolUseOutcome,
        ToolHooks,
        ToolProvider,
        ToolsChangedListener,
    )
    from kairox.tools._sandbox import (
        SOCKET_FOLDERS,
        bound_sockets,
        check_sandbox,
        find_bwrap,
        sandboxed_argv,
        sandboxed_argv_async,
        socket_folders,
        writable_roots,
    )

__all__ = [
    "BUILTIN_ORIGIN",
    "BUILTIN_SPECS",
    "PROTECTED_DIRS",
    "PROTECTED_FILES",
    "READ_ONLY",
    "SOCKET_FOLDERS",
    "Access",
    "AudioContent",
    "BuiltinSettings",
    "BuiltinToolProvider",
    "CallContext",
    "Content",
    "EmbeddedResource",
    "HiddenPaths",
    "HookDecision",
    "ImageContent",
    "PermissionProfile",
    "PostToolUseOutcome",
    "PreToolUseOutcome",
    "ProgressCallback",
    "ResourceLink",
    "SandboxSettings",
    "TextContent",
    "ToolAnnotations",
    "ToolCall",
    "ToolHooks",
    "ToolProvider",
    "ToolResult",
    "ToolSource",
    "ToolSpec",
    "ToolsChangedListener",
    "bound_sockets",
    "check_sandbox",
    "find_bwrap",
    "object_schema",
    "protected_inside",
    "sandboxed_argv",
    "sandboxed_argv_async",
    "scrubbed_environment",
    "socket_folders",
    "writable_roots",
]

# names load their module when first read: the tool model does not bring the built-in tools, the sandbox or
# the shell along
if not TYPE_CHECKING:
    __getattr__, __dir__ = lazy_exports(
        __name__,
        {
            "._builtin": ("BUILTIN_ORIGIN", "BUILTIN_SPECS", "BuiltinSettings", "BuiltinToolProvider"),
            "._builtin_shell": ("scrubbed_environment",),
            "._model": (
                "READ_ONLY",
                "Access",
                "AudioContent",
                "CallContext",
                "Content",
                "EmbeddedResource",
                "HiddenPaths",
                "ImageContent",
                "PermissionProfile",
                "ProgressCallback",
                "ResourceLink",
                "SandboxSettings",
                "TextContent",
                "ToolAnnotations",
                "ToolCall",
                "ToolResult",
                "ToolSource",
                "ToolSpec",
                "object_schema",
            ),
            "._protected": ("PROTECTED_DIRS", "PROTECTED_FILES", "protected_inside"),
            "._provider": (
                "HookDecision",
                "PostToolUseOutcome",
                "PreToolUseOutcome",
                "ToolHooks",
                "ToolProvider",
                "ToolsChangedListener",
            ),
            "._sandbox": (
                "SOCKET_FOLDERS",
                "bound_sockets",
                "check_sandbox",
                "find_bwrap",
                "sandboxed_argv",
                "sandboxed_argv_async",
                "socket_folders",
                "writable_roots",
            ),
        },
    )
