"""A plugin's ``permissions`` only narrow the user's policy (Y4): never a wider sandbox, fewer asks, more tools."""

import fnmatch
from dataclasses import dataclass, replace

from kairox.config import ApprovalPolicy, SandboxPolicy
from kairox.plugins._manifest import PluginPermissions
from kairox.policy import PolicySettings, Rule

_SANDBOX_ORDER = (SandboxPolicy.READ_ONLY, SandboxPolicy.WORKSPACE_WRITE, SandboxPolicy.DANGER_FULL_ACCESS)
"""Narrowest first."""

_APPROVAL_ORDER = (ApprovalPolicy.ON_FAILURE, ApprovalPolicy.ON_REQUEST, ApprovalPolicy.UNTRUSTED)
"""Widest first: each asks about more than the one before."""


def narrower_sandbox(user: SandboxPolicy, asked: SandboxPolicy | None) -> SandboxPolicy:
    if asked is None:
        return user
    return min(user, asked, key=_SANDBOX_ORDER.index)


def narrower_approval(user: ApprovalPolicy, asked: ApprovalPolicy | None) -> ApprovalPolicy:
    """The approval policy that lets through no more than ``user`` does.

    ``never`` turns every ask into a denial, so it narrows ``on_request`` and ``on_failure``; it would widen
    ``untrusted`` (which asks before every write), so there the user's policy stays.
    """
    if asked is None or asked is user:
        return user
    if user is ApprovalPolicy.NEVER:
        return user
    if asked is ApprovalPolicy.NEVER:
        return user if user is ApprovalPolicy.UNTRUSTED else asked
    return max(user, asked, key=_APPROVAL_ORDER.index)


@dataclass(frozen=True, kw_only=True, slots=True)
class PluginPolicy:
    """The policy a plugin's tools, skills and hooks run under: the user's, narrowed by the manifest."""

    plugin: str
    settings: PolicySettings
    tools: tuple[str, ...] | None = None
    """Tool-name patterns the plugin's skills may use; ``None`` means the user's policy alone decides."""
    user_approval: ApprovalPolicy = ApprovalPolicy.ON_REQUEST
    """The user's own approval policy, before narrowing."""

    @property
    def rules(self) -> tuple[Rule, ...]:
        """Rules that hold the plugin's own tools to its narrowed approval policy in the one shared gate:
        ``ask plugin:<name>`` when the manifest asks for ``untrusted`` and the user's policy is wider."""
        if self.settings.approval is ApprovalPolicy.UNTRUSTED and self.user_approval is not ApprovalPolicy.UNTRUSTED:
            return (Rule(action="ask", pattern=f"plugin:{self.plugin}", layer=f"plugin:{self.plugin}"),)
        return ()

    def allows_tool(self, name: str) -> bool:
        if self.tools is None:
            return True
        return any(fnmatch.fnmatchcase(name, pattern) for pattern in self.tools)


def narrow_policy(user: PolicySettings, permissions: PluginPermissions | None, *, plugin: str = "") -> PluginPolicy:
    """Intersect a manifest's ``permissions`` with the user's policy. The result is never wider than ``user``:
    a manifest asking for ``danger_full_access`` or network access gets what the user allows and no more."""
    permissions = permissions or PluginPermissions()
    settings = replace(
        user,
        approval=narrower_approval(user.approval, permissions.approval_policy),
        sandbox=narrower_sandbox(user.sandbox, permissions.sandbox_policy),
        network_access=user.network_access and permissions.network_access is not False,
    )
    tools = tuple(permissions.tools) if permissions.tools is not None else None
    return PluginPolicy(plugin=plugin, settings=settings, tools=tools, user_approval=user.approval)
