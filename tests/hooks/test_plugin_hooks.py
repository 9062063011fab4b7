"""Plugin hooks: routed from a plugin's hooks.json, and run only after approval unless the plugin is local.
The approval is recorded against a hash of the command and its script; a changed hook asks again."""

import json
from pathlib import Path

import pytest

from kairox.config import HooksConfig
from kairox.hooks import HookApprovalStore, HookRegistry
from kairox.plugins import PluginOrigin, TrustLevel, load_plugin, route_plugins
from kairox.policy import ApprovalAnswer, ApprovalRequest, ApprovalScope
from kairox.sandbox import SandboxSettings
from kairox.tools import HookDecision, ToolCall, ToolSource, ToolSpec
from kairox.tools._model import READ_ONLY

pytestmark = pytest.mark.anyio

WRITE = ToolSpec(
    name="fs.write", description="", input_schema={"type": "object"}, source=ToolSource.BUILTIN, permission=READ_ONLY
)
CALL = ToolCall(name="fs.write", arguments={"path": "a.txt", "content": "x"})


class Approver:
    def __init__(self, answer: ApprovalAnswer) -> None:
        self.answer = answer
        self.requests: list[ApprovalRequest] = []

    async def request_approval(self, request: ApprovalRequest) -> ApprovalAnswer:
        self.requests.append(request)
        return self.answer


def _plugin(tmp_path: Path) -> Path:
    root = tmp_path / "guard"
    (root / ".claude-plugin").mkdir(parents=True)
    (root / ".claude-plugin" / "plugin.json").write_text(json.dumps({"name": "guard", "version": "1.0.0"}))
    (root / "hooks").mkdir()
    (root / "hooks" / "guard.sh").write_text('echo "guard says no" >&2\nexit 2\n')
    hooks = {
        "hooks": {
            "PreToolUse": [
                {
                    "matcher": "Write",
                    "hooks": [{"type": "command", "command": 'sh "${CLAUDE_PLUGIN_ROOT}/hooks/guard.sh"'}],
                }
            ]
        }
    }
    (root / "hooks" / "hooks.json").write_text(json.dumps(hooks))
    return root


def _registry(tmp_path: Path, root: Path, trust: TrustLevel, approver: Approver | None) -> HookRegistry:
    plugin, problems = load_plugin(root, origin=PluginOrigin.INSTALLED, trust=trust)
    assert plugin is not None and problems == []
    routing = route_plugins([plugin])
    return HookRegistry.from_config(
        HooksConfig(),
        routing.hooks,
        workspace=tmp_path,
        sandbox=SandboxSettings(writable_roots=(tmp_path,)),
        approver=approver,
        approvals=HookApprovalStore(tmp_path / "home"),
    )


async def test_local_plugin_hook_runs_without_asking(tmp_path: Path) -> None:
    approver = Approver(ApprovalAnswer(approved=True))
    registry = _registry(tmp_path, _plugin(tmp_path), TrustLevel.LOCAL, approver)

    outcome = await registry.pre_tool_use(CALL, WRITE)

    assert (outcome.decision, outcome.reason) == (HookDecision.DENY, "guard says no")
    assert [h.name for h in registry.hooks] == ["guard:pre_tool_use"]
    assert approver.requests == []


