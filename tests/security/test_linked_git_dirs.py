"""A repository folder reached through a ``.git`` symlink or a ``.git`` file (``gitdir: ...``) is kept read-only in
the sandbox as a ``.git`` folder is (attack corpus): its hooks run outside the sandbox at the user's next commit
or checkout, its config names programs git runs. Real git, real bwrap, the real registry."""

import subprocess
from pathlib import Path

import pytest
from tests.registry._support import settings
from tests.security._support import workspace

from kairox.policy import NonInteractiveApprover
from kairox.registry import build_registry
from kairox.tools import ToolCall

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(60)]

WRITES = (
    "echo 'touch {marker}' > {repo}/hooks/pre-commit; chmod +x "
    "{repo}/hooks/pre-commit; git config core.fsmonitor 'touch {marker}'; echo tried"
)


def _linked(ws: Path, how: str) -> Path:
    """A repository for the workspace whose folder lies elsewhere in it; returns that folder."""
    repo = ws / "store" / "project.git"
    repo.parent.mkdir()
    if how == "symlink":
        subprocess.run(["git", "init", "-q", str(ws)], check=True)
        (ws / ".git").rename(repo)
        (ws / ".git").symlink_to("store/project.git")
    else:
        subprocess.run(["git", "init", "-q", f"--separate-git-dir={repo}", str(ws)], check=True)
        assert (ws / ".git").read_text().startswith("gitdir:")
    return repo


@pytest.mark.parametrize("how", ["symlink", "gitdir-file"])
async def test_a_linked_repository_folder_is_read_only_in_the_sandbox(tmp_path: Path, how: str) -> None:
    ws = workspace(tmp_path)
    repo = _linked(ws, how)
    marker = tmp_path / "marker"
    hooks_before = sorted(p.name for p in (repo / "hooks").iterdir())
    config_before = (repo / "config").read_text()
    registry = await build_registry(settings(ws), approver=NonInteractiveApprover())

    result = await registry.call(
        ToolCall(name="shell.exec", arguments={"command": WRITES.format(marker=marker, repo=repo)})
    )

    assert "tried" in result.text_content(), result.text_content()
    assert sorted(p.name for p in (repo / "hooks").iterdir()) == hooks_before
    assert (repo / "config").read_text() == config_before
    assert not marker.exists()
