"""The toggles every front end shares (kairox.runtime): skills and plugins written to the chosen layer, and the
question a write into a project file of an untrusted workspace asks first."""

from pathlib import Path

import anyio
import pytest

from kairox.config import Layer, TrustStore, resolve_config
from kairox.policy import ApprovalAnswer, ApprovalRequest
from kairox.runtime import CONFIG_WRITE_TOOL, ConfigWriteDeniedError, authorize_config_write

pytestmark = pytest.mark.anyio


class Person:
    """The approver: answers each question with the next of its answers, and remembers the questions."""

    def __init__(self, *answers: ApprovalAnswer) -> None:
        self.answers = list(answers)
        self.asked: list[ApprovalRequest] = []

    async def request_approval(self, request: ApprovalRequest) -> ApprovalAnswer:
        self.asked.append(request)
        return self.answers.pop(0)


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    (root / ".git").mkdir(parents=True)
    return root


async def test_project_and_local_writes_of_an_untrusted_workspace_ask_and_a_no_stops_them(
    workspace: Path, isolated_home: Path
) -> None:
    resolved = resolve_config(workspace)
    person = Person(ApprovalAnswer.allow_once(), ApprovalAnswer.deny("not now"))
    await authorize_config_write(resolved, resolved.layer_file(Layer.USER), "a = 1", approver=person)
    assert person.asked == []  # the user's own file
    project = resolved.layer_file(Layer.PROJECT)
    await authorize_config_write(resolved, project, "skills.entries.x.enabled = false", approver=person)
    with pytest.raises(ConfigWriteDeniedError, match="not now") as denied:
        await authorize_config_write(resolved, resolved.layer_file(Layer.LOCAL), "b = 2", approver=person)
    assert denied.value.file == resolved.layer_file(Layer.LOCAL)
    assert [(r.tool, r.arguments["path"], r.grants) for r in person.asked] == [
        (CONFIG_WRITE_TOOL, str(project), ()),
        (CONFIG_WRITE_TOOL, str(resolved.layer_file(Layer.LOCAL)), ()),
    ]
    assert person.asked[0].arguments["change"] == "skills.entries.x.enabled = false"


async def test_a_trusted_workspace_writes_its_project_file_without_a_question(
    workspace: Path, isolated_home: Path
) -> None:
    TrustStore(isolated_home).trust(workspace, resolve_config(workspace).pinnable)
    resolved = resolve_config(workspace)
    assert resolved.trusted
    person = Person()
    with anyio.fail_after(10):
        await authorize_config_write(resolved, resolved.layer_file(Layer.PROJECT), "a = 1", approver=person)
    assert person.asked == []


async def test_any_other_file_of_an_untrusted_workspace_asks_too_and_the_user_file_never_does(
    workspace: Path, isolated_home: Path, tmp_path: Path
) -> None:
    resolved = resolve_config(workspace)
    person = Person(*[ApprovalAnswer.allow_once()] * 3)
    mcp_json = workspace / ".mcp.json"
    other_spelling = workspace / ".kairox" / ".." / "kairox.toml"
    await authorize_config_write(resolved, mcp_json, "remove mcpServers.j", approver=person)
    await authorize_config_write(resolved, other_spelling, "a = 1", approver=person)
    (workspace / "link.toml").symlink_to(resolved.layer_file(Layer.PROJECT))
    await authorize_config_write(resolved, workspace / "link.toml", "a = 1", approver=person)
    await authorize_config_write(resolved, tmp_path / "elsewhere.toml", "a = 1", approver=person)
    assert [r.reason.split(" of a workspace")[0] for r in person.asked] == [
        f"{mcp_json} is the .mcp.json file",
        f"{other_spelling} is the project file",
        f"{workspace / 'link.toml'} is the project file",
    ]


async def test_the_user_file_inside_the_workspace_is_still_the_users(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "home-as-workspace"
    (root / ".git").mkdir(parents=True)
    monkeypatch.setenv("KAIROX_HOME", str(root / ".kairox"))
    resolved = resolve_config(root)
    assert not resolved.trusted and root in resolved.layer_file(Layer.USER).parents
    person = Person()
    await authorize_config_write(resolved, resolved.layer_file(Layer.USER), "a = 1", approver=person)
    assert person.asked == []


async def test_a_refusal_names_the_file_and_the_change(workspace: Path, isolated_home: Path) -> None:
    resolved = resolve_config(workspace)
    project = resolved.layer_file(Layer.PROJECT)
    with pytest.raises(ConfigWriteDeniedError) as denied:
        await authorize_config_write(
            resolved, project, 'model = "x"', approver=Person(ApprovalAnswer.deny("denied at the prompt"))
        )
    assert (denied.value.file, denied.value.change) == (project, 'model = "x"')
    assert str(denied.value) == (
        f'{project} is unchanged (model = "x"): denied at the prompt\n'
        "  hint: trust the workspace (`kairox trust`) or write to the user layer instead"
    )
