"""S3: a discovery served from the parse cache - on disk, or kept by the same process - gives exactly what a
discovery without a cache gives (skills, diagnostics, their order), after every kind of change on disk."""

import os
import pickle
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from tests.skills.conftest import WriteSkill, skill_text

from kairox.skills import SkillRegistry
from kairox.skills._cache import SkillCache
from kairox.skills._discovery import Discovery, SkillRoot, discover_skills
from kairox.skills._model import SkillScope

SHORT_SETTLE_NS = 50_000_000

_NEW_PROCESS = """
import pickle, sys
from kairox.skills._cache import SkillCache
from kairox.skills._discovery import discover_skills
roots, cache_file, settle_ns = pickle.loads(sys.stdin.buffer.read())
found = discover_skills(roots, cache=SkillCache(cache_file, settle_ns=settle_ns))
sys.stdout.buffer.write(pickle.dumps((found.skills, found.diagnostics, found.stats.parsed)))
"""


def _same_size_rewrite(path: Path, old: str, new: str, *, keep_mtime: bool) -> None:
    st = path.stat()
    text = path.read_text(encoding="utf-8")
    assert len(old) == len(new) and old in text
    path.write_text(text.replace(old, new), encoding="utf-8")
    if keep_mtime:
        os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert path.stat().st_size == st.st_size


class Corpus:
    """Roots of every scope, a symlinked root, a folder that is both a user and a plugin root."""

    def __init__(self, base: Path, write_skill: WriteSkill) -> None:
        self.base = base
        self.write = write_skill
        self.workspace = base / "ws" / ".kairox" / "skills"
        self.user_real = base / "real-user"
        self.user_other = base / "other-user"
        self.user = base / "home" / "skills"  # a symlink to one of the two above
        self.shared = base / "shared"
        self.cache_file = base / "cache" / "skills.cache"
        ws = self.workspace
        write_skill(ws, "review", "Review pull requests.", extra="keywords: [review, pull request]")
        write_skill(ws / "team" / "area", "deploy", "Deploy services.", extra="when_to_use: shipping")
        write_skill(
            ws,
            "mismatch",
            "Name differs from the folder.",
            folder="mismatch-folder",
            extra="metadata:\n  owner: me\nx-host-key: 3\nuser-invocable: false",
        )
        (ws / "broken").mkdir()
        (ws / "broken" / "SKILL.md").write_text("# no frontmatter here\n", encoding="utf-8")
        (ws / "loose.md").write_text("---\ndescription: A loose Kairox skill.\n---\nBody.\n", encoding="utf-8")
        (ws / "notes.md").write_text("just notes\n", encoding="utf-8")
        (ws / "unnamed").mkdir()
        (ws / "unnamed" / "SKILL.md").write_text(skill_text(None, "Named after its folder."), encoding="utf-8")
        write_skill(self.user_real, "review", "The user's review skill.")
        write_skill(self.user_real / "store", "lint", "Lint code.")
        self.user_real.joinpath("linted").symlink_to(self.user_real / "store" / "lint")
        write_skill(self.user_other, "other", "A skill of the other folder.")
        self.user.parent.mkdir(parents=True)
        self.user.symlink_to(self.user_real)
        write_skill(self.shared, "shared", "Found twice, placed twice.", extra="args: [target]")
        self.user_real.joinpath("z-bad.md").write_text("---\nname: [unclosed\ndescription: x\n---\n", encoding="utf-8")

    def roots(self) -> list[SkillRoot]:
        return [
            SkillRoot(path=self.workspace, scope=SkillScope.WORKSPACE),
            SkillRoot(path=self.user, scope=SkillScope.USER),
            SkillRoot(path=self.shared, scope=SkillScope.USER),
            SkillRoot(path=self.shared, scope=SkillScope.PLUGIN, plugin="tools"),
        ]


Scan = Callable[[], Discovery]


def _new_process_scan(corpus: Corpus, settle_ns: int) -> tuple[object, object, int]:
    run = subprocess.run(
        [sys.executable, "-c", _NEW_PROCESS],
        input=pickle.dumps((corpus.roots(), corpus.cache_file, settle_ns)),
        capture_output=True,
        check=True,
        timeout=60,
    )
    loaded: tuple[object, object, int] = pickle.loads(run.stdout)
    return loaded


