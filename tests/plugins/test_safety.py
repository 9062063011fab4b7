"""Every plugin path stays inside the plugin (P3); permissions only narrow the user's policy (Y4)."""

import os
from dataclasses import replace
from pathlib import Path

import pytest
from tests.plugins.conftest import make_plugin, write_skill

from kairox.config import ApprovalPolicy, PolicyConfig, SandboxPolicy
from kairox.errors import ExtensionLoadFailure
from kairox.plugins import PluginOrigin, load_plugin, narrow_policy
from kairox.plugins._manifest import PluginPermissions, ToolDeclaration
from kairox.plugins._model import PluginTool
from kairox.plugins._paths import PluginPathError, resolve_inside
from kairox.plugins._tools import PluginToolProvider
from kairox.policy import NonInteractiveApprover, PolicySettings
from kairox.registry import ToolRegistry
from kairox.registry._registry import RegistrySettings
from kairox.sandbox import SandboxSettings


def test_skills_path_leaving_the_plugin_is_refused_with_a_diagnostic(tmp_path: Path) -> None:
    root = make_plugin(tmp_path / "plugins" / "evil", {"name": "evil", "skills": "../../etc"})

    plugin, problems = load_plugin(root, origin=PluginOrigin.PATH)

    assert plugin is None
    assert problems == [
        ExtensionLoadFailure(
            kind="plugin",
            name="evil",
            reason="skills: '../../etc' uses '..'; plugin paths must stay inside the plugin folder",
            source=str(root.resolve() / ".claude-plugin" / "plugin.json"),
            line=3,
            hint="plugin paths are relative to the plugin folder and stay inside it",
        )
    ]


def test_absolute_skills_path_outside_the_plugin_is_refused(tmp_path: Path) -> None:
    root = make_plugin(tmp_path / "abs", {"name": "abs", "skills": ["/etc"]})

    plugin, problems = load_plugin(root, origin=PluginOrigin.PATH)

    assert plugin is None
    assert [p.reason for p in problems] == ["skills: '/etc' is outside the plugin folder"]


def test_symlink_leaving_the_plugin_refuses_the_plugin(tmp_path: Path) -> None:
    secret = tmp_path / "secret"
    write_skill(secret, "secret")
    root = make_plugin(tmp_path / "linked", {"name": "linked"})
    (root / "skills").mkdir()
    os.symlink(secret, root / "skills" / "secret")

    plugin, problems = load_plugin(root, origin=PluginOrigin.PATH)

    assert plugin is None
    assert problems == [
        ExtensionLoadFailure(
            kind="plugin",
            name="linked",
            reason=f"symlink skills/secret points outside the plugin ({secret}); the plugin is refused",
            source=str(root.resolve() / "skills" / "secret"),
            hint="replace the link with the file itself",
        )
    ]


def test_symlink_staying_inside_the_plugin_is_fine(tmp_path: Path) -> None:
    root = make_plugin(tmp_path / "inner", {"name": "inner"}, skills=("real",))
    os.symlink(root / "skills" / "real" / "SKILL.md", root / "README-link.md")

    plugin, problems = load_plugin(root, origin=PluginOrigin.PATH)

    assert plugin is not None and problems == []


@pytest.mark.parametrize("path", ["../x", "a/../../x", "${KAIROX_PLUGIN_ROOT}/../x", "/"])
def test_resolve_inside_refuses_every_way_out(tmp_path: Path, path: str) -> None:
    with pytest.raises(PluginPathError):
        resolve_inside(tmp_path, path)


def test_resolve_inside_accepts_the_plugin_root_variable(tmp_path: Path) -> None:
    (tmp_path / "skills").mkdir()
    assert resolve_inside(tmp_path, "${CLAUDE_PLUGIN_ROOT}/skills") == tmp_path.resolve() / "skills"


def _user(tmp_path: Path, **policy: object) -> PolicySettings:
    return PolicySettings.from_config(PolicyConfig.model_validate(policy), workspace=tmp_path, home=tmp_path)


def test_manifest_asking_for_danger_full_access_does_not_widen_the_policy(tmp_path: Path) -> None:
    user = _user(tmp_path)
    asked = PluginPermissions.model_validate(
        {"approvalPolicy": "never", "sandboxPolicy": "danger_full_access", "networkAccess": True}
    )

    narrowed = narrow_policy(user, asked, plugin="greedy")

    assert (narrowed.settings.sandbox, narrowed.settings.network_access) == (SandboxPolicy.WORKSPACE_WRITE, False)
    # never turns asks into denials: narrower than on_request, never wider
    assert narrowed.settings.approval is ApprovalPolicy.NEVER
    assert narrowed.settings.writable_roots == user.writable_roots


def test_manifest_permissions_narrow_sandbox_approval_and_tools(tmp_path: Path) -> None:
    user = _user(tmp_path, sandbox_policy="danger_full_access", network_access=True)
    asked = PluginPermissions.model_validate(
        {
            "approvalPolicy": "untrusted",
            "sandboxPolicy": "read-only",
            "networkAccess": False,
            "tools": ["fs.read", "mcp__github__*"],
        }
    )

    narrowed = narrow_policy(user, asked, plugin="careful")

    assert (narrowed.settings.approval, narrowed.settings.sandbox, narrowed.settings.network_access) == (
        ApprovalPolicy.UNTRUSTED,
        SandboxPolicy.READ_ONLY,
        False,
    )
    assert [narrowed.allows_tool(t) for t in ("fs.read", "mcp__github__issues", "shell.exec")] == [True, True, False]


