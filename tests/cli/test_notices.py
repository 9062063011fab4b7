"""U1: a warning about a plugin is shown once per change, not on every command; doctor always lists it."""

import json
from pathlib import Path

from tests.helpers import kairox

NO_SANDBOX = ("-c", "policy.sandbox_policy=danger_full_access")


def test_a_plugin_warning_is_shown_once_until_its_file_changes(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    plugin = tmp_path / ".kairox" / "plugins" / "notes"
    manifest = plugin / ".claude-plugin" / "plugin.json"
    manifest.parent.mkdir(parents=True)
    manifest.write_text(
        json.dumps({"name": "notes", "version": "1.0.0", "skills": ["skills", "drafts"]}), encoding="utf-8"
    )
    (plugin / "skills" / "jot").mkdir(parents=True)
    (plugin / "skills" / "jot" / "SKILL.md").write_text(
        "---\nname: jot\ndescription: Jot a note down.\n---\nWrite it.\n", encoding="utf-8"
    )
    assert kairox("trust", cwd=tmp_path).code == 0
    warning = f"warning: {manifest}: skills: 'drafts' does not exist in the plugin"
    note = "(1 warning(s) shown before are not repeated until their files change; `kairox doctor` lists every one)"

    first = kairox(*NO_SANDBOX, "context", cwd=tmp_path)
    assert first.code == 0, first.stderr
    assert first.stderr.splitlines() == [warning]
    second = kairox(*NO_SANDBOX, "context", cwd=tmp_path)
    assert second.stderr.splitlines() == [note]
    listed = kairox("plugins", "list", cwd=tmp_path)
    assert listed.stderr.splitlines() == [note]

    doctor = kairox(*NO_SANDBOX, "doctor", "--json", cwd=tmp_path).json()
    assert [w["reason"] for w in doctor["warnings"] if w["kind"] == "plugin"] == [
        "skills: 'drafts' does not exist in the plugin"
    ]

    manifest.write_text(
        json.dumps({"name": "notes", "version": "1.1.0-beta", "skills": ["skills", "drafts"]}), encoding="utf-8"
    )
    changed = kairox("plugins", "list", cwd=tmp_path)
    assert changed.stderr.splitlines() == [
        f"warning: {manifest}: plugin 'notes': skills: 'drafts' does not exist in the plugin"
    ]
