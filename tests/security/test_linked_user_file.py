"""A workspace's file that a link makes the user's own ``kairox.toml`` (attack corpus): a write aimed at the
workspace (the project or local layer, or any file reached through the workspace) is refused before a byte is
written, trusted workspace or not, and the refusal names the file, the link's target and what to do. Without the
refusal such a write either edits the user's file for every workspace (a linked folder) or copies the user's
settings (their model endpoints too) into the workspace's file (a
linked file, which the writer replaces). The user's file named
by its own path stays the user's: written without a question. Read, the linked file is the user layer only."""

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
from tests.helpers import kairox
from tests.registry._support import ScriptedApprover
from tests.runtime.test_toggles import Person
from tests.security.test_untrusted_rule_writes import _tree

from kairox.cli._common import ExitCode
from kairox.config import Layer, ResolvedConfig, resolve_config, trust_workspace
from kairox.config._layers import LayerStatus
from kairox.policy import ApprovalAnswer, RuleLayer
from kairox.registry import build_registry, user_layer_writer
from kairox.registry._approvals import RuleNotSavedError
from kairox.runtime import ConfigWriteDeniedError, authorize_config_write
from kairox.tools import ToolCall

pytestmark = pytest.mark.anyio

USER_TEXT = (
    '# my settings\n[model_providers.mine]\nbase_url = "https://models.example"\n'
    'api_key_env = "MINE_KEY"\n\n[policy.rules]\nallow = ["fs.read"]\n'
)
EVERYWHERE = "a change meant for this workspace would hold in every workspace"
HINT = "write to the user layer if the change is meant for every workspace, or replace the link with a file of its own"


@dataclass(frozen=True)
class Spelling:
    """How the workspace reaches the user's file, and the file a writer is handed."""

    workspace: Path
    """What the session is opened on."""
    file: Callable[[ResolvedConfig], Path]
    what: str
    """What the refusal calls the file: ``the project file of this workspace``, ``a file of this workspace``."""
    reverse: bool = False
    """The user's file is the link (to the workspace's file), not the other way round."""


def _nested_project_link(ws: Path, home: Path) -> Spelling:
    (ws / ".kairox").mkdir()
    (ws / ".kairox" / "kairox.toml").symlink_to(home / "kairox.toml")
    return Spelling(ws, lambda r: r.layer_file(Layer.PROJECT), "the project file of this workspace")


def _root_project_link(ws: Path, home: Path) -> Spelling:
    (ws / "kairox.toml").symlink_to(home / "kairox.toml")
    return Spelling(ws, lambda r: r.layer_file(Layer.PROJECT), "the project file of this workspace")


def _relative_link_through_dotdot(ws: Path, home: Path) -> Spelling:
    (ws / ".kairox").mkdir()
    (ws / ".kairox" / "kairox.toml").symlink_to(os.path.relpath(home / "kairox.toml", ws / ".kairox"))
    return Spelling(ws, lambda r: r.layer_file(Layer.PROJECT), "the project file of this workspace")


def _local_link(ws: Path, home: Path) -> Spelling:
    (ws / ".kairox").mkdir()
    (ws / ".kairox" / "kairox.local.toml").symlink_to(home / "kairox.toml")
    return Spelling(ws, lambda r: r.layer_file(Layer.LOCAL), "the local file of this workspace")


def _linked_folder(ws: Path, home: Path) -> Spelling:
    (ws / ".kairox").symlink_to(home, target_is_directory=True)  # the folder, not the file: the writer renames into it
    return Spelling(ws, lambda r: r.layer_file(Layer.PROJECT), "the project file of this workspace")


def _chain_of_links(ws: Path, home: Path) -> Spelling:
    (ws / "conf").mkdir()
    (ws / "conf" / "shared.toml").symlink_to(home / "kairox.toml")
    (ws / "kairox.toml").symlink_to(Path("conf") / "shared.toml")
    return Spelling(ws, lambda r: r.layer_file(Layer.PROJECT), "the project file of this workspace")


def _dangling_link_before_the_user_file_exists(ws: Path, home: Path) -> Spelling:
    (home / "kairox.toml").unlink()  # a write would create the user's file
    (ws / "kairox.toml").symlink_to(home / "kairox.toml")
    return Spelling(ws, lambda r: r.layer_file(Layer.PROJECT), "the project file of this workspace")


