"""Marketplaces end to end through the CLI (P7): a local folder and a file:// git marketplace. Add, install
(with progress), enable, disable one contribution, update, uninstall, with files and config checked at each
step; incompatible plugins install disabled with the reason."""

import json
import subprocess
import tomllib
from pathlib import Path
from typing import Any

import pytest
from tests.helpers import kairox
from tests.plugins.conftest import write_json, write_skill

pytestmark = pytest.mark.timeout(180)


def _build_market(root: Path, *, helper_version: str = "1.0.0") -> Path:
    write_json(
        root / ".claude-plugin" / "marketplace.json",
        {
            "name": "team-market",
            "owner": {"name": "Team"},
            "plugins": [
                {"name": "helper", "source": "./plugins/helper", "description": "Review helpers"},
                {"name": "future", "source": "./plugins/future"},
                {"name": "needs-tool", "source": "./plugins/needs-tool"},
                {
                    "name": "lsp-only",
                    "source": "./plugins/lsp-only",
                    "strict": False,
                    "version": "2.0.0",
                    "lspServers": {"py": {"command": "pylsp", "extensionToLanguage": {".py": "python"}}},
                },
            ],
        },
    )
    _helper(root, helper_version)
    write_json(
        root / "plugins" / "future" / ".claude-plugin" / "plugin.json",
        {"name": "future", "version": "0.9.0", "compatibility": {"kairoxVersion": ">=99"}},
    )
    write_json(
        root / "plugins" / "needs-tool" / ".kairox-plugin" / "plugin.json",
        {"name": "needs-tool", "version": "0.1.0", "compatibility": {"requires": ["kairox-test-missing-tool >=1"]}},
    )
    (root / "plugins" / "lsp-only").mkdir(parents=True)
    (root / "plugins" / "lsp-only" / "README.md").write_text("An LSP server.\n")
    return root


def _helper(root: Path, version: str) -> None:
    folder = root / "plugins" / "helper"
    write_json(
        folder / ".claude-plugin" / "plugin.json",
        {"name": "helper", "version": version, "description": "Review helpers"},
    )
    write_skill(folder / "skills" / "review", "review")
    write_skill(folder / "skills" / "lint", "lint")
    (folder / "commands").mkdir(exist_ok=True)
    (folder / "commands" / "fix.md").write_text("Fix it.\n")
    if version != "1.0.0":
        write_skill(folder / "skills" / "explain", "explain")


def _config(home: Path) -> dict[str, Any]:
    file = home / "kairox.toml"
    return tomllib.loads(file.read_text()) if file.exists() else {}


def _records(home: Path) -> dict[str, Any]:
    return dict(json.loads((home / "plugins" / "installed.json").read_text())["plugins"])


def _git(repo: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@example.test", *args],
        check=True,
        capture_output=True,
    )


def _inspect(name: str) -> dict[str, Any]:
    run = kairox("plugins", "inspect", name, "--json")
    assert run.code == 0, run.stderr
    return dict(run.json())


