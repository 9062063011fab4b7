"""P1, P2: `kairox plugins validate` on a marketplace repository validates each listed plugin; another host's
manifest folder at its root is a note, not an error."""

from pathlib import Path

from tests.helpers import kairox
from tests.plugins.conftest import make_plugin, write_json


def _marketplace_with_a_cursor_manifest(root: Path) -> Path:
    write_json(
        root / ".claude-plugin" / "marketplace.json",
        {
            "name": "many-plugins",
            "owner": {"name": "Team"},
            "plugins": [
                {"name": "review", "source": "./plugins/review", "description": "Review code"},
                {"name": "deploy", "source": "./plugins/deploy"},
                {"name": "remote", "source": {"source": "github", "repo": "example/remote-plugin"}},
            ],
        },
    )
    write_json(
        root / ".cursor-plugin" / "plugin.json", {"name": "many-plugins", "description": "the same plugins, for Cursor"}
    )
    make_plugin(root / "plugins" / "review", {"name": "review", "version": "1.0.0"}, skills=("review",))
    make_plugin(root / "plugins" / "deploy", {"name": "deploy", "version": "0.3.0"}, skills=("ship",))
    return root


def test_a_marketplace_root_with_an_unknown_manifest_folder_validates_its_plugins(tmp_path: Path) -> None:
    root = _marketplace_with_a_cursor_manifest(tmp_path / "repo")
    run = kairox("plugins", "validate", root, "--json")
    assert run.code == 0, run.stdout
    data = run.json()
    assert sorted(p["name"] for p in data["plugins"]) == ["deploy", "review"]
    assert [(d["severity"], d["kind"], d["name"], d["path"]) for d in data["diagnostics"]] == [
        ("info", "plugin", "repo", str(root / ".cursor-plugin" / "plugin.json")),
        ("info", "marketplace", "remote", str(root / ".claude-plugin" / "marketplace.json")),
    ]
    text = kairox("plugins", "validate", root)
    assert text.code == 0
    assert text.stderr.splitlines()[-1] == "2 plugin(s), 2 diagnostic(s), 0 error(s)"
    assert (
        f"info: {root / '.cursor-plugin' / 'plugin.json'}: plugin "
        "'repo': .cursor-plugin/plugin.json is another host's manifest" in text.stderr
    )


def test_a_folder_with_only_an_unknown_manifest_is_a_note(tmp_path: Path) -> None:
    write_json(tmp_path / "tool" / ".cursor-plugin" / "plugin.json", {"name": "tool"})
    run = kairox("plugins", "validate", tmp_path / "tool", "--json")
    assert run.code == 0
    assert run.json()["plugins"] == []
    assert [d["severity"] for d in run.json()["diagnostics"]] == ["info"]
