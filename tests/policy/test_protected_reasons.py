"""An approval's reason names the file for what it is to the user: their own configuration (every workspace reads
it), this workspace's project configuration, or a configuration file elsewhere; the same words reach the TUI, the
GUI's dialog and the command line, since they all show the gate's reason."""

from pathlib import Path

from kairox.config import Layer, resolve_config
from kairox.policy import PolicyEngine, Verdict
from kairox.registry import registry_settings
from kairox.tools import BUILTIN_SPECS

WRITE = next(spec for spec in BUILTIN_SPECS if spec.name == "fs.write")


def reason_for(workspace: Path, path: Path) -> str:
    resolved = resolve_config(workspace)
    decision = PolicyEngine(registry_settings(resolved).policy).decide(WRITE, {"path": str(path), "content": "x = 1\n"})
    assert decision.verdict is Verdict.ASK
    return decision.reason


def test_the_users_own_kairox_toml_is_named_the_user_configuration_never_project_configuration(
    tmp_path: Path, isolated_home: Path
) -> None:
    workspace = tmp_path / "shop"
    (workspace / ".git").mkdir(parents=True)
    user_file = resolve_config(workspace).layer_file(Layer.USER)
    assert user_file == isolated_home / "kairox.toml"
    mine = reason_for(workspace, user_file)
    assert mine.startswith(f"{user_file} is your user configuration (it applies to every workspace)")
    assert "project" not in mine

    project = reason_for(workspace, workspace / "kairox.toml")
    assert project.startswith(f"{workspace / 'kairox.toml'} is this workspace's project configuration")

    elsewhere = tmp_path / "other" / "kairox.toml"
    other = reason_for(workspace, elsewhere)
    assert other.startswith(f"{elsewhere} is a Kairox configuration file outside this workspace")
    assert "project" not in other and "user configuration" not in other
    # the rest of Kairox's home keeps its own words
    trust = reason_for(workspace, isolated_home / "trust.json")
    assert f"inside {isolated_home}, Kairox's own configuration and trust store" in trust
