"""``kairox plugins validate`` over the real plugin corpora: never a crash, every plugin listed with its
contributions, each malformed file one diagnostic with its path."""

import json
from collections import Counter
from pathlib import Path

import pytest
from tests.helpers import kairox

pytestmark = pytest.mark.corpus


@pytest.mark.timeout(300)
def test_validate_lists_every_plugin_and_reports_each_malformed_file(corpora: Path) -> None:
    run = kairox("plugins", "validate", corpora, "--json")

    assert run.code in (0, 1), run.stderr
    assert "Traceback" not in run.stderr
    report = run.json()
    plugins, diagnostics = report["plugins"], report["diagnostics"]
    paths = [p["path"] for p in plugins]
    assert len(paths) == len(set(paths))
    manifest_folders = {
        str(m.parent.parent.resolve()) for m in corpora.rglob("plugin.json") if m.parent.name.endswith("-plugin")
    }
    assert manifest_folders <= set(paths)
    for plugin in plugins:
        assert set(plugin) >= {"name", "path", "manifest", "other_manifests", "contributions", "compatibility", "trust"}
        assert all(set(c) == {"kind", "name", "enabled"} for c in plugin["contributions"])
    assert [p["name"] for p in plugins if not p["contributions"]] == []
    assert {d["severity"] for d in diagnostics} <= {"error", "warning", "info"}
    assert all(d["path"] for d in diagnostics)

    malformed_hooks = sorted(
        str(f.resolve()) for f in corpora.rglob("hooks.json") if json.loads(f.read_text()) in ([], {}, {"hooks": {}})
    )
    hook_errors = Counter(d["path"] for d in diagnostics if d["path"] in malformed_hooks)
    assert len(malformed_hooks) == 5
    assert hook_errors == dict.fromkeys(malformed_hooks, 1)
    assert all(d["severity"] == "error" for d in diagnostics if d["path"] in malformed_hooks)


@pytest.mark.timeout(120)
def test_superpowers_manifest_follows_the_resolution_order(corpora: Path) -> None:
    root = (corpora / "obra__superpowers").resolve()

    run = kairox("plugins", "validate", root, "--json")

    assert run.code == 0, run.stderr
    [plugin] = run.json()["plugins"]
    assert (plugin["name"], plugin["manifest"], plugin["manifest_format"]) == (
        "superpowers",
        str(root / ".codex-plugin" / "plugin.json"),
        "codex",
    )
    assert plugin["other_manifests"] == [
        str(root / ".claude-plugin" / "plugin.json"),
        str(root / ".cursor-plugin" / "plugin.json"),
        str(root / ".kimi-plugin" / "plugin.json"),
    ]
    kinds = Counter(c["kind"] for c in plugin["contributions"])
    assert kinds == {"skill": 14, "hook": 1}


@pytest.mark.timeout(120)
def test_validate_text_output_names_each_problem_with_its_file(corpora: Path) -> None:
    folder = (corpora / "anthropics__financial-services-plugins" / "private-equity").resolve()

    run = kairox("plugins", "validate", folder)

    assert run.code == 1
    assert run.stdout.splitlines()[0] == f"private-equity ({folder / '.claude-plugin' / 'plugin.json'})"
    assert (
        f"error: {folder / 'hooks' / 'hooks.json'}: hook 'private-equity': "
        "the hooks file is an empty list ([]); it declares no hooks" in run.stderr
    )
