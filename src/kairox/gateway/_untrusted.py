"""What ``kairox serve`` holds back in a workspace the user has not trusted (or whose trusted settings changed),
said once on stderr, in the ``initialize`` instructions, and to a client that calls a tool it holds back."""

import shlex
from dataclasses import dataclass

from kairox._util._names import normalize_tool_name
from kairox.runtime import ExtensionContext

_SERVER_KINDS = (("mcp_servers", "MCP servers"), ("lsp_servers", "language servers"), ("dap_servers", "debug adapters"))


@dataclass(frozen=True, kw_only=True, slots=True)
class HeldBack:
    workspace: str
    trusted: bool
    servers: dict[str, tuple[str, ...]]
    """``mcp_servers`` / ``lsp_servers`` / ``dap_servers`` -> the names of those waiting for trust."""
    skills: tuple[str, ...] = ()
    plugins: tuple[str, ...] = ()
    hooks: bool = False
    other_keys: int = 0
    """Other settings that wait (allow rules, sandbox widenings ...)."""

    @property
    def empty(self) -> bool:
        return not (any(self.servers.values()) or self.skills or self.plugins or self.hooks or self.other_keys)

    @property
    def trust_command(self) -> str:
        return f"kairox --workspace {shlex.quote(self.workspace)} trust"

    def notice(self) -> str:
        """One paragraph: what is held back, why, and the command that trusts."""
        parts = [f"{label} {', '.join(names)}" for key, label in _SERVER_KINDS if (names := self.servers.get(key))]
        if self.skills:
            parts.append(f"skills {', '.join(self.skills)}")
        if self.plugins:
            parts.append(f"plugins {', '.join(self.plugins)}")
        if self.hooks:
            parts.append("hooks")
        if self.other_keys:
            parts.append(f"{self.other_keys} other setting(s) (such as allow rules)")
        why = "is not trusted" if not self.trusted else "has settings that changed since it was trusted"
        return (
            f"The workspace {self.workspace} {why}, so kairox serve holds back its project {'; '.join(parts)}. "
            f"Only the built-in tools and the user's own servers are served. To use them, review and trust the "
            f"workspace with `{self.trust_command}`, then restart the server."
        )

    def tool_message(self, name: str) -> str | None:
        """For a call of a tool that is not served: the notice, naming the held-back server it would come from
        (``mcp__<server>__...``, ``lsp_*``, ``dap_*``, the skills); None when nothing is held back."""
        if self.empty:
            return None
        for server in self.servers.get("mcp_servers", ()):
            if name.startswith(f"mcp__{normalize_tool_name(server)}__"):
                return (
                    f"{name} was not run: it comes from MCP server {server!r}"
                    f", which kairox serve holds back. {self.notice()}"
                )
        if (name.startswith("lsp_") and self.servers.get("lsp_servers")) or (
            name.startswith("dap_") and self.servers.get("dap_servers")
        ):
            return f"{name} was not run: its server is held back. {self.notice()}"
        if name == "skill" and self.skills:  # the skill tool is served only when some skill is offered
            return f"skill was not run: the workspace's skills are held back. {self.notice()}"
        return f"no tool named {name!r} is served here; tools/list shows the tools. {self.notice()}"


def held_back(context: ExtensionContext) -> HeldBack:
    resolved = context.resolved
    waiting = [p for p in resolved.pending if not p.replaces_trusted]
    servers = {
        key: tuple(sorted({p.key.split(".")[1] for p in waiting if p.key.startswith(key + ".")}))
        for key, _ in _SERVER_KINDS
    }
    hooks = any(p.key == "hooks" or p.key.startswith("hooks.") for p in waiting)
    named = tuple(f"{key}." for key in (*servers, "hooks", "plugins"))  # said by name; the other keys are counted
    other_keys = sum(1 for p in waiting if p.key != "hooks" and not p.key.startswith(named))
    skills = tuple(sorted(e.skill.qualified_name for e in context.skills.entries() if e.held_by_trust))
    plugins = tuple(sorted(p.name for p in context.plugins.plugins if not p.enabled and p.held_by_trust))
    return HeldBack(
        workspace=str(resolved.workspace),
        trusted=resolved.trusted,
        servers=servers,
        skills=skills,
        plugins=plugins,
        hooks=hooks,
        other_keys=other_keys,
    )