def test_never_from_a_manifest_does_not_loosen_an_untrusted_user(tmp_path: Path) -> None:
    narrowed = narrow_policy(
        _user(tmp_path, approval_policy="untrusted"), PluginPermissions.model_validate({"approvalPolicy": "never"})
    )
    assert narrowed.settings.approval is ApprovalPolicy.UNTRUSTED


def test_command_tool_sandbox_is_narrowed_never_widened() -> None:
    from kairox.plugins._tools import narrowed_sandbox

    user = SandboxSettings(mode=SandboxPolicy.READ_ONLY, network_access=False)
    widened = narrowed_sandbox(
        user, PluginPermissions.model_validate({"sandboxPolicy": "danger_full_access", "networkAccess": True})
    )
    assert widened == user


async def _plugin_tool_decision(tmp_path: Path, manifest_approval: str) -> str:
    permissions = PluginPermissions.model_validate({"approvalPolicy": manifest_approval})
    user = _user(tmp_path)
    narrowed = narrow_policy(user, permissions, plugin="kit")
    settings = RegistrySettings(
        policy=replace(user, rules=(*user.rules, *narrowed.rules)), spill_dir=tmp_path / "spill"
    )
    registry = ToolRegistry(settings, approver=NonInteractiveApprover())
    tool = PluginTool(plugin="kit", declaration=ToolDeclaration(name="t", command="true"), root=tmp_path)
    await registry.add_provider(PluginToolProvider("kit", [tool], permissions=permissions))
    return str(registry.check("kit__t", {}).verdict)


@pytest.mark.anyio
async def test_manifest_asking_for_untrusted_makes_its_tools_ask_in_the_shared_gate(tmp_path: Path) -> None:
    assert await _plugin_tool_decision(tmp_path, "on_request") == "allow"
    assert await _plugin_tool_decision(tmp_path, "untrusted") == "ask"


def test_hook_and_server_paths_climbing_out_of_the_plugin_root_are_refused(tmp_path: Path) -> None:
    manifest = {
        "name": "climb",
        "hooks": [
            {"event": "pre_turn", "script": "${CLAUDE_PLUGIN_ROOT}/../evil.sh"},
            {"event": "post_turn", "command": 'sh "${CLAUDE_PLUGIN_ROOT}/../evil.sh"'},
            {"event": "session_start", "command": "echo ${KAIROX_PLUGIN_ROOT}/ok"},
        ],
        "mcpServers": {
            "out": {"command": "node", "args": ["${CLAUDE_PLUGIN_ROOT}/../server.js"]},
            "up": {"command": "node", "args": ["x.js"], "cwd": "${CLAUDE_PLUGIN_ROOT}/.."},
            "in": {"command": "node", "args": ["${CLAUDE_PLUGIN_ROOT}/server.js"]},
        },
    }
    root = make_plugin(tmp_path / "plugins" / "climb", manifest)

    plugin, problems = load_plugin(root, origin=PluginOrigin.PATH)

    assert plugin is not None
    assert [(h.event, h.command) for h in plugin.hooks] == [("session_start", f"echo {root.resolve()}/ok")]
    assert [s.name for s in plugin.mcp_servers] == ["in"]
    source = str(root.resolve() / ".claude-plugin" / "plugin.json")
    climbing = [(p.kind, p.name, p.reason, p.source) for p in problems if isinstance(p, ExtensionLoadFailure)]
    assert climbing == [
        (
            "hook",
            "climb",
            "hooks[0] names '${CLAUDE_PLUGIN_ROOT}/../evil.sh', outside the plugin folder; the hook is skipped",
            source,
        ),
        (
            "hook",
            "climb",
            "hooks[1] names '${CLAUDE_PLUGIN_ROOT}/../evil.sh', outside the plugin folder; the hook is skipped",
            source,
        ),
        (
            "mcp_server",
            "out",
            "args names '${CLAUDE_PLUGIN_ROOT}/../server.js', outside the plugin folder; the server is skipped",
            source,
        ),
        (
            "mcp_server",
            "up",
            "cwd names '${CLAUDE_PLUGIN_ROOT}/..', outside the plugin folder; the server is skipped",
            source,
        ),
    ]


def test_command_tool_argument_climbing_out_of_the_plugin_root_refuses_the_plugin(tmp_path: Path) -> None:
    manifest = {
        "name": "climb",
        "tools": [{"name": "t", "command": "python3", "args": ["${KAIROX_PLUGIN_ROOT}/../tool.py"]}],
    }
    root = make_plugin(tmp_path / "plugins" / "climb", manifest)

    plugin, problems = load_plugin(root, origin=PluginOrigin.PATH)

    assert plugin is None
    assert [(p.kind, p.reason) for p in problems] == [
        ("plugin", "tools.t names '${KAIROX_PLUGIN_ROOT}/../tool.py', outside the plugin folder")
    ]


@pytest.mark.parametrize("name", [".hidden", "a/b", "a b", "a:b"])
def test_a_plugin_name_that_could_escape_or_collide_is_refused_at_its_line(tmp_path: Path, name: str) -> None:
    root = make_plugin(tmp_path / "plugins" / "p", {"name": name})

    plugin, problems = load_plugin(root, origin=PluginOrigin.PATH)

    manifest = root.resolve() / ".claude-plugin" / "plugin.json"
    assert plugin is None
    assert [(p.name, p.source, p.line) for p in problems] == [(name, str(manifest), 2)]
    assert "may not contain" in problems[0].reason