def _workspace_opened_through_a_link(ws: Path, home: Path) -> Spelling:
    (ws / ".kairox").mkdir()
    (ws / ".kairox" / "kairox.toml").symlink_to(home / "kairox.toml")
    link = ws.parent / "ws-link"
    link.symlink_to(ws, target_is_directory=True)
    return Spelling(link, lambda r: r.layer_file(Layer.PROJECT), "the project file of this workspace")


def _project_file_spelled_with_dotdot(ws: Path, home: Path) -> Spelling:
    (ws / "src").mkdir()
    (ws / ".kairox").mkdir()
    (ws / ".kairox" / "kairox.toml").symlink_to(home / "kairox.toml")
    return Spelling(
        ws, lambda r: r.workspace / "src" / ".." / ".kairox" / "kairox.toml", "the project file of this workspace"
    )


def _project_file_spelled_through_the_workspace_link(ws: Path, home: Path) -> Spelling:
    (ws / "kairox.toml").symlink_to(home / "kairox.toml")
    link = ws.parent / "ws-link"
    link.symlink_to(ws, target_is_directory=True)
    return Spelling(ws, lambda r: link / "kairox.toml", "the project file of this workspace")


def _another_file_of_the_workspace(ws: Path, home: Path) -> Spelling:
    (ws / "settings.toml").symlink_to(home / "kairox.toml")
    return Spelling(ws, lambda r: r.workspace / "settings.toml", "a file of this workspace")


def _dotdot_past_a_linked_folder(ws: Path, home: Path) -> Spelling:
    # spelled, ws/inner/../kairox.toml is the project file; the kernel walks `..` from the link's target: the user's
    (home / "inner").mkdir()
    (ws / "inner").symlink_to(home / "inner", target_is_directory=True)
    return Spelling(ws, lambda r: r.workspace / "inner" / ".." / "kairox.toml", "the project file of this workspace")


def _the_user_file_links_to_the_project_file(ws: Path, home: Path) -> Spelling:
    (ws / "kairox.toml").write_text((home / "kairox.toml").read_text())
    (home / "kairox.toml").unlink()
    (home / "kairox.toml").symlink_to(ws / "kairox.toml")  # the user keeps their settings in this repository
    return Spelling(ws, lambda r: r.layer_file(Layer.PROJECT), "the project file of this workspace", reverse=True)


SPELLINGS = [
    _nested_project_link,
    _root_project_link,
    _relative_link_through_dotdot,
    _local_link,
    _linked_folder,
    _chain_of_links,
    _dangling_link_before_the_user_file_exists,
    _workspace_opened_through_a_link,
    _project_file_spelled_with_dotdot,
    _project_file_spelled_through_the_workspace_link,
    _another_file_of_the_workspace,
    _dotdot_past_a_linked_folder,
    _the_user_file_links_to_the_project_file,
]
IDS = [setup.__name__.lstrip("_") for setup in SPELLINGS]


def _places(tmp_path: Path, home: Path) -> Path:
    ws = tmp_path / "ws"
    (ws / ".git").mkdir(parents=True)
    (home / "kairox.toml").write_text(USER_TEXT)
    return ws


def _expected(file: Path, spelling: Spelling, home: Path) -> str:
    user = home / "kairox.toml"
    how = f"your user file too ({user} is a link to it)" if spelling.reverse else f"a link to {user}, your user file"
    return f"{file} is {spelling.what} but {how}: {EVERYWHERE}"


@pytest.mark.parametrize("trusted", [False, True], ids=["untrusted", "trusted"])
@pytest.mark.parametrize("setup", SPELLINGS, ids=IDS)
async def test_a_workspace_write_that_a_link_sends_into_the_user_file_is_refused_without_a_question(
    tmp_path: Path, isolated_home: Path, setup: Callable[[Path, Path], Spelling], trusted: bool
) -> None:
    spelling = setup(_places(tmp_path, isolated_home), isolated_home)
    if trusted:
        trust_workspace(spelling.workspace)
    resolved = resolve_config(spelling.workspace)
    assert resolved.trusted is trusted
    file = spelling.file(resolved)
    person = Person(ApprovalAnswer.allow_once())  # a yes, were it asked: it must not be
    with pytest.raises(ConfigWriteDeniedError) as refused:
        await authorize_config_write(resolved, file, 'model = "x"', approver=person)
    assert person.asked == []
    assert (refused.value.file, refused.value.change) == (file, 'model = "x"')
    assert (
        str(refused.value)
        == f'{file} is unchanged (model = "x"): {_expected(file, spelling, isolated_home)}\n  hint: {HINT}'
    )


