"""Where plugins are found (P1), settings that disable a plugin or one contribution (P6), routing (P5)."""

from pathlib import Path

import pytest
from tests.plugins.conftest import make_plugin, write_json

from kairox.config import (
    KairoxConfig,
    LspServerConfig,
    McpServerConfig,
    resolve_config,
    trust_workspace,
)
from kairox.errors import Severity
from kairox.plugins import (
    ContributionKind,
    PluginManifestView,
    PluginOrigin,
    discover_from_resolved,
    route_plugins,
    set_contribution_enabled,
    set_plugin_enabled,
    set_plugin_path,
)
from kairox.plugins._discovery import discover_plugins


def _workspace_plugin(workspace: Path, name: str) -> Path:
    root = make_plugin(workspace / ".kairox" / "plugins" / name, {"name": name, "version": "1.0.0"}, skills=("review",))
    write_json(root / ".mcp.json", {"mcpServers": {"tracker": {"command": "tracker-server"}}})
    return root


def test_workspace_plugins_wait_for_trust(tmp_path: Path, isolated_home: Path) -> None:
    workspace = tmp_path / "ws"
    _workspace_plugin(workspace, "team")

    untrusted = discover_from_resolved(resolve_config(workspace))
    trust_workspace(workspace.resolve())
    trusted = discover_from_resolved(resolve_config(workspace))

    plugin = untrusted.get("team")
    assert plugin is not None
    assert (plugin.origin, plugin.enabled, plugin.disabled_reason) == (
        PluginOrigin.WORKSPACE,
        False,
        "workspace plugins wait for `kairox trust`",
    )
    assert untrusted.active() == ()
    assert [p.name for p in trusted.active()] == ["team"]


def test_paths_are_relative_to_the_file_that_lists_them(tmp_path: Path, isolated_home: Path) -> None:
    make_plugin(isolated_home / "mine" / "alpha", {"name": "alpha"}, skills=("one",))
    (isolated_home / "kairox.toml").write_text('[plugins]\npaths = ["mine/alpha"]\n')

    found = discover_from_resolved(resolve_config(tmp_path))

    assert [(p.name, p.origin, p.root, p.active) for p in found.plugins] == [
        ("alpha", PluginOrigin.PATH, (isolated_home / "mine" / "alpha").resolve(), True)
    ]


def test_disabled_plugin_and_disabled_contribution_are_not_routed(tmp_path: Path, isolated_home: Path) -> None:
    make_plugin(isolated_home / "mine" / "alpha", {"name": "alpha"}, skills=("one", "two"))
    beta = make_plugin(isolated_home / "mine" / "beta", {"name": "beta"}, skills=("three",))
    write_json(beta / ".mcp.json", {"srv": {"type": "http", "url": "https://beta.test/mcp"}})
    user_file = isolated_home / "kairox.toml"
    user_file.write_text('# my plugins\n[plugins]\npaths = ["mine/alpha", "mine/beta"]\n')

    set_contribution_enabled(user_file, "alpha", "skill:two", False)
    set_plugin_enabled(user_file, "beta", False)
    found = discover_from_resolved(resolve_config(tmp_path))
    routing = route_plugins(found.plugins)

    assert user_file.read_text() == (
        '# my plugins\n[plugins]\npaths = ["mine/alpha", "mine/beta"]\n\n'
        '[plugins.entries.alpha]\ndisabled_contributions = [\n    "skill:two",\n]\n\n'
        "[plugins.entries.beta]\nenabled = false\n"
    )
    assert [s.qualified_name for s in routing.skills] == ["alpha:one"]
    assert routing.mcp_servers == {}
    alpha = PluginManifestView.of(found.get("alpha"))  # type: ignore[arg-type]
    assert [(c.key, c.enabled) for c in alpha.contributions] == [("skill:one", True), ("skill:two", False)]