async def test_community_plugin_hook_waits_for_approval_and_a_changed_script_asks_again(tmp_path: Path) -> None:
    root = _plugin(tmp_path)
    always = Approver(ApprovalAnswer(approved=True, scope=ApprovalScope.ALWAYS))

    unapproved = await _registry(tmp_path, root, TrustLevel.COMMUNITY, None).pre_tool_use(CALL, WRITE)
    first = await _registry(tmp_path, root, TrustLevel.COMMUNITY, always).pre_tool_use(CALL, WRITE)
    silent = Approver(ApprovalAnswer.deny("should not be asked"))
    remembered = await _registry(tmp_path, root, TrustLevel.COMMUNITY, silent).pre_tool_use(CALL, WRITE)
    (root / "hooks" / "guard.sh").write_text('echo "changed" >&2\nexit 2\n')
    declined = Approver(ApprovalAnswer.deny("looks different"))
    changed = await _registry(tmp_path, root, TrustLevel.COMMUNITY, declined).pre_tool_use(CALL, WRITE)

    assert unapproved.decision is None
    assert [d.reason for d in unapproved.diagnostics] == [
        "hook of community plugin guard is not approved yet (or changed since)"
    ]
    assert [d.hint for d in unapproved.diagnostics] == ["approve it with `kairox hooks approve guard:pre_tool_use`"]
    assert (first.decision, first.reason) == (HookDecision.DENY, "guard says no")
    assert [r.tool for r in always.requests] == ["hook:guard:pre_tool_use"]
    assert (remembered.decision, silent.requests) == (HookDecision.DENY, [])
    assert changed.decision is None
    assert len(declined.requests) == 1
    assert [d.reason for d in changed.diagnostics] == ["not approved: looks different"]


async def test_session_approval_is_not_persisted(tmp_path: Path) -> None:
    root = _plugin(tmp_path)
    session = Approver(ApprovalAnswer(approved=True, scope=ApprovalScope.SESSION))
    registry = _registry(tmp_path, root, TrustLevel.VERIFIED, session)

    await registry.pre_tool_use(CALL, WRITE)
    await registry.pre_tool_use(CALL, WRITE)

    assert len(session.requests) == 1
    assert not (tmp_path / "home" / "hook-approvals.json").exists()


async def test_a_changed_helper_next_to_the_hook_script_asks_again(tmp_path: Path) -> None:
    root = _plugin(tmp_path)
    (root / "hooks" / "guard.sh").write_text('. "$(dirname "$0")/helper.sh"\n')
    (root / "hooks" / "helper.sh").write_text('echo "helper says no" >&2\nexit 2\n')
    always = Approver(ApprovalAnswer(approved=True, scope=ApprovalScope.ALWAYS))
    first = await _registry(tmp_path, root, TrustLevel.COMMUNITY, always).pre_tool_use(CALL, WRITE)
    (root / "hooks" / "helper.sh").write_text('echo "helper changed" >&2\nexit 2\n')
    declined = Approver(ApprovalAnswer.deny("helper changed"))

    changed = await _registry(tmp_path, root, TrustLevel.COMMUNITY, declined).pre_tool_use(CALL, WRITE)

    assert (first.decision, first.reason) == (HookDecision.DENY, "helper says no")
    assert (changed.decision, len(declined.requests)) == (None, 1)
    assert [d.reason for d in changed.diagnostics] == ["not approved: helper changed"]


async def test_a_hook_whose_matcher_widens_asks_again(tmp_path: Path) -> None:
    root = _plugin(tmp_path)
    hooks = json.loads((root / "hooks" / "hooks.json").read_text())
    (root / "hooks" / "hooks.json").unlink()
    manifest = root / ".claude-plugin" / "plugin.json"
    manifest.write_text(json.dumps({"name": "guard", "version": "1.0.0", "hooks": hooks}))
    always = Approver(ApprovalAnswer(approved=True, scope=ApprovalScope.ALWAYS))
    await _registry(tmp_path, root, TrustLevel.COMMUNITY, always).pre_tool_use(CALL, WRITE)
    hooks["hooks"]["PreToolUse"][0]["matcher"] = "*"
    manifest.write_text(json.dumps({"name": "guard", "version": "1.0.0", "hooks": hooks}))
    declined = Approver(ApprovalAnswer.deny("now sees every tool"))

    widened = await _registry(tmp_path, root, TrustLevel.COMMUNITY, declined).pre_tool_use(CALL, WRITE)

    assert (len(always.requests), len(declined.requests)) == (1, 1)
    assert widened.decision is None


def test_a_damaged_approvals_file_approves_nothing(tmp_path: Path) -> None:
    store = HookApprovalStore(tmp_path)
    store.file.write_bytes(b"\xff\xfe not utf-8")
    hooks = _registry(tmp_path, _plugin(tmp_path), TrustLevel.COMMUNITY, None).hooks

    assert [store.is_approved(h) for h in hooks] == [False]