@pytest.mark.parametrize("setup", SPELLINGS, ids=IDS)
async def test_the_user_file_by_its_own_path_is_written_without_a_question(
    tmp_path: Path, isolated_home: Path, setup: Callable[[Path, Path], Spelling]
) -> None:
    spelling = setup(_places(tmp_path, isolated_home), isolated_home)
    resolved = resolve_config(spelling.workspace)
    person = Person()
    await authorize_config_write(resolved, isolated_home / "kairox.toml", 'model = "x"', approver=person)
    assert person.asked == []


@pytest.mark.parametrize("trusted", [False, True], ids=["untrusted", "trusted"])
@pytest.mark.parametrize(
    ("setup", "layer"),
    [(_nested_project_link, "project"), (_linked_folder, "project"), (_local_link, "local")],
    ids=["file", "folder", "local"],
)
def test_config_set_in_a_linked_layer_exits_denied_and_changes_no_file(
    tmp_path: Path, isolated_home: Path, setup: Callable[[Path, Path], Spelling], layer: str, trusted: bool
) -> None:
    spelling = setup(_places(tmp_path, isolated_home), isolated_home)
    if trusted:
        trust_workspace(spelling.workspace)
    file = resolve_config(spelling.workspace).layer_file(Layer(layer))
    before = _tree(tmp_path, isolated_home)
    run = kairox(
        "--workspace",
        spelling.workspace,
        "config",
        "set",
        "--layer",
        layer,
        "--yes",
        "model",
        "x",
        cwd=spelling.workspace,
    )
    assert run.code == ExitCode.DENIED, run.stderr
    assert f'{file} is unchanged (model = "x"): {_expected(file, spelling, isolated_home)}' in run.stderr
    assert f"hint: {HINT}" in run.stderr
    assert _tree(tmp_path, isolated_home) == before


def test_config_set_in_the_user_layer_still_writes_the_users_file(tmp_path: Path, isolated_home: Path) -> None:
    spelling = _nested_project_link(_places(tmp_path, isolated_home), isolated_home)
    run = kairox("--workspace", spelling.workspace, "config", "set", "model", "mine", cwd=spelling.workspace)
    assert run.code == 0, run.stderr
    assert (isolated_home / "kairox.toml").read_text() == USER_TEXT.replace(
        "# my settings\n", '# my settings\nmodel = "mine"\n\n', 1
    )
    assert (spelling.workspace / ".kairox" / "kairox.toml").is_symlink()


@pytest.mark.parametrize(
    "setup",
    [_nested_project_link, _root_project_link, _linked_folder, _local_link, _the_user_file_links_to_the_project_file],
    ids=lambda s: s.__name__.lstrip("_"),
)
def test_a_linked_layer_is_read_once_as_the_users_and_the_link_is_reported(
    tmp_path: Path, isolated_home: Path, setup: Callable[[Path, Path], Spelling]
) -> None:
    spelling = setup(_places(tmp_path, isolated_home), isolated_home)
    resolved = resolve_config(spelling.workspace)
    linked = Layer.LOCAL if setup is _local_link else Layer.PROJECT
    file = resolved.layer_file(linked)
    real = Path(os.path.realpath(file))
    detail = f"one file with the user layer ({real}): read as the user layer only"
    assert [(i.layer, i.status, i.detail) for i in resolved.layers if i.layer in (Layer.USER, linked)] == [
        (Layer.USER, LayerStatus.LOADED, None),
        (linked, LayerStatus.SHARED, detail),
    ]
    # the user's own rule, once, as theirs: not listed again as the workspace's, waiting for trust
    assert [(r.pattern, r.layer, r.file) for r in resolved.rules] == [
        ("fs.read", Layer.USER, isolated_home / "kairox.toml")
    ]
    assert resolved.pending == ()
    assert resolved.config.model_providers["mine"].base_url == "https://models.example"
    assert [(d.kind, d.name, d.source, d.reason, d.hint) for d in resolved.diagnostics] == [
        (
            "config",
            str(linked),
            str(file),
            f"the {linked} file is {detail}",
            f"remove the link and keep this workspace's settings in {file} itself",
        )
    ]


