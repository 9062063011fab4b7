"""An "allow always" never writes into a file an untrusted workspace's owner controls (attack corpus): the project
and local layers are not offered there, an answer naming one is granted for the session only and says why, and no
byte of any file changes, whatever spelling or link the workspace uses. A trusted workspace's project layer is
written as asked."""

import os
from collections.abc import Callable
from pathlib import Path

import pytest
from tests.registry._support import ScriptedApprover

from kairox.config import Layer, resolve_config, trust_workspace
from kairox.events import RecordingSink
from kairox.policy import ApprovalAnswer, RuleLayer
from kairox.registry import ToolCallApprovalAnswered, build_registry, user_layer_writer
from kairox.registry._approvals import RuleNotSavedError
from kairox.tools import ToolCall

pytestmark = pytest.mark.anyio

USER_TEXT = '# my settings\n[policy]\napproval_policy = "untrusted"\n'
OUTSIDE_TEXT = "# a file outside the workspace\n[policy.rules]\nallow = []\n"
RULE = "shell.exec(ls -a*)"


def _tree(*roots: Path) -> dict[str, tuple[str, bytes]]:
    """Every entry under ``roots``: a link's target, a file's bytes, a folder's presence."""
    found: dict[str, tuple[str, bytes]] = {}
    for root in roots:
        for folder, dirs, files in os.walk(root):
            for name in dirs + files:
                path = Path(folder, name)
                if path.is_symlink():
                    found[str(path)] = ("link", os.readlink(path).encode())
                elif path.is_dir():
                    found[str(path)] = ("dir", b"")
                else:
                    found[str(path)] = ("file", path.read_bytes())
    return found


def _project_file(ws: Path, outside: Path, home: Path) -> Path:
    (ws / "kairox.toml").write_text('[policy.rules]\nallow = ["fs.read"]\n')
    return ws


def _no_project_file_yet(ws: Path, outside: Path, home: Path) -> Path:
    return ws


def _local_file(ws: Path, outside: Path, home: Path) -> Path:
    (ws / ".kairox").mkdir()
    (ws / ".kairox" / "kairox.local.toml").write_text("# local\n")
    return ws


def _nested_link_outside(ws: Path, outside: Path, home: Path) -> Path:
    (ws / ".kairox").mkdir()
    (ws / ".kairox" / "kairox.toml").symlink_to(outside / "settings.toml")
    return ws


def _local_link_outside(ws: Path, outside: Path, home: Path) -> Path:
    (ws / ".kairox").mkdir()
    (ws / ".kairox" / "kairox.local.toml").symlink_to(outside / "settings.toml")
    return ws


def _nested_link_to_the_user_file(ws: Path, outside: Path, home: Path) -> Path:
    (ws / ".kairox").mkdir()
    (ws / ".kairox" / "kairox.toml").symlink_to(home / "kairox.toml")
    return ws


def _dotdot_spelling(ws: Path, outside: Path, home: Path) -> Path:
    (ws / "src").mkdir()
    (ws / "kairox.toml").write_text("# project\n")
    return ws / "src" / ".." / "src" / ".."


def _workspace_through_a_link(ws: Path, outside: Path, home: Path) -> Path:
    (ws / "kairox.toml").write_text("# project\n")
    link = ws.parent / "ws-link"
    link.symlink_to(ws)
    return link


Setup = Callable[[Path, Path, Path], Path]
OUTSIDE, USER = "outside", "user"
"""Where a write into the layer would land through a link: the file outside the workspace, the user's file."""
CASES: list[tuple[Setup, RuleLayer, str | None]] = [
    (_project_file, RuleLayer.PROJECT, None),
    (_no_project_file_yet, RuleLayer.PROJECT, None),
    (_local_file, RuleLayer.LOCAL, None),
    (_nested_link_outside, RuleLayer.PROJECT, OUTSIDE),
    (_local_link_outside, RuleLayer.LOCAL, OUTSIDE),
    # "project" would land in the user's own file and hold everywhere: refused; the user layer is the user's own
    (_nested_link_to_the_user_file, RuleLayer.PROJECT, USER),
    (_dotdot_spelling, RuleLayer.PROJECT, None),
    (_workspace_through_a_link, RuleLayer.LOCAL, None),
]
IDS = [setup.__name__.lstrip("_") for setup, _, _ in CASES]


def _refusal(file: Path, layer: RuleLayer, lands: str | None, outside: Path, home: Path) -> tuple[str, str]:
    """Why the layer is refused and what to do, as the person is told: the file, and where a link sends it."""
    if lands == USER:
        why = (
            f"{file} is the {layer} file of this workspace but a link to {home / 'kairox.toml'}, your user file: "
            "a change meant for this workspace would hold in every workspace"
        )
        return (
            why,
            "save it in the user layer if it is meant for every workspace, or replace the link with a file of its own",
        )
    why = f"{file} is the {layer} file of a workspace you have not trusted"
    if lands == OUTSIDE:
        why += f" (a link to {outside / 'settings.toml'})"
    return why, "trust the workspace (`kairox trust`) and answer again, or save it in the user layer"


def _places(tmp_path: Path, home: Path) -> tuple[Path, Path]:
    ws, outside = tmp_path / "ws", tmp_path / "outside"
    (ws / ".git").mkdir(parents=True)
    outside.mkdir()
    (outside / "settings.toml").write_text(OUTSIDE_TEXT)
    (home / "kairox.toml").write_text(USER_TEXT)
    return ws, outside