def test_entry_path_overrides_where_a_plugin_loads_from(tmp_path: Path, isolated_home: Path) -> None:
    make_plugin(isolated_home / "plugins" / "gamma", {"name": "gamma", "version": "1.0.0"})
    make_plugin(tmp_path / "dev" / "gamma", {"name": "gamma", "version": "2.0.0-dev"})
    set_plugin_path(isolated_home / "kairox.toml", "gamma", str(tmp_path / "dev" / "gamma"))

    found = discover_from_resolved(resolve_config(tmp_path))

    gamma = found.get("gamma")
    assert gamma is not None and (gamma.version, gamma.origin) == ("2.0.0-dev", PluginOrigin.PATH)
    assert [(d.severity, d.source) for d in found.diagnostics] == [
        (Severity.INFO, str((isolated_home / "plugins" / "gamma").resolve()))
    ]


def test_routing_gives_servers_with_plugin_provenance_and_the_users_entry_wins(tmp_path: Path) -> None:
    root = make_plugin(
        tmp_path / "srv",
        {"name": "srv", "lspServers": {"py": {"command": "pylsp", "extensionToLanguage": {".py": "python"}}}},
    )
    write_json(
        root / ".mcp.json",
        {"mcpServers": {"tracker": {"command": "tracker"}, "github": {"type": "http", "url": "https://x.test"}}},
    )
    config = KairoxConfig.model_validate(
        {"plugins": {"paths": [str(root)]}, "mcp_servers": {"github": {"command": "gh-mcp"}}}
    )

    found = discover_plugins(config, home=tmp_path / "home")
    routing = route_plugins(found.plugins, mcp_servers=config.mcp_servers, lsp_servers=config.lsp_servers)

    assert routing.mcp_servers == {"tracker": McpServerConfig(command="tracker", cwd=str(root.resolve()))}
    assert routing.lsp_servers == {"py": LspServerConfig(command="pylsp", languages=["python"], file_patterns=["*.py"])}
    assert routing.provenance == {"mcp_servers.tracker": "plugin:srv", "lsp_servers.py": "plugin:srv"}
    assert [(d.name, d.severity) for d in routing.diagnostics] == [("github", Severity.INFO)]


def test_two_plugins_with_the_same_server_share_it_and_a_different_one_is_reported(tmp_path: Path) -> None:
    for name, url in (
        ("a", "https://slack.test/mcp"),
        ("b", "https://slack.test/mcp"),
        ("c", "https://other.test/mcp"),
    ):
        root = make_plugin(tmp_path / name, {"name": name})
        write_json(root / ".mcp.json", {"mcpServers": {"slack": {"type": "http", "url": url}}})
    config = KairoxConfig.model_validate({"plugins": {"paths": [str(tmp_path / n) for n in "abc"]}})

    routing = route_plugins(discover_plugins(config, home=tmp_path / "home").plugins)

    assert routing.mcp_servers == {"slack": McpServerConfig(type="streamable_http", url="https://slack.test/mcp")}
    assert [(d.kind, d.severity, d.reason) for d in routing.diagnostics] == [
        ("mcp_server", Severity.WARNING, "plugins a and c both bring a different server 'slack'; a's is used")
    ]


def test_incompatible_plugin_is_listed_but_not_routed(tmp_path: Path) -> None:
    make_plugin(tmp_path / "future", {"name": "future", "compatibility": {"kairoxVersion": ">=99"}}, skills=("x",))
    config = KairoxConfig.model_validate({"plugins": {"paths": [str(tmp_path / "future")]}})

    found = discover_plugins(config, home=tmp_path / "home")

    plugin = found.get("future")
    assert plugin is not None and plugin.enabled and not plugin.active
    assert route_plugins(found.plugins).skills == ()
    assert PluginManifestView.of(plugin).disabled_reason == "incompatible: needs Kairox >=99, this is 0.1.0"
    assert [c.enabled for c in plugin.contributions()] == [False]
    assert plugin.is_enabled(ContributionKind.SKILL, "x") is False


