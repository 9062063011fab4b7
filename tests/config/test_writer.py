"""C8: `kairox config set/unset` edit the right layer's file and keep every comment."""

from pathlib import Path

import pytest
from tests.helpers import kairox

from kairox.config import set_value
from kairox.errors import ConfigWriteError

COMMENTED = """\
# Kairox user configuration
model = "gpt-5"  # the default model

# policy for every workspace
[policy]
# ask before anything risky
approval_policy = "on_request"

[policy.rules]
deny = [
    "fs.read(~/.ssh/**)",  # keys stay private
]
"""


def test_config_set_keeps_every_comment(tmp_path: Path, isolated_home: Path) -> None:
    user_file = isolated_home / "kairox.toml"
    user_file.write_text(COMMENTED, encoding="utf-8")
    assert kairox("config", "set", "policy.approval_policy", "untrusted", cwd=tmp_path).code == 0
    assert kairox("config", "set", "policy.network_access", "true", cwd=tmp_path).code == 0
    assert kairox("config", "set", 'skills.entries."pr-review".enabled', "false", cwd=tmp_path).code == 0
    text = user_file.read_text(encoding="utf-8")
    for line in COMMENTED.splitlines():
        if line.strip().startswith("#") or "#" in line:
            comment = line[line.index("#") :]
            assert comment in text, comment
    assert 'approval_policy = "untrusted"' in text
    data = kairox("config", "show", "--json", cwd=tmp_path).json()
    assert data["config"]["policy"]["approval_policy"] == "untrusted"
    assert data["config"]["policy"]["network_access"] is True
    assert data["config"]["skills"]["entries"]["pr-review"] == {"enabled": False}

    assert kairox("config", "unset", "policy.network_access", cwd=tmp_path).code == 0
    assert "network_access" not in user_file.read_text(encoding="utf-8")
    assert "# ask before anything risky" in user_file.read_text(encoding="utf-8")


def test_config_set_refuses_a_value_that_breaks_the_schema(tmp_path: Path, isolated_home: Path) -> None:
    user_file = isolated_home / "kairox.toml"
    user_file.write_text(COMMENTED, encoding="utf-8")
    run = kairox("config", "set", "policy.aproval_policy", "never", cwd=tmp_path)
    assert run.code == 3
    assert "did you mean 'approval_policy'?" in run.stderr
    assert user_file.read_text(encoding="utf-8") == COMMENTED


def test_config_set_writes_the_chosen_layer(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    assert (
        kairox("trust", cwd=tmp_path).code == 0
    )  # an untrusted workspace's files are written only when the user says so
    assert kairox("config", "set", "model", "local-model", "--layer", "local", cwd=tmp_path).code == 0
    assert (tmp_path / ".kairox" / "kairox.local.toml").read_text(encoding="utf-8") == 'model = "local-model"\n'
    assert kairox("config", "set", "tools.default_timeout_sec", "45", "--layer", "project", cwd=tmp_path).code == 0
    assert "default_timeout_sec = 45" in (tmp_path / "kairox.toml").read_text(encoding="utf-8")


def test_a_user_file_kept_in_a_dotfiles_folder_is_written_through_its_link(tmp_path: Path, isolated_home: Path) -> None:
    dotfiles = tmp_path / "dotfiles" / "kairox"
    dotfiles.mkdir(parents=True)
    kept = dotfiles / "kairox.toml"
    kept.write_text(COMMENTED, encoding="utf-8")
    kept.chmod(0o644)
    user_file = isolated_home / "kairox.toml"
    user_file.symlink_to(kept)
    assert kairox("config", "set", "policy.approval_policy", "untrusted", cwd=tmp_path).code == 0
    assert user_file.is_symlink() and user_file.resolve() == kept  # the link stays; what it leads to changed
    text = kept.read_text(encoding="utf-8")
    assert 'approval_policy = "untrusted"' in text and "# keys stay private" in text
    assert kept.stat().st_mode & 0o777 == 0o644  # the file keeps its mode
    assert sorted(p.name for p in dotfiles.iterdir()) == ["kairox.toml"]  # no temporary file left
    assert sorted(p.name for p in isolated_home.iterdir() if p.name.startswith(".kairox.toml")) == []
    data = kairox("config", "show", "--json", cwd=tmp_path).json()
    assert data["config"]["policy"]["approval_policy"] == "untrusted"


def test_a_new_file_is_readable_by_its_owner_only_and_an_existing_one_keeps_its_mode(tmp_path: Path) -> None:
    fresh = tmp_path / "new" / "kairox.toml"
    set_value(fresh, "model", "a")
    assert fresh.stat().st_mode & 0o777 == 0o600
    shared = tmp_path / "shared.toml"
    shared.write_text('model = "b"\n', encoding="utf-8")
    shared.chmod(0o640)
    set_value(shared, "model", "c")
    assert shared.read_text(encoding="utf-8") == 'model = "c"\n'
    assert shared.stat().st_mode & 0o777 == 0o640


def test_a_project_file_linked_to_a_shared_file_of_the_repository_changes_that_file(tmp_path: Path) -> None:
    shared = tmp_path / "config" / "team.toml"
    shared.parent.mkdir()
    shared.write_text("# the team's settings\n[tools]\ndefault_timeout_sec = 30\n", encoding="utf-8")
    project = tmp_path / "service" / "kairox.toml"
    project.parent.mkdir()
    project.symlink_to(Path("..") / "config" / "team.toml")
    set_value(project, "tools.default_timeout_sec", 45)
    assert project.is_symlink()
    assert shared.read_text(encoding="utf-8") == "# the team's settings\n[tools]\ndefault_timeout_sec = 45\n"


def test_a_write_that_cannot_be_made_names_the_file_and_its_link_and_changes_nothing(
    tmp_path: Path, isolated_home: Path
) -> None:
    blocker = tmp_path / "dotfiles"
    blocker.write_text("a file where a folder was expected\n", encoding="utf-8")
    user_file = isolated_home / "kairox.toml"
    user_file.symlink_to(blocker / "kairox.toml")  # leads under a regular file: no folder can be made there
    run = kairox("config", "set", "model", "x", cwd=tmp_path)
    assert run.code != 0
    assert f"{user_file} (a link to {blocker / 'kairox.toml'}): cannot write" in run.stderr, run.stderr
    assert "Traceback" not in run.stderr
    assert blocker.read_text(encoding="utf-8") == "a file where a folder was expected\n"
    with pytest.raises(ConfigWriteError, match="cannot write"):
        set_value(user_file, "model", "x")