@pytest.mark.parametrize(("setup", "layer", "lands"), CASES, ids=IDS)
async def test_always_in_a_project_layer_of_an_untrusted_workspace_writes_nothing_and_holds_for_the_session(
    tmp_path: Path, isolated_home: Path, setup: Setup, layer: RuleLayer, lands: str | None
) -> None:
    ws, outside = _places(tmp_path, isolated_home)
    resolved = resolve_config(setup(ws, outside, isolated_home))
    assert resolved.trusted is False
    before = _tree(tmp_path, isolated_home)
    sink = RecordingSink()
    approver = ScriptedApprover([ApprovalAnswer.allow_always(RULE, layer=layer)])
    registry = await build_registry(resolved, approver=approver, events=sink)

    first = await registry.call(ToolCall(name="shell.exec", arguments={"command": "ls -a"}, call_id="c1"))
    second = await registry.call(ToolCall(name="shell.exec", arguments={"command": "ls -a .git"}, call_id="c2"))

    assert (first.is_error, second.is_error) == (False, False), (first.text_content(), second.text_content())
    assert len(approver.requests) == 1  # the grant holds for the rest of the session
    assert approver.requests[0].layers == (RuleLayer.USER,)  # the project and local layers are not offered
    file = resolved.layer_file(Layer(str(layer)))
    why, hint = _refusal(file, layer, lands, outside, isolated_home)
    message = f"the allow rule {RULE!r} was not saved in the {layer} layer: {why}; it holds for this session"
    assert sink.of_type(ToolCallApprovalAnswered) == [
        ToolCallApprovalAnswered(
            call_id="c1",
            tool="shell.exec",
            approved=True,
            scope="session",
            reason=f"{message} ({hint})",
            persisted_rule=None,
        )
    ]
    assert [(d.kind, d.name, d.reason, d.hint) for d in registry.diagnostics if d.kind == "policy_rule"] == [
        ("policy_rule", RULE, message, hint)
    ]
    assert _tree(tmp_path, isolated_home) == before


@pytest.mark.parametrize(("setup", "layer", "lands"), CASES, ids=IDS)
async def test_the_rule_writer_itself_refuses_a_project_layer_of_an_untrusted_workspace(
    tmp_path: Path, isolated_home: Path, setup: Setup, layer: RuleLayer, lands: str | None
) -> None:
    ws, outside = _places(tmp_path, isolated_home)
    resolved = resolve_config(setup(ws, outside, isolated_home))
    writer = user_layer_writer(resolved)
    writer_file = resolved.layer_file(Layer(str(layer)))
    before = _tree(tmp_path, isolated_home)
    with pytest.raises(RuleNotSavedError) as refused:
        writer(RULE, layer)
    assert (refused.value.rule, refused.value.layer) == (RULE, layer)
    assert (refused.value.reason, refused.value.hint) == _refusal(writer_file, layer, lands, outside, isolated_home)
    assert set(writer.refused) == {RuleLayer.PROJECT, RuleLayer.LOCAL}
    assert _tree(tmp_path, isolated_home) == before


async def test_always_in_the_user_layer_of_an_untrusted_workspace_is_saved(tmp_path: Path, isolated_home: Path) -> None:
    ws, outside = _places(tmp_path, isolated_home)
    resolved = resolve_config(_project_file(ws, outside, isolated_home))
    project_before = (ws / "kairox.toml").read_bytes()
    registry = await build_registry(resolved, approver=ScriptedApprover([ApprovalAnswer.allow_always(RULE)]))
    result = await registry.call(ToolCall(name="shell.exec", arguments={"command": "ls -a"}))
    assert not result.is_error, result.text_content()
    assert (isolated_home / "kairox.toml").read_text() == USER_TEXT + f'\n[policy.rules]\nallow = [\n    "{RULE}",\n]\n'
    assert (ws / "kairox.toml").read_bytes() == project_before


async def test_always_in_the_project_layer_of_a_trusted_workspace_is_saved_there(
    tmp_path: Path, isolated_home: Path
) -> None:
    ws, _ = _places(tmp_path, isolated_home)
    (ws / "kairox.toml").write_text("# project\n")
    trust_workspace(ws)
    resolved = resolve_config(ws)
    sink = RecordingSink()
    approver = ScriptedApprover([ApprovalAnswer.allow_always(RULE, layer=RuleLayer.PROJECT)])
    registry = await build_registry(resolved, approver=approver, events=sink)
    result = await registry.call(ToolCall(name="shell.exec", arguments={"command": "ls -a"}, call_id="c"))
    assert not result.is_error, result.text_content()
    assert approver.requests[0].layers == (RuleLayer.USER, RuleLayer.PROJECT, RuleLayer.LOCAL)
    assert sink.of_type(ToolCallApprovalAnswered) == [
        ToolCallApprovalAnswered(call_id="c", tool="shell.exec", approved=True, scope="always", persisted_rule=RULE)
    ]
    assert (ws / "kairox.toml").read_text() == f'# project\n\n[policy.rules]\nallow = [\n    "{RULE}",\n]\n'
    assert (isolated_home / "kairox.toml").read_text() == USER_TEXT