def test_a_workspace_holding_the_kairox_home_keeps_the_users_file_out_of_the_project_layer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "home-as-workspace"
    (root / ".git").mkdir(parents=True)
    (root / ".kairox").mkdir()
    (root / ".kairox" / "kairox.toml").write_text(USER_TEXT)
    monkeypatch.setenv("KAIROX_HOME", str(root / ".kairox"))
    monkeypatch.setenv("KAIROX_SYSTEM_CONFIG", str(tmp_path / "no-system.toml"))
    resolved = resolve_config(root)
    assert (resolved.layer_file(Layer.USER), resolved.layer_file(Layer.PROJECT)) == (
        root / ".kairox" / "kairox.toml",
        root / "kairox.toml",
    )
    assert resolved.layer_of(root / ".kairox" / "kairox.toml") is Layer.USER
    assert resolved.redirected_write(root / ".kairox" / "kairox.toml") is None
    assert resolved.untrusted_file(root / "kairox.toml") == "the project file"
    assert [(r.pattern, r.layer) for r in resolved.rules] == [("fs.read", Layer.USER)]


async def test_always_in_a_project_layer_linked_to_the_user_file_is_not_offered_in_a_trusted_workspace(
    tmp_path: Path, isolated_home: Path
) -> None:
    spelling = _nested_project_link(_places(tmp_path, isolated_home), isolated_home)
    user_text = USER_TEXT.replace("[policy.rules]", '[policy]\napproval_policy = "untrusted"\n\n[policy.rules]')
    (isolated_home / "kairox.toml").write_text(user_text)  # every call asks
    trust_workspace(spelling.workspace)
    resolved = resolve_config(spelling.workspace)
    writer = user_layer_writer(resolved)
    assert set(writer.refused) == {RuleLayer.PROJECT}
    before = _tree(tmp_path, isolated_home)
    with pytest.raises(RuleNotSavedError) as refused:
        writer("shell.exec(ls -a*)", RuleLayer.PROJECT)
    file = resolved.layer_file(Layer.PROJECT)
    assert refused.value.reason == _expected(file, spelling, isolated_home)
    assert (
        refused.value.hint
        == "save it in the user layer if it is meant for every workspace, or replace the link with a file of its own"
    )
    assert _tree(tmp_path, isolated_home) == before
    approver = ScriptedApprover([ApprovalAnswer.allow_always("shell.exec(ls -a*)", layer=RuleLayer.LOCAL)])
    registry = await build_registry(resolved, approver=approver)
    result = await registry.call(ToolCall(name="shell.exec", arguments={"command": "ls -a"}))
    assert not result.is_error, result.text_content()
    assert approver.requests[0].layers == (RuleLayer.USER, RuleLayer.LOCAL)
    assert (
        spelling.workspace / ".kairox" / "kairox.local.toml"
    ).read_text() == '[policy.rules]\nallow = [\n    "shell.exec(ls -a*)",\n]\n'
    assert (isolated_home / "kairox.toml").read_text() == user_text


def test_a_dangling_link_to_the_user_file_is_shared_before_the_user_file_exists(
    tmp_path: Path, isolated_home: Path
) -> None:
    spelling = _dangling_link_before_the_user_file_exists(_places(tmp_path, isolated_home), isolated_home)
    resolved = resolve_config(spelling.workspace)
    assert [(i.layer, i.status) for i in resolved.layers if i.layer in (Layer.USER, Layer.PROJECT)] == [
        (Layer.USER, LayerStatus.NOT_FOUND),
        (Layer.PROJECT, LayerStatus.SHARED),
    ]
    assert resolved.layer_of(resolved.layer_file(Layer.PROJECT)) is Layer.PROJECT  # named as the project file, it is
    assert resolved.layer_of(isolated_home / "kairox.toml") is Layer.USER