@pytest.mark.parametrize("settle_ns", [SHORT_SETTLE_NS, None], ids=["settled", "within-settle-time"])
def test_warm_discovery_equals_a_cold_one_after_every_change(
    tmp_path: Path, write_skill: WriteSkill, settle_ns: int | None
) -> None:
    corpus = Corpus(tmp_path, write_skill)
    settle = SkillCache(None).settle_ns if settle_ns is None else settle_ns
    ws = corpus.workspace
    parsed_in_process: list[int] = []

    def check(step: str, *, other_process_first: bool = False) -> None:
        if settle_ns is not None:
            time.sleep(2 * settle_ns / 1e9)  # past the settle time, so unchanged entries are trusted on their stat
        cold = discover_skills(corpus.roots())
        assert cold.stats.cached == 0
        if other_process_first:
            # Another process sees the change first and rewrites the cache: this process, which still holds
            # the skills it built before the change, must not take them for the new entries.
            skills, diagnostics, _ = _new_process_scan(corpus, settle)
            assert (skills, diagnostics) == (cold.skills, cold.diagnostics), step
        for _ in range(2):  # the first scan after a change updates the cache, the second is served by it
            warm = discover_skills(corpus.roots(), cache=SkillCache(corpus.cache_file, settle_ns=settle))
            assert (warm.skills, warm.diagnostics) == (cold.skills, cold.diagnostics), step
            parsed_in_process.append(warm.stats.parsed)
        skills, diagnostics, parsed = _new_process_scan(corpus, settle)
        assert (skills, diagnostics, parsed) == (cold.skills, cold.diagnostics, 0), step

    check("first scans")
    assert parsed_in_process[:2] == [11, 0]  # the shared file is parsed once for its two roots

    _same_size_rewrite(ws / "review" / "SKILL.md", "Review pull", "REVIEW PULL", keep_mtime=True)
    check("same-size rewrite, mtime put back")
    _same_size_rewrite(ws / "team" / "area" / "deploy" / "SKILL.md", "Deploy", "Ship!!", keep_mtime=False)
    _same_size_rewrite(ws / "loose.md", "loose", "LOOSE", keep_mtime=False)
    check("same-size rewrites in the same second", other_process_first=True)
    write_skill(ws / "team" / "area", "added", "Added deep down.")
    (ws / "notes.md").write_text("---\ndescription: Notes became a skill.\n---\n", encoding="utf-8")
    check("a new skill, a note that became one")
    (ws / "mismatch-folder" / "SKILL.md").unlink()
    (ws / "mismatch-folder").rmdir()
    (ws / "loose.md").unlink()
    check("deletions")
    (ws / "unnamed").rename(ws / "renamed")
    (ws / "team").rename(ws / "squad")
    check("renamed folders: the unnamed skill takes its new folder's name")
    corpus.user.unlink()
    corpus.user.symlink_to(corpus.user_other)
    check("the symlinked user root points elsewhere")
    corpus.user.unlink()
    corpus.user.symlink_to(corpus.user_real)
    corpus.user_real.joinpath("linted").unlink()
    write_skill(corpus.user_real / "store", "format", "Format code.")
    corpus.user_real.joinpath("linted").symlink_to(corpus.user_real / "store" / "format")
    check("the root points back, a link inside it retargeted")
    (corpus.shared / "shared" / "SKILL.md").write_text(skill_text("shared", None), encoding="utf-8")
    (ws / "broken" / "SKILL.md").write_text(skill_text("broken", "Fixed now."), encoding="utf-8")
    check("a skill broken, a broken one fixed", other_process_first=True)

    registry = SkillRegistry.load(corpus.roots(), cache_file=corpus.cache_file)
    uncached = SkillRegistry.load(corpus.roots())
    assert registry.to_json(include_shadowed=True) == uncached.to_json(include_shadowed=True)  # same precedence


def test_a_cache_file_rewritten_elsewhere_is_read_again(tmp_path: Path, write_skill: WriteSkill) -> None:
    root = tmp_path / "skills"
    write_skill(root, "one", "One.")
    cache_file = tmp_path / "skills.cache"
    assert (
        discover_skills([SkillRoot(path=root, scope=SkillScope.USER)], cache=SkillCache(cache_file)).stats.parsed == 1
    )
    cache_file.write_bytes(b"kairox-skills-cache\n" + b"\xff" * 40)  # another process wrote something else
    again = discover_skills([SkillRoot(path=root, scope=SkillScope.USER)], cache=SkillCache(cache_file))
    assert ([s.name for s in again.skills], again.stats.parsed, again.stats.cached) == (["one"], 1, 0)
