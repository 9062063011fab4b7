"""S3: discovery under roots: nesting, bounded depth, dot-folders, symlinks, loose files, the parse cache."""

import os
import time
from pathlib import Path

from tests.skills.conftest import WriteSkill

from kairox.errors import Severity
from kairox.skills import bundled_files
from kairox.skills._cache import SkillCache
from kairox.skills._discovery import LooseFiles, SkillRoot, discover_skills
from kairox.skills._model import SkillScope


def _root(path: Path) -> SkillRoot:
    return SkillRoot(path=path, scope=SkillScope.USER)


def test_nested_skill_folders_loose_files_and_notes(tmp_path: Path, write_skill: WriteSkill) -> None:
    root = tmp_path / "skills"
    write_skill(root, "sdk", "The SDK.")
    write_skill(root / "sdk", "web", "The web SDK.")
    (root / "sdk" / "references").mkdir()
    (root / "sdk" / "references" / "api.md").write_text(
        "---\ndescription: not a skill, a reference\n---\n", encoding="utf-8"
    )
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
    assert (note.severity, note.source, note.reason) == (
        Severity.INFO,
        str(root),
        "1 folder(s) deeper than skills.max_depth=3 were not searched",
    )


def test_symlink_leaving_the_root_is_refused_and_one_inside_is_followed(
    tmp_path: Path, write_skill: WriteSkill
) -> None:
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
    (plugin / "agents" / "reviewer.md").write_text(
        "---\nname: reviewer\ndescription: an agent\n---\n", encoding="utf-8"
    )
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
    assert sorted((s.name, s.description, s.path) for s in warm.skills) == sorted(
        (s.name, s.description, s.path) for s in cold.skills
    )

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


def _same_size_rewrite(path: Path, old: str, new: str) -> None:
    """Rewrite ``path`` in place with text of the same length and put its mtime back, as a tool that keeps
    timestamps would: only the file's ctime tells the change apart."""
    st = path.stat()
    text = path.read_text(encoding="utf-8")
    assert len(old) == len(new) and old in text
    path.write_text(text.replace(old, new), encoding="utf-8")
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert (path.stat().st_mtime_ns, path.stat().st_size) == (st.st_mtime_ns, st.st_size)


SETTLE_NS = 50_000_000
"""A short settle time for the tests below, which wait a little longer than it before the first scan."""


def test_unchanged_folders_are_not_listed_again_yet_every_change_below_them_is_seen(
    tmp_path: Path, write_skill: WriteSkill
) -> None:
    root = tmp_path / "skills"
    paths = [write_skill(root / f"team-{i % 2}", f"skill-{i}", f"Skill number {i}.") for i in range(6)]
    (root / "deploy.md").write_text("---\nname: deploy\ndescription: Deploy it.\n---\n", encoding="utf-8")
    cache_path = tmp_path / "cache" / "skills.cache"

    def scan() -> tuple[dict[str, str], tuple[int, int, int, int]]:
        time.sleep(2 * SETTLE_NS / 1e9)  # past the settle time of the last change, so the shortcut may apply
        found = discover_skills([_root(root)], cache=SkillCache(cache_path, settle_ns=SETTLE_NS))
        stats = found.stats
        return {s.name: s.description for s in found.skills}, (
            stats.parsed,
            stats.cached,
            stats.folders_listed,
            stats.folders_cached,
        )

    cold, cold_stats = scan()
    assert cold_stats == (7, 0, 9, 0)  # root, 2 teams, 6 skill folders
    warm, warm_stats = scan()
    assert (warm, warm_stats) == (cold, (0, 7, 0, 9))

    # A file rewritten in place, same size, mtime put back: its folder did not change, the file is read again.
    _same_size_rewrite(paths[3], "Skill number 3.", "Skill NUMBER 3.")
    _same_size_rewrite(root / "deploy.md", "Deploy it.", "Deploy IT.")
    changed, changed_stats = scan()
    assert (changed["skill-3"], changed["deploy"], changed_stats) == ("Skill NUMBER 3.", "Deploy IT.", (2, 5, 0, 9))

    # A skill added deep down: only the folder that gained it is listed again (and the new one), even when
    # the tool that added it put the folder's mtime back.
    team = root / "team-1"
    before = team.stat()
    write_skill(team, "skill-new", "A new one.")
    os.utime(team, ns=(before.st_atime_ns, before.st_mtime_ns))
    added, added_stats = scan()
    assert (added["skill-new"], added_stats) == ("A new one.", (1, 7, 2, 8))

    # A skill removed: gone at once, and its cache entries with it.
    (paths[0]).unlink()
    paths[0].parent.rmdir()
    removed, removed_stats = scan()
    assert "skill-0" not in removed and removed_stats == (0, 7, 1, 8)
    assert scan()[1] == (0, 7, 0, 9)


