"""``kairox hooks list`` and ``kairox hooks approve``."""

import json
from pathlib import Path

from tests.helpers import kairox


def test_hooks_list_shows_config_and_plugin_hooks_and_approve_records_them(tmp_path: Path, isolated_home: Path) -> None:
    plugin = isolated_home / "plugins" / "market" / "guard" / "1.0.0"
    (plugin / ".claude-plugin").mkdir(parents=True)
    (plugin / ".claude-plugin" / "plugin.json").write_text(json.dumps({"name": "guard", "version": "1.0.0"}))
    (plugin / "hooks").mkdir()
    (plugin / "hooks" / "hooks.json").write_text(
        json.dumps({"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "true"}]}]}})
    )
    records = {
        "plugins": {
            "guard": {
                "marketplace": "market",
                "version": "1.0.0",
                "path": str(plugin),
                "source": "./guard",
                "trust": "community",
            }
        }
    }
    (isolated_home / "plugins" / "installed.json").write_text(json.dumps(records))
    (isolated_home / "kairox.toml").write_text('[[hooks.pre_tool_use]]\ncommand = "echo hi"\nmatcher = "fs.write"\n')

    before = kairox("hooks", "list", "--json", cwd=tmp_path)
    approved = kairox("hooks", "approve", "guard:post_turn", cwd=tmp_path)
    after = kairox("hooks", "list", cwd=tmp_path)

    assert before.code == 0, before.stderr
    assert [
        (h["name"], h["event"], h["matcher"], h["command"], h["needs_approval"], h["approved"])
        for h in before.json()["hooks"]
    ] == [
        ("config:pre_tool_use.1", "pre_tool_use", "fs.write", "echo hi", False, None),
        ("guard:post_turn", "post_turn", None, "true", True, False),
    ]
    assert approved.code == 0, approved.stderr
    assert after.stdout.splitlines() == [
        "config:pre_tool_use.1  pre_tool_use  fs.write  echo hi",
        "guard:post_turn  post_turn  *  true  approved",
    ]
    assert kairox("hooks", "approve", "nope", cwd=tmp_path).code == 6


def test_hooks_of_an_untrusted_workspace_are_listed_as_pending(tmp_path: Path, isolated_home: Path) -> None:
    workspace = tmp_path / "repo"
    (workspace / ".git").mkdir(parents=True)
    (workspace / "kairox.toml").write_text('[[hooks.session_start]]\ncommand = "touch started"\n')

    listed = kairox("hooks", "list", "--json", cwd=workspace)
    human = kairox("hooks", "list", cwd=workspace)
    assert kairox("trust", cwd=workspace).code == 0
    trusted = kairox("hooks", "list", "--json", cwd=workspace)

    assert listed.code == 0, listed.stderr
    assert listed.json()["hooks"] == []
    assert listed.json()["pending"] == [
        {
            "key": "hooks.session_start",
            "reason": "hooks from an untrusted workspace do not run",
            "layer": "project",
            "file": str(workspace / "kairox.toml"),
            "line": 1,
        }
    ]
    assert f"pending: hooks.session_start ({workspace / 'kairox.toml'}:1) waits for `kairox trust`" in human.stderr
    assert [h["name"] for h in trusted.json()["hooks"]] == ["config:session_start.1"]
    assert trusted.json()["pending"] == []
