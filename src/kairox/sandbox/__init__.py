"""The confinement of every process Kairox starts (Y6, Y7, Y9, Y14): ``shell.exec`` commands, hooks, plugin command
tools, MCP stdio servers, language servers, debug adapters and their debuggees.

A profile (``SandboxSettings`` for a command, ``ServerProfile`` for a server) becomes a bubblewrap command line
(``sandboxed_argv``, ``confine_server``, ``adapter_sandbox``), with the file-system work that needs: the
protected paths kept read-only, the host's sockets covered, and the read masks of ``fs.read`` deny and ask rules
(the files and folders they cover, the git histories they reach, the other names of what they hide). The egress
proxy of ``network = "allowlist"`` runs here (``EgressProxy``), and so do the file-system facts the policy decides
on (``HOST``): the policy says what is refused, this package finds it on disk and holds the process to it.

It sits below ``kairox.tools`` (whose ``shell.exec`` runs commands in it) and above ``kairox.config``."""

from typing import TYPE_CHECKING

from kairox._util._lazy import lazy_exports

if TYPE_CHECKING:
    from kairox.sandbox._bwrap import (
        SETUP_ATTEMPTS,
        allowed_sockets,
        check_sandbox,
        protected_roots,
        sandboxed_argv,
        vanished_before_start,
    )
    from kairox.sandbox._egress import EgressProxy, EgressRefused, shared_egress
    from kairox.sandbox._host import HOST
    from kairox.sandbox._profile import HiddenPaths, SandboxSettings, ServerProfile, resolved_profile, server_profile
    from kairox.sandbox._protected import (
        PROTECTED_DIRS,
        PROTECTED_FILES,
        SHELL_RC_FILES,
        ConfigurationWatch,
        created_note,
    )
    from kairox.sandbox._servers import (
        ConfinedCommand,
        ServerConfinement,
        adapter_confinement,
        adapter_sandbox,
        adapter_settings,
        confine_server,
        describe_confinement,
        entry_confinement,
        npm_cache_configured,
        refusal_hint,
        sandbox_refusal,
        state_environment,
    )

__all__ = [
    "HOST",
    "PROTECTED_DIRS",
    "PROTECTED_FILES",
    "SETUP_ATTEMPTS",
    "SHELL_RC_FILES",
    "ConfigurationWatch",
    "ConfinedCommand",
    "EgressProxy",
    "EgressRefused",
    "HiddenPaths",
    "SandboxSettings",
    "ServerConfinement",
    "ServerProfile",
    "adapter_confinement",
    "adapter_sandbox",
    "adapter_settings",
    "allowed_sockets",
    "check_sandbox",
    "confine_server",
    "created_note",
    "describe_confinement",
    "entry_confinement",
    "npm_cache_configured",
    "protected_roots",
    "refusal_hint",
    "resolved_profile",
    "sandbox_refusal",
    "sandboxed_argv",
    "server_profile",
    "shared_egress",
    "state_environment",
    "vanished_before_start",
]

# names load their module when first read: the tool model's SandboxSettings does not bring bubblewrap's command
# line, the read masks or the egress proxy along
if not TYPE_CHECKING:
    __getattr__, __dir__ = lazy_exports(
        __name__,
        {
            "._bwrap": (
                "SETUP_ATTEMPTS",
                "allowed_sockets",
                "check_sandbox",
                "protected_roots",
                "sandboxed_argv",
                "vanished_before_start",
            ),
            "._egress": ("EgressProxy", "EgressRefused", "shared_egress"),
            "._host": ("HOST",),
            "._profile": ("HiddenPaths", "SandboxSettings", "ServerProfile", "resolved_profile", "server_profile"),
            "._protected": (
                "PROTECTED_DIRS",
                "PROTECTED_FILES",
                "SHELL_RC_FILES",
                "ConfigurationWatch",
                "created_note",
            ),
            "._servers": (
                "ConfinedCommand",
                "ServerConfinement",
                "adapter_confinement",
                "adapter_sandbox",
                "adapter_settings",
                "confine_server",
                "describe_confinement",
                "entry_confinement",
                "npm_cache_configured",
                "refusal_hint",
                "sandbox_refusal",
                "state_environment",
            ),
        },
    )