def test_a_folder_listed_just_after_it_changed_is_listed_again(tmp_path: Path, write_skill: WriteSkill) -> None:
    root = tmp_path / "skills"
    write_skill(root, "fresh", "Just written.")
    cache_path = tmp_path / "skills.cache"
    cold = discover_skills([_root(root)], cache=SkillCache(cache_path))  # the default settle time: 2 s
    warm = discover_skills([_root(root)], cache=SkillCache(cache_path))
    # Folders changed within the settle time of their listing could change again unseen in the same clock
    # tick, so they are listed again; the file, unchanged, is compared by content and not parsed again.
    assert (cold.stats.folders_listed, warm.stats.folders_listed, warm.stats.folders_cached) == (2, 2, 0)
    assert (warm.stats.parsed, warm.stats.cached) == (0, 1)


def test_folders_holding_symlinks_are_listed_every_time(tmp_path: Path, write_skill: WriteSkill) -> None:
    root = tmp_path / "skills"
    outside = tmp_path / "elsewhere"
    write_skill(outside, "escape", "outside the root")
    store = root / "store"
    write_skill(store, "inside", "inside the root")
    root.joinpath("linked-out").symlink_to(outside / "escape")
    root.joinpath("inside").symlink_to(store / "inside")
    cache_path = tmp_path / "skills.cache"
    time.sleep(2 * SETTLE_NS / 1e9)
    scans = [discover_skills([_root(root)], cache=SkillCache(cache_path, settle_ns=SETTLE_NS)) for _ in range(3)]
    for found in scans:
        assert [(s.name, s.path) for s in found.skills] == [("inside", root / "inside" / "SKILL.md")]
        assert [d.source for d in found.diagnostics] == [str(root / "linked-out")]
    # The root (it holds the links) and the folder reached through a link are listed on every scan.
    assert [(f.stats.folders_listed, f.stats.folders_cached) for f in scans] == [(3, 0), (2, 1), (2, 1)]

    # Where a link leads can change while its folder stays the same: the next scan follows the new target.
    write_skill(store, "other", "another skill")
    root.joinpath("inside").unlink()
    root.joinpath("inside").symlink_to(store / "other")
    found = discover_skills([_root(root)], cache=SkillCache(cache_path, settle_ns=SETTLE_NS))
    assert sorted((s.name, s.path) for s in found.skills) == [
        ("inside", store / "inside" / "SKILL.md"),
        ("other", root / "inside" / "SKILL.md"),
    ]


def test_a_foreign_cache_file_is_ignored_and_replaced(tmp_path: Path, write_skill: WriteSkill) -> None:
    root = tmp_path / "skills"
    write_skill(root, "one", "one")
    cache_path = tmp_path / "skills.cache"
    cache_path.write_bytes(b"kairox-skills-cache\n" + b"\xff" * 40)
    first = discover_skills([_root(root)], cache=SkillCache(cache_path))
    assert ([s.name for s in first.skills], first.stats.parsed) == (["one"], 1)
    again = discover_skills([_root(root)], cache=SkillCache(cache_path))
    assert (again.stats.parsed, again.stats.cached) == (0, 1)
