"""C8: `kairox config set/unset` edit the right layer's file and keep every comment."""

from pathlib import Path

from tests.helpers import kairox

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
    assert kairox("config", "set", "skills.entries.\"pr-review\".enabled", "false", cwd=tmp_path).code == 0
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
    assert kairox("trust", cwd=tmp_path).code == 0  # an untrusted workspace's files are written only when the user says so
    assert kairox("config", "set", "model", "local-model", "--layer", "local", cwd=tmp_path).code == 0
    assert (tmp_path / ".kairox" / "kairox.local.toml").read_text(encoding="utf-8") == 'model = "local-model"\n'
    assert kairox("config", "set", "tools.default_timeout_sec", "45", "--layer", "project", cwd=tmp_path).code == 0
    assert "default_timeout_sec = 45" in (tmp_path / "kairox.toml").read_text(encoding="utf-8")