def _walk_lifecycle(home: Path, source: str, bump: Any) -> None:
    """The whole life of one installed plugin; ``bump`` publishes helper 1.1.0 in the marketplace."""
    added = kairox("plugins", "marketplace", "add", source)
    assert added.code == 0, added.stderr
    assert added.stdout == "added marketplace team-market (4 plugins)\n"
    assert _config(home)["plugins"]["marketplaces"] == {"team-market": {"source": source}}
    listed = kairox("plugins", "marketplace", "list", "--json")
    assert listed.json() == {
        "marketplaces": [
            {
                "name": "team-market",
                "source": source,
                "plugins": ["helper", "future", "needs-tool", "lsp-only"],
                "error": None,
            }
        ]
    }

    installed = kairox("plugins", "install", "helper@team-market", "--yes")
    target = home / "plugins" / "team-market" / "helper" / "1.0.0"
    assert installed.code == 0, installed.stderr
    assert installed.stdout == f"installed helper 1.0.0 from team-market into {target}\n"
    # off a terminal, progress is one plain line per step
    assert [line for line in installed.stderr.splitlines() if line.startswith("copying")] == [
        "copying helper: done (4 of 4)"
    ]
    assert "[#" not in installed.stderr and "\r" not in installed.stderr
    assert sorted(str(p.relative_to(target)) for p in target.rglob("*") if p.is_file()) == [
        ".claude-plugin/plugin.json",
        "commands/fix.md",
        "skills/lint/SKILL.md",
        "skills/review/SKILL.md",
    ]
    assert list((home / "plugins" / "team-market" / "helper").iterdir()) == [target]
    assert _config(home)["plugins"]["entries"] == {"helper": {"enabled": True}}
    assert _records(home)["helper"]["version"] == "1.0.0"
    view = _inspect("helper")
    assert (view["origin"], view["trust"], view["enabled"], view["active"], view["marketplace"]) == (
        "installed",
        "community",
        True,
        True,
        "team-market",
    )

    assert kairox("plugins", "disable", "helper").code == 0
    assert _config(home)["plugins"]["entries"] == {"helper": {"enabled": False}}
    assert _inspect("helper")["active"] is False
    assert kairox("plugins", "enable", "helper").code == 0
    assert _config(home)["plugins"]["entries"] == {"helper": {"enabled": True}}

    disabled = kairox("plugins", "disable", "helper", "--contribution", "skill:lint")
    assert disabled.code == 0, disabled.stderr
    assert _config(home)["plugins"]["entries"] == {
        "helper": {"enabled": True, "disabled_contributions": ["skill:lint"]}
    }
    assert [
        (c["key"] if "key" in c else f"{c['kind']}:{c['name']}", c["enabled"])
        for c in _inspect("helper")["contributions"]
    ] == [
        ("skill:lint", False),
        ("skill:review", True),
        ("command:fix", True),
    ]
    wrong = kairox("plugins", "disable", "helper", "--contribution", "skill:lnt")
    assert (wrong.code, "did you mean 'skill:lint'?" in wrong.stderr) == (6, True)

    bump()
    updated = kairox("plugins", "update")
    newer = home / "plugins" / "team-market" / "helper" / "1.1.0"
    assert updated.code == 0, updated.stderr
    assert updated.stdout == "updated helper 1.0.0 -> 1.1.0\n"
    assert list((home / "plugins" / "team-market" / "helper").iterdir()) == [newer]
    assert (newer / "skills" / "explain" / "SKILL.md").is_file()
    assert _config(home)["plugins"]["entries"] == {
        "helper": {"enabled": True, "disabled_contributions": ["skill:lint"]}
    }
    assert _records(home)["helper"]["version"] == "1.1.0"
    again = kairox("plugins", "update", "helper")
    assert again.stdout == "helper 1.1.0 is up to date\n"

    unasked = kairox("plugins", "uninstall", "helper")  # no terminal to ask at, no --yes: nothing happens
    assert (unasked.code, unasked.stderr.strip()) == (4, "kairox: helper was not uninstalled: pass --yes")
    assert (home / "plugins" / "team-market" / "helper").exists()
    removed = kairox("plugins", "uninstall", "helper", "--yes")
    assert removed.code == 0, removed.stderr
    assert removed.stdout == "uninstalled helper 1.1.0\n"
    assert not (home / "plugins" / "team-market" / "helper").exists()
    assert "entries" not in _config(home)["plugins"]
    assert _records(home) == {}
    assert kairox("plugins", "inspect", "helper").code == 6


def test_local_folder_marketplace_lifecycle(tmp_path: Path, isolated_home: Path) -> None:
    market = _build_market(tmp_path / "market")
    _walk_lifecycle(isolated_home, str(market.resolve()), lambda: _helper(market, "1.1.0"))


def test_git_marketplace_lifecycle(tmp_path: Path, isolated_home: Path) -> None:
    repo = _build_market(tmp_path / "repo")
    _git(repo, "init", "-q", "-b", "main")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "first")

    def bump() -> None:
        _helper(repo, "1.1.0")
        _git(repo, "add", "-A")
        _git(repo, "commit", "-q", "-m", "helper 1.1.0")

    _walk_lifecycle(isolated_home, f"file://{repo.resolve()}", bump)
    assert (isolated_home / "marketplaces" / "team-market" / ".claude-plugin" / "marketplace.json").is_file()


