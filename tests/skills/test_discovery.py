"""S3: discovery under roots: nesting, bounded depth, dot-folders, symlinks, loose files, the parse cache."""

import os
from pathlib import Path

from tests.skills.conftest import WriteSkill

from kairox.errors import Severity
from kairox.skills import LooseFiles, SkillCache, SkillRoot, SkillScope, bundled_files, discover_skills


def _root(path: Path) -> SkillRoot:
    return SkillRoot(path=path, scope=SkillScope.USER)


def test_nested_skill_folders_loose_files_and_notes(tmp_path: Path, write_skill: WriteSkill) -> None:
    root = tmp_path / "skills"
    write_skill(root, "sdk", "The SDK.")
    write_skill(root / "sdk", "web", "The web SDK.")
    (root / "sdk" / "references").mkdir()
    (root / "sdk" / "references" / "api.md").write_text("---\ndescription: not a skill, a reference\n---\n", encoding="utf-8")
    (root / "deploy.md").write_text("---\nname: deploy\ndescription: Deploy.\n---\nbody\n", encoding="utf-8")
    (root / "README.md").write_text("# My skills\n", encoding="utf-8")
    found = discover_skills([_root(root)])
    assert sorted((s.name, s.scope, s.root) for s in found.skills) == [
        ("deploy", SkillScope.USER, root),
        ("sdk", SkillScope.USER, root),
        ("web", SkillScope.USER, root),
    ]
    assert found.diagnostics == []
    sdk = next(s for s in found.skills if s.name == "sdk")
    assert bundled_files(sdk) == ["references/api.md", "web/SKILL.md"]


def test_depth_is_bounded_and_dot_folders_are_skipped(tmp_path: Path, write_skill: WriteSkill) -> None:
    root = tmp_path / "skills"
    write_skill(root / "a" / "b", "shallow", "ok")
    write_skill(root / "a" / "b" / "c" / "d", "deep", "too deep")
    write_skill(root / ".hidden", "secret", "hidden")
    found = discover_skills([_root(root)], max_depth=3)
    assert [s.name for s in found.skills] == ["shallow"]
    [note] = found.diagnostics
    assert (note.severity, note.source, note.reason) == (Severity.INFO, str(root), "1 folder(s) deeper than skills.max_depth=3 were not searched")


def test_symlink_leaving_the_root_is_refused_and_one_inside_is_followed(tmp_path: Path, write_skill: WriteSkill) -> None:
    root = tmp_path / "skills"
    outside = tmp_path / "elsewhere"
    write_skill(outside, "escape", "outside the root")
    write_skill(root / "store", "inside", "inside the root")
    root.joinpath("linked-out").symlink_to(outside / "escape")
    root.joinpath("inside").symlink_to(root / "store" / "inside")
    found = discover_skills([_root(root)])
    assert [(s.name, s.path) for s in found.skills] == [("inside", root / "inside" / "SKILL.md")]  # found once
    [refused] = found.diagnostics
    assert refused.source == str(root / "linked-out")
    assert refused.reason == f"symlink points outside its skill root {root} (to {outside / 'escape'}); refused"


def test_validating_a_tree_reads_loose_markdown_only_in_skills_folders(tmp_path: Path, write_skill: WriteSkill) -> None:
    plugin = tmp_path / "plugin"
    write_skill(plugin / "skills", "real", "a skill")
    (plugin / "agents").mkdir()
    (plugin / "agents" / "reviewer.md").write_text("---\nname: reviewer\ndescription: an agent\n---\n", encoding="utf-8")
    (plugin / "skills" / "loose.md").write_text("---\nname: loose\ndescription: loose skill\n---\n", encoding="utf-8")
    found = discover_skills([_root(plugin)], loose=LooseFiles.SKILLS_DIRS)
    assert sorted(s.name for s in found.skills) == ["loose", "real"]


def test_warm_scan_reparses_nothing_and_a_changed_file_is_reparsed(tmp_path: Path, write_skill: WriteSkill) -> None:
    root = tmp_path / "skills"
    paths = [write_skill(root / f"group{i % 3}", f"skill-{i}", f"Skill number {i}.") for i in range(12)]
    (root / "notes.md").write_text("just notes\n", encoding="utf-8")
    cache_path = tmp_path / "cache" / "skills.json"

    cold = discover_skills([_root(root)], cache=SkillCache(cache_path))
    assert (cold.stats.files, cold.stats.parsed, cold.stats.cached) == (13, 13, 0)

    warm = discover_skills([_root(root)], cache=SkillCache(cache_path))
    assert (warm.stats.files, warm.stats.parsed, warm.stats.cached) == (13, 0, 13)
    assert sorted((s.name, s.description, s.path) for s in warm.skills) == sorted((s.name, s.description, s.path) for s in cold.skills)

    paths[4].write_text("---\nname: skill-4\ndescription: Changed text, longer than before.\n---\n", encoding="utf-8")
    os.utime(paths[4], ns=(1, 1))
    changed = discover_skills([_root(root)], cache=SkillCache(cache_path))
    assert (changed.stats.parsed, changed.stats.cached) == (1, 12)
    assert next(s for s in changed.skills if s.name == "skill-4").description == "Changed text, longer than before."


def test_cached_diagnostics_are_reported_again(tmp_path: Path) -> None:
    root = tmp_path / "skills"
    (root / "bad").mkdir(parents=True)
    (root / "bad" / "SKILL.md").write_text("# no frontmatter\n", encoding="utf-8")
    cache_path = tmp_path / "cache.json"
    cold = discover_skills([_root(root)], cache=SkillCache(cache_path))
    warm = discover_skills([_root(root)], cache=SkillCache(cache_path))
    assert warm.stats.parsed == 0
    assert warm.diagnostics == cold.diagnostics
    assert [d.reason for d in warm.diagnostics] == ["no frontmatter: a skill needs YAML frontmatter with a description"]


def test_missing_roots_are_silent_and_a_broken_cache_is_ignored(tmp_path: Path, write_skill: WriteSkill) -> None:
    root = tmp_path / "skills"
    write_skill(root, "one", "one")
    cache_path = tmp_path / "cache.json"
    cache_path.write_text("{not json", encoding="utf-8")
    found = discover_skills([_root(tmp_path / "absent"), _root(root)], cache=SkillCache(cache_path))
    assert [s.name for s in found.skills] == ["one"]
    assert found.diagnostics == []
    assert (found.stats.roots, found.stats.parsed) == (1, 1)