def test_routed_skill_roots_load_in_the_skill_registry_namespaced(tmp_path: Path, isolated_home: Path) -> None:
    from kairox.skills import registry_from_config

    root = make_plugin(isolated_home / "mine" / "kit", {"name": "kit"}, skills=("pdf", "lint"))
    (root / "commands").mkdir()
    (root / "commands" / "ship.md").write_text("---\ndescription: Ship the branch\n---\nShip it.\n")
    user_file = isolated_home / "kairox.toml"
    user_file.write_text('[plugins]\npaths = ["mine/kit"]\n')
    set_contribution_enabled(user_file, "kit", "skill:lint", False)
    resolved = resolve_config(tmp_path)

    routing = route_plugins(discover_from_resolved(resolved).plugins)
    skills = registry_from_config(resolved, plugin_roots=routing.skill_roots, exclude=routing.disabled_skills)

    real = root.resolve()
    assert routing.skill_roots == (("kit", real / "skills" / "pdf"), ("kit", real / "commands"))
    assert routing.disabled_skills == frozenset({"kit:lint"})
    assert sorted(e.skill.qualified_name for e in skills.entries()) == ["kit:pdf", "kit:ship"]


def test_a_plugin_with_a_wrong_field_type_fails_alone(tmp_path: Path) -> None:
    make_plugin(tmp_path / "good", {"name": "good"}, skills=("one",))
    make_plugin(tmp_path / "bad", {"name": "bad", "skills": 42})
    config = KairoxConfig.model_validate({"plugins": {"paths": [str(tmp_path / "bad"), str(tmp_path / "good")]}})

    found = discover_plugins(config, home=tmp_path / "home")

    assert [p.name for p in found.plugins] == ["good"]
    assert [(d.name, d.severity, d.source) for d in found.diagnostics] == [
        ("bad", Severity.ERROR, str((tmp_path / "bad" / ".claude-plugin" / "plugin.json").resolve()))
    ]


def test_routed_mcp_servers_feed_the_mcp_server_table_with_plugin_provenance(
    tmp_path: Path, isolated_home: Path
) -> None:
    from kairox.config._mcp_json import McpJsonFile
    from kairox.mcp._sources import configured_servers

    root = make_plugin(isolated_home / "mine" / "srv", {"name": "srv"})
    write_json(root / ".mcp.json", {"mcpServers": {"tracker": {"command": "tracker"}}})
    (isolated_home / "kairox.toml").write_text('[plugins]\npaths = ["mine/srv"]\n')
    resolved = resolve_config(tmp_path)
    routing = route_plugins(discover_from_resolved(resolved).plugins, mcp_servers=resolved.config.mcp_servers)

    extra = tuple(
        McpJsonFile(path=Path(entry.source), source=entry.provenance, servers={entry.name: entry.config})
        for entry in routing.server_entries
        if isinstance(entry.config, McpServerConfig)
    )
    servers, problems = configured_servers(resolved, extra=extra)

    assert problems == ()
    assert [(s.name, s.layer, s.pending_trust, s.config.command) for s in servers.values()] == [
        ("tracker", "plugin:srv", False, "tracker")
    ]


def test_entry_path_is_relative_to_the_file_that_sets_it(tmp_path: Path, isolated_home: Path) -> None:
    workspace = tmp_path / "ws"
    make_plugin(workspace / "tools" / "delta", {"name": "delta", "version": "3.0.0"})
    (workspace / ".kairox").mkdir(parents=True)
    (workspace / ".kairox" / "kairox.local.toml").write_text('[plugins.entries.delta]\npath = "tools/delta"\n')
    trust_workspace(workspace.resolve())

    found = discover_from_resolved(resolve_config(workspace))

    delta = found.get("delta")
    assert delta is not None and (delta.root, delta.version) == ((workspace / "tools" / "delta").resolve(), "3.0.0")


@pytest.mark.parametrize("body", [b'{"plugins": [1]}', b"\xff\xfe not utf-8", b"[1, 2]"])
def test_a_damaged_installed_file_reads_as_nothing_installed(isolated_home: Path, body: bytes) -> None:
    from kairox.plugins._records import InstallRecords

    (isolated_home / "plugins").mkdir(parents=True)
    (isolated_home / "plugins" / "installed.json").write_bytes(body)

    assert InstallRecords(isolated_home).read() == {}