def test_incompatible_plugins_install_disabled_with_the_reason(tmp_path: Path, isolated_home: Path) -> None:
    market = _build_market(tmp_path / "market")
    assert kairox("plugins", "marketplace", "add", market).code == 0

    future = kairox("plugins", "install", "future", "--yes")
    tool = kairox("plugins", "install", "needs-tool", "--yes")

    assert future.code == 0 and tool.code == 0
    assert "warning: installed disabled: incompatible: needs Kairox >=99, this is 0.1.0" in future.stderr
    assert (
        "warning: installed disabled: incompatible: needs kairox-test-missing-tool "
        ">=1 on PATH; 'kairox-test-missing-tool' was not found" in tool.stderr
    )
    assert _config(isolated_home)["plugins"]["entries"] == {
        "future": {"enabled": False},
        "needs-tool": {"enabled": False},
    }
    records = _records(isolated_home)
    assert records["future"]["disabled_reason"] == "incompatible: needs Kairox >=99, this is 0.1.0"
    listed = {p["name"]: p for p in kairox("plugins", "list", "--json").json()["plugins"]}
    assert [
        (listed[n]["enabled"], listed[n]["active"], listed[n]["disabled_reason"]) for n in ("future", "needs-tool")
    ] == [
        (False, False, "incompatible: needs Kairox >=99, this is 0.1.0"),
        (
            False,
            False,
            "incompatible: needs kairox-test-missing-tool >=1 on PATH; 'kairox-test-missing-tool' was not found",
        ),
    ]


def test_marketplace_entry_without_a_manifest_installs_with_the_entry_as_manifest(
    tmp_path: Path, isolated_home: Path
) -> None:
    market = _build_market(tmp_path / "market")
    assert kairox("plugins", "marketplace", "add", market).code == 0

    run = kairox("plugins", "install", "lsp-only", "--yes")

    target = isolated_home / "plugins" / "team-market" / "lsp-only" / "2.0.0"
    assert run.code == 0, run.stderr
    assert json.loads((target / ".kairox-plugin" / "plugin.json").read_text()) == {
        "name": "lsp-only",
        "version": "2.0.0",
        "lspServers": {"py": {"command": "pylsp", "extensionToLanguage": {".py": "python"}}},
    }
    assert [(c["kind"], c["name"]) for c in _inspect("lsp-only")["contributions"]] == [("lsp_server", "py")]


def test_install_refuses_a_plugin_with_an_escaping_symlink_and_leaves_nothing(
    tmp_path: Path, isolated_home: Path
) -> None:
    market = _build_market(tmp_path / "market")
    (tmp_path / "secret.txt").write_text("secret")
    (market / "plugins" / "helper" / "skills" / "leak.md").symlink_to(tmp_path / "secret.txt")
    assert kairox("plugins", "marketplace", "add", market).code == 0

    run = kairox("plugins", "install", "helper", "--yes")

    assert run.code == 1
    assert "points outside the plugin" in run.stderr
    assert [p.name for p in (isolated_home / "plugins" / "team-market" / "helper").iterdir()] == []
    assert "entries" not in _config(isolated_home).get("plugins", {})


def test_install_never_writes_through_a_symlinked_folder(tmp_path: Path, isolated_home: Path) -> None:
    market = _build_market(tmp_path / "market")
    outside = tmp_path / "outside"
    (outside / "sub").mkdir(parents=True)
    (market / "plugins" / "helper" / "linked").symlink_to(outside / "sub", target_is_directory=True)
    (outside / "sub" / "inner.txt").write_text("inner")
    assert kairox("plugins", "marketplace", "add", market).code == 0

    run = kairox("plugins", "install", "helper", "--yes")

    assert run.code == 1 and "points outside the plugin" in run.stderr
    assert sorted(p.name for p in (outside / "sub").iterdir()) == ["inner.txt"]


def test_names_and_versions_cannot_climb_out_of_the_plugins_folder(tmp_path: Path, isolated_home: Path) -> None:
    from kairox.plugins import Marketplaces
    from kairox.plugins._catalog import read_marketplace

    market = tmp_path / "market"
    write_json(
        market / ".claude-plugin" / "marketplace.json",
        {
            "name": "m",
            "plugins": [{"name": "../evil", "source": "./p"}, {"name": "climber", "source": "./p", "version": ".."}],
        },
    )
    write_json(market / "p" / ".claude-plugin" / "plugin.json", {"name": "climber"})

    parsed, problems = read_marketplace(market / ".claude-plugin" / "marketplace.json")
    result = Marketplaces(isolated_home, isolated_home / "kairox.toml", {"m": str(market)}).install("climber")

    assert parsed is not None and [e.name for e in parsed.entries] == ["climber"]
    assert [p.reason for p in problems] == [
        "plugins[0] name '../evil' may only hold letters, digits, '.', '_' and '-' (at most 64)"
    ]
    assert result.record.path == isolated_home / "plugins" / "m" / "climber" / "v.."
    assert result.record.path.is_dir()


