"""A server's sandbox profile is held to who wrote its entry: a project file, a ``.mcp.json`` or a plugin cannot
unconfine its own server nor widen what it writes beyond the workspace; the user's file, ``-c`` and
``policy.unconfined_servers`` in the user's file can."""

import json
from pathlib import Path

import pytest

from kairox.config import McpServerConfig, resolve_config
from kairox.mcp import configured_servers
from kairox.sandbox import server_profile


@pytest.fixture
def places(tmp_path: Path) -> tuple[Path, Path, Path]:
    ws, home, outside = tmp_path / "ws", tmp_path / "home", tmp_path / "outside"
    for folder in (ws, home, outside):
        folder.mkdir()
    (home / "trusted_workspaces.json").write_text('{"workspaces": {}}')
    return ws, home, outside


def entry(outside: Path, **extra: object) -> McpServerConfig:
    return McpServerConfig(command="srv", sandbox="none", writable_roots=[str(outside), "data"], **extra)  # type: ignore[arg-type]


@pytest.mark.parametrize("layer", ["project", "local", ".mcp.json", "plugin", "added"])
def test_a_server_the_user_did_not_write_stays_confined(places: tuple[Path, Path, Path], layer: str) -> None:
    ws, home, outside = places
    profile = server_profile(
        "mcp_servers", "x", entry(outside), layer=layer, where=f"{ws}/file:3", base_dir=ws, workspace=ws, home=home
    )
    assert (profile.sandbox, profile.user_owned) == ("workspace_write", False)
    assert profile.writable_roots == ((ws / "data").resolve(),)  # inside the workspace: kept; outside: dropped
    reasons = [d.reason for d in profile.diagnostics]
    assert any('mcp_servers.x.sandbox = "none" is ignored' in r for r in reasons), reasons
    assert any(f"names {outside.resolve()}, outside the workspace" in r for r in reasons), reasons
    assert all(d.source == f"{ws}/file:3" for d in profile.diagnostics)
    assert "policy.unconfined_servers" in (profile.diagnostics[0].hint or "")
    # one per workspace: a hostile repository's server never shares a state folder with another workspace's
    other = server_profile(
        "mcp_servers", "x", entry(outside), layer=layer, where=None, base_dir=ws, workspace=outside, home=home
    )
    assert other.state_name != profile.state_name and profile.state_name.startswith("x@")


@pytest.mark.parametrize("layer", ["user", "system", "cli", "env"])
def test_the_users_own_entry_is_taken_as_written(places: tuple[Path, Path, Path], layer: str) -> None:
    ws, home, outside = places
    profile = server_profile(
        "mcp_servers", "x", entry(outside), layer=layer, where=None, base_dir=ws, workspace=ws, home=home
    )
    assert (profile.sandbox, profile.user_owned, profile.diagnostics) == ("none", True, ())
    assert outside.resolve() in profile.writable_roots and profile.state_name == "x"


def test_cli_and_the_users_policy_key_lift_a_project_server(
    places: tuple[Path, Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    ws, home, _ = places
    monkeypatch.setenv("KAIROX_HOME", str(home))
    (ws / ".mcp.json").write_text(
        json.dumps({"mcpServers": {"j": {"command": "srv", "sandbox": "none", "network": False}}})
    )
    (ws / "kairox.toml").write_text('[policy]\nunconfined_servers = ["mcp_servers.j"]\n')  # a project's: ignored
    resolved = resolve_config(ws, env={"KAIROX_HOME": str(home)})
    assert any(d.name == "policy.unconfined_servers" and "ignored" in d.reason for d in resolved.diagnostics)
    servers, _ = configured_servers(resolved)
    profile = servers["j"].profile
    assert profile is not None and (profile.sandbox, profile.network, profile.user_owned) == (
        "workspace_write",
        False,
        False,
    )

    freed = resolve_config(
        ws, env={"KAIROX_HOME": str(home)}, cli_overrides=['mcp_servers.j.sandbox="none"', "mcp_servers.j.network=true"]
    )
    profile = configured_servers(freed)[0]["j"].profile
    assert profile is not None and (profile.sandbox, profile.network, profile.user_owned) == ("none", True, True)

    (home / "kairox.toml").write_text('[policy]\nunconfined_servers = ["mcp_servers.j"]\n')
    accepted = resolve_config(ws, env={"KAIROX_HOME": str(home)})
    profile = configured_servers(accepted)[0]["j"].profile
    assert profile is not None and (profile.sandbox, profile.user_owned) == ("none", True)

    bad = resolve_config(ws, env={"KAIROX_HOME": str(home)}, cli_overrides=['mcp_servers.j.sandbox="open"'])
    assert [p.key for p in bad.problems] == ["mcp_servers.j.sandbox"]


def test_a_remote_server_cannot_set_a_profile(places: tuple[Path, Path, Path]) -> None:
    with pytest.raises(ValueError, match="cannot set sandbox"):
        McpServerConfig.model_validate({"url": "http://127.0.0.1:1/mcp", "sandbox": "read_only"})
