"""``[sandbox] network`` and ``allowed_domains`` (Y14): only the user's own layers (user, system, ``-c``) may widen
what sandboxed processes reach; a project file, trusted or not, and a project's or plugin's server may only
narrow it, and each value that would widen is ignored with a diagnostic naming its file and key."""

from pathlib import Path

import pytest

from kairox.config import McpServerConfig, resolve_config, trust_workspace
from kairox.registry import registry_settings
from kairox.sandbox import server_profile

USER = '[sandbox]\nnetwork = "allowlist"\nallowed_domains = ["pypi.org", "*.github.com"]\n'


@pytest.fixture
def repo(tmp_path: Path, isolated_home: Path) -> Path:
    root = tmp_path / "repo"
    (root / ".git").mkdir(parents=True)
    return root


def project(repo: Path, isolated_home: Path, user: str, text: str, *, trusted: bool) -> tuple[object, list[str]]:
    (isolated_home / "kairox.toml").write_text(user)
    (repo / "kairox.toml").write_text(text)
    if trusted:
        trust_workspace(repo)
    resolved = resolve_config(repo)
    sandbox = registry_settings(resolved).sandbox
    notes = [f"{d.name}: {d.reason}" for d in resolved.diagnostics]
    return (sandbox.network_access, sandbox.allowed_domains), notes


@pytest.mark.parametrize("trusted", [False, True], ids=["untrusted", "trusted"])
def test_a_project_may_narrow_the_list(repo: Path, isolated_home: Path, trusted: bool) -> None:
    text = '[sandbox]\nallowed_domains = ["pypi.org", "api.github.com", "*.raw.github.com"]\n'
    assert project(repo, isolated_home, USER, text, trusted=trusted) == (
        (False, ("pypi.org", "api.github.com", "*.raw.github.com")),
        [],
    )


@pytest.mark.parametrize("trusted", [False, True], ids=["untrusted", "trusted"])
@pytest.mark.parametrize(
    ("text", "why"),
    [
        ('[sandbox]\nallowed_domains = ["pypi.org", "evil.example"]\n', "it names evil.example, which your own"),
        ('[sandbox]\nallowed_domains = ["github.com"]\n', "it names github.com, which your own"),
        ('[sandbox]\nnetwork = "on"\n', "it sets the network to 'on' where yours is 'allowlist'"),
    ],
    ids=["another-name", "the-pattern's-own-name", "network-on"],
)
def test_a_project_cannot_widen_the_list_even_when_trusted(
    repo: Path, isolated_home: Path, trusted: bool, text: str, why: str
) -> None:
    found, notes = project(repo, isolated_home, USER, text, trusted=trusted)

    assert found == (False, ("pypi.org", "*.github.com"))
    assert len(notes) == 1 and why in notes[0] and "a project file may only narrow the network; ignored" in notes[0]


def test_a_project_cannot_turn_the_allowlist_on_where_the_user_has_no_network(repo: Path, isolated_home: Path) -> None:
    text = '[sandbox]\nnetwork = "allowlist"\nallowed_domains = ["pypi.org"]\n'
    found, notes = project(repo, isolated_home, "", text, trusted=True)

    assert found == (False, None)
    assert [n.split(":")[0] for n in notes] == ["sandbox.network", "sandbox.allowed_domains"]


def test_a_project_may_narrow_the_network_from_on_to_a_list(repo: Path, isolated_home: Path) -> None:
    text = '[sandbox]\nnetwork = "allowlist"\nallowed_domains = ["pypi.org"]\n'
    assert project(repo, isolated_home, "[policy]\nnetwork_access = true\n", text, trusted=False) == (
        (False, ("pypi.org",)),
        [],
    )


def test_the_command_line_may_widen_the_list(repo: Path, isolated_home: Path) -> None:
    (isolated_home / "kairox.toml").write_text(USER)
    resolved = resolve_config(repo, cli_overrides=['sandbox.allowed_domains=["pypi.org", "files.example"]'])
    assert registry_settings(resolved).sandbox.allowed_domains == ("pypi.org", "files.example")
    assert registry_settings(resolved).policy.network_access is False


def test_an_address_in_the_list_is_a_problem_naming_the_file_and_key(repo: Path, isolated_home: Path) -> None:
    (isolated_home / "kairox.toml").write_text('[sandbox]\nallowed_domains = ["pypi.org", "10.0.0.1", "[::1]"]\n')
    problems = resolve_config(repo).problems
    assert [(p.key, Path(p.file).name) for p in problems] == [("sandbox.allowed_domains", "kairox.toml")]
    assert "'10.0.0.1', '[::1]': neither a host name (pypi.org) nor *.NAME (*.example.com)" in problems[0].message


# --- servers: their own list, held to who wrote them ------------------------------------------------------------


def profile(tmp_path: Path, layer: str, session: tuple[str, ...] | None, **entry: object) -> tuple[object, list[str]]:
    found = server_profile(
        "mcp_servers", "s", McpServerConfig(command="x", **entry), layer=layer, where="kairox.toml:3",  # type: ignore[arg-type]
        base_dir=tmp_path, workspace=tmp_path, home=tmp_path, session_domains=session,
    )  # fmt: skip
    return (found.network, found.allowed_domains), [d.reason for d in found.diagnostics]


SESSION = ("pypi.org", "*.github.com")


def test_a_server_follows_the_sessions_list_unless_its_entry_says_otherwise(tmp_path: Path) -> None:
    assert profile(tmp_path, "project", SESSION) == ((True, SESSION), [])
    assert profile(tmp_path, "user", None) == ((True, None), [])  # no session list: the network, as before
    assert profile(tmp_path, "project", SESSION, network=False) == ((False, None), [])
    assert profile(tmp_path, "user", SESSION, network=True) == ((True, None), [])  # the user's own server


def test_a_project_or_plugin_server_reaches_at_most_the_sessions_names(tmp_path: Path) -> None:
    wide, notes = profile(tmp_path, "project", SESSION, network="allowlist", allowed_domains=["api.github.com", "x.io"])
    assert wide == (True, ("api.github.com",))
    assert notes == [
        "mcp_servers.s may not reach x.io: only your own sandbox.allowed_domains may widen the network; ignored"
    ]
    on, notes = profile(tmp_path, "plugin:kit", SESSION, network=True)
    assert on == (True, SESSION) and "may not reach any host" in notes[0]
    # the user's own server may have a list of its own, wider than the session's
    assert profile(tmp_path, "user", SESSION, network="allowlist", allowed_domains=["x.io"]) == ((True, ("x.io",)), [])