def test_a_git_source_or_ref_that_looks_like_an_option_is_refused_before_git_runs(
    tmp_path: Path, isolated_home: Path
) -> None:
    market = tmp_path / "market"
    entries = [
        {"name": "opt-url", "source": {"source": "url", "url": "--upload-pack=touch pwned;.git"}},
        {"name": "opt-sha", "source": {"source": "url", "url": "file:///nowhere.git", "sha": "--orphan=x"}},
    ]
    write_json(market / ".claude-plugin" / "marketplace.json", {"name": "m", "plugins": entries})
    assert kairox("plugins", "marketplace", "add", market).code == 0

    by_url = kairox("plugins", "install", "opt-url", "--yes")
    by_sha = kairox("plugins", "install", "opt-sha", "--yes")

    assert (by_url.code, by_sha.code) == (1, 1)
    assert "kairox: '--upload-pack=touch pwned;.git' is not a git URL" in by_url.stderr
    assert "kairox: git revision '--orphan=x' of file:///nowhere.git looks like an option; refused" in by_sha.stderr


def test_installed_folder_listed_version_and_update_agree_when_the_entry_names_another_version(
    tmp_path: Path, isolated_home: Path
) -> None:
    market = tmp_path / "market"
    write_json(
        market / ".claude-plugin" / "marketplace.json",
        {
            "name": "m",
            "plugins": [
                {"name": "helper", "source": "./helper", "version": "0.9.0"},  # the manifest says 1.2.0
                {"name": "bare", "source": "./bare", "version": "3.1.0"},  # a manifest without a version
            ],
        },
    )
    write_json(market / "helper" / ".claude-plugin" / "plugin.json", {"name": "helper", "version": "1.2.0"})
    write_skill(market / "helper" / "skills" / "review", "review")
    write_json(market / "bare" / ".claude-plugin" / "plugin.json", {"name": "bare"})
    write_skill(market / "bare" / "skills" / "lint", "lint")
    assert kairox("plugins", "marketplace", "add", str(market)).code == 0

    for name, version in (("helper", "1.2.0"), ("bare", "3.1.0")):
        installed = kairox("plugins", "install", name, "--yes")
        folder = isolated_home / "plugins" / "m" / name / version
        assert installed.stdout == f"installed {name} {version} from m into {folder}\n"
        assert list(folder.parent.iterdir()) == [folder]
        assert _records(isolated_home)[name]["version"] == version
    listed = {p["name"]: (p["version"], p["path"]) for p in kairox("plugins", "list", "--json").json()["plugins"]}
    assert listed == {
        "helper": ("1.2.0", str(isolated_home / "plugins" / "m" / "helper" / "1.2.0")),
        "bare": ("3.1.0", str(isolated_home / "plugins" / "m" / "bare" / "3.1.0")),
    }
    assert kairox("plugins", "update").stdout == "bare 3.1.0 is up to date\nhelper 1.2.0 is up to date\n"


def test_a_marketplace_install_asks_the_same_question_as_a_folder_install(tmp_path: Path, isolated_home: Path) -> None:
    """Off a terminal nobody answers: the plugin of a registered marketplace is refused as one from a folder is,
    after it was loaded and shown (what it brings, where it goes), and nothing is left behind."""
    market = _build_market(tmp_path / "market")
    assert kairox("plugins", "marketplace", "add", market).code == 0
    asked = kairox("plugins", "install", "helper@team-market")
    source = kairox("plugins", "install", str(market / "plugins" / "helper"))
    assert (asked.code, source.code) == (4, 4), (asked.stderr, source.stderr)
    for run in (asked, source):
        assert "was not installed: approval required:" in run.stderr
        assert "run it again with --yes to approve the install" in run.stderr
    assert "from ./plugins/helper (marketplace team-market)" in asked.stderr
    assert not (isolated_home / "plugins" / "team-market" / "helper" / "1.0.0").exists()
