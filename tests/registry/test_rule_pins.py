"""An "allow always" saved in the project or local layer of a trusted workspace is the user's own choice: trust
pins that rule as it is written, so the next session has it in force without `kairox trust`. Only that rule: what
anyone else changed in the same file meanwhile (another rule, a server) still waits for trust."""

import json
from pathlib import Path

import pytest
from tests.registry._support import ScriptedApprover

from kairox.config import Layer, append_value, resolve_config, set_value, trust_workspace
from kairox.policy import ApprovalAnswer, ApprovalRequest, RuleLayer
from kairox.registry import build_registry
from kairox.tools import ToolCall

pytestmark = pytest.mark.anyio

RULE = "shell.exec(ls -a*)"
THEIRS = "shell.exec(curl*)"
USER_TEXT = '[policy]\napproval_policy = "untrusted"\n'  # every call asks, so the rule is what lets one through


class BusyFile(ScriptedApprover):
    """Answers "always" in ``layer``; while the person reads the question, another writer edits the same file."""

    def __init__(self, layer: RuleLayer, other_writer: bool) -> None:
        super().__init__([ApprovalAnswer.allow_always(RULE, layer=layer)])
        self.layer, self.other_writer = layer, other_writer
        self.file: Path | None = None

    async def request_approval(self, request: ApprovalRequest) -> ApprovalAnswer:
        if self.other_writer and self.file is not None:
            append_value(self.file, "policy.rules.allow", THEIRS)
            set_value(self.file, "mcp_servers.planted", {"command": "sh", "args": ["-c", "true"]})
        return await super().request_approval(request)


@pytest.fixture
def repo(tmp_path: Path, isolated_home: Path) -> Path:
    root = tmp_path / "repo"
    (root / ".git").mkdir(parents=True)
    (root / "kairox.toml").write_text('# the team\'s settings\n[instructions]\ntext = "Be brief."\n')
    (isolated_home / "kairox.toml").write_text(USER_TEXT)
    return root


def _pins(home: Path) -> dict[str, dict[str, list[str]]]:
    data = json.loads((home / "trusted_workspaces.json").read_text())
    return {folder: record["pins"] for folder, record in data["workspaces"].items()}


async def _always(root: Path, layer: RuleLayer, *, other_writer: bool = False) -> Path:
    resolved = resolve_config(root)
    assert resolved.trusted
    approver = BusyFile(layer, other_writer)
    approver.file = resolved.layer_file(Layer(str(layer)))
    registry = await build_registry(resolved, approver=approver)
    result = await registry.call(ToolCall(name="shell.exec", arguments={"command": "ls -a"}))
    assert not result.is_error, result.text_content()
    assert len(approver.requests) == 1
    return approver.file


async def _runs_without_asking(root: Path) -> bool:
    approver = ScriptedApprover()
    registry = await build_registry(resolve_config(root), approver=approver)
    result = await registry.call(ToolCall(name="shell.exec", arguments={"command": "ls -a"}))
    return not result.is_error and approver.requests == []


@pytest.mark.parametrize("layer", [RuleLayer.PROJECT, RuleLayer.LOCAL])
async def test_always_in_a_project_layer_of_a_trusted_workspace_is_in_force_next_time(
    repo: Path, isolated_home: Path, layer: RuleLayer
) -> None:
    trust_workspace(repo)
    before = _pins(isolated_home)[str(repo)]
    file = await _always(repo, layer)

    again = resolve_config(repo)
    assert [(r.pattern, r.layer, r.file) for r in again.rules] == [(RULE, Layer(str(layer)), file)]
    assert (again.pending, [d for d in again.diagnostics if d.kind == "trust"]) == ((), [])
    assert await _runs_without_asking(repo)
    # one fingerprint added, for that rule in that file; everything trust recorded before is as it was
    after = _pins(isolated_home)[str(repo)]
    added = {pin_id: hashes for pin_id, hashes in after.items() if before.get(pin_id) != hashes}
    assert list(added) == [f"{file}#policy.rules.allow"] and len(added[f"{file}#policy.rules.allow"]) == 1
    assert {pin_id: hashes for pin_id, hashes in after.items() if pin_id not in added} == before


async def test_what_another_writer_put_in_the_same_file_meanwhile_still_waits(repo: Path, isolated_home: Path) -> None:
    trust_workspace(repo)
    file = await _always(repo, RuleLayer.PROJECT, other_writer=True)

    again = resolve_config(repo)
    assert [r.pattern for r in again.rules] == [RULE]
    assert again.is_pending("mcp_servers.planted")  # listed, and no server of a pending entry starts
    assert sorted((p.key, p.reason) for p in again.pending) == [
        (
            "mcp_servers.planted",
            "new MCP server `planted` in kairox.toml:11 since this workspace was trusted; run `kairox trust` to review",
        ),
        (
            f"policy.rules.allow[{THEIRS}]",
            f"new allow rule `{THEIRS}` in kairox.toml:7 since this "
            "workspace was trusted; run `kairox trust` to review",
        ),
    ], file.read_text()
    assert await _runs_without_asking(repo)


async def test_an_earlier_allowed_rule_of_the_same_file_stays_pinned_beside_the_new_one(
    repo: Path, isolated_home: Path
) -> None:
    (repo / "kairox.toml").write_text('[policy.rules]\nallow = ["fs.read(docs/**)"]\n')
    trust_workspace(repo)
    await _always(repo, RuleLayer.PROJECT)
    again = resolve_config(repo)
    assert [r.pattern for r in again.rules] == ["fs.read(docs/**)", RULE]
    assert again.pending == ()


async def test_a_folder_trusted_through_its_parent_gets_the_pin_in_the_parents_record(
    repo: Path, isolated_home: Path
) -> None:
    trust_workspace(repo)
    sub = repo / "sub"
    (sub / ".git").mkdir(parents=True)
    file = await _always(sub, RuleLayer.PROJECT)
    assert file == sub / "kairox.toml"
    assert list(_pins(isolated_home)) == [str(repo)]
    again = resolve_config(sub)
    assert ([r.pattern for r in again.rules], again.pending) == ([RULE], ())


async def test_a_record_from_before_fingerprints_is_left_for_kairox_trust(repo: Path, isolated_home: Path) -> None:
    record = {"workspaces": {str(repo): {"trusted_at": 1}}}
    (isolated_home / "trusted_workspaces.json").write_text(json.dumps(record))
    await _always(repo, RuleLayer.PROJECT)
    assert json.loads((isolated_home / "trusted_workspaces.json").read_text()) == record
    assert [p.key for p in resolve_config(repo).pending] == [f"policy.rules.allow[{RULE}]"]
