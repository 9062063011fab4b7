"""10,000 skills in nested folders: cold discovery, warm discovery (nothing changed on disk) and matching.

Cold: no parse cache, every SKILL.md read and parsed. Warm: the same tree again with the on-disk cache, so
only stat calls remain (a folder unchanged since it was listed is not listed again). The tree is left to
settle for a little more than the cache's settle time before anything is timed: an entry changed less than
that before it was read is read again on every scan, so a tree written a moment ago is not
the steady state. Ratios are printed next to the times. Matching: the search index (FTS5)
is built, then queries run over all 10,000 skills. A baseline walk (os.walk listing the same files, no parsing)
shows how much of warm discovery is the file system itself.

Warm discovery is timed twice: in this process (a server or an interface discovering again) and in a new
process (a CLI command), both loading the cache file and building every skill from it; the new process is
timed from inside, without its interpreter start and imports.

Run: .venv/bin/python bench/skills_scale.py [COUNT]
"""

import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from kairox._util._filestate import SETTLE_NS
from kairox.skills._cache import SkillCache
from kairox.skills._discovery import SkillRoot, discover_skills
from kairox.skills._match import SkillIndex
from kairox.skills._model import SkillScope

WORDS = tuple(
    " ".join(
        (
            "review pull request test coverage deploy service release notes changelog database migration schema lint",
            "format python typescript docker kubernetes terraform security audit secrets rotate incident postmortem",
            "benchmark profile memory leak cache latency api client sdk webhook oauth token invoice report chart",
            "spreadsheet pdf form contract legal finance budget forecast sales pipeline marketing email campaign",
        )
    ).split(" ")
)
QUERIES = (
    "review this pull request for test coverage",
    "rotate the leaked api token and audit secrets",
    "draft release notes from the changelog",
    "profile the memory leak in the cache layer",
    "fill in this pdf contract form",
)


def write_tree(root: Path, count: int) -> None:
    rng = random.Random(7)
    for i in range(count):
        group = root / f"team-{i % 20:02d}" / f"area-{i % 7}" / f"pack-{i % 50:02d}"
        folder = group / f"skill-{i:05d}"
        folder.mkdir(parents=True)
        words = rng.sample(WORDS, 12)
        keywords = ", ".join(words[:3])
        description = f"Helps with {' '.join(words[3:9])}. Use when the user mentions {words[9]} or {words[10]}."
        (folder / "SKILL.md").write_text(
            f"---\nname: skill-{i:05d}\ndescription: {description}\nkeywords: [{keywords}]\n"
            f"when_to_use: {words[11]} {words[0]}\nmetadata:\n  owner: team-{i % 20}\n---\n# Skill {i}\n\nSteps.\n",
            encoding="utf-8",
        )
        if i % 10 == 0:
            (folder / "reference.md").write_text("notes\n", encoding="utf-8")


_NEW_PROCESS = """
import sys, time
from pathlib import Path
from kairox.skills._cache import SkillCache
from kairox.skills._discovery import SkillRoot, discover_skills
from kairox.skills._model import SkillScope
started = time.perf_counter()
found = discover_skills([SkillRoot(path=Path(sys.argv[1]), scope=SkillScope.USER)], max_depth=6, cache=SkillCache(Path(sys.argv[2])))
seconds = time.perf_counter() - started
assert found.stats.parsed == 0 and found.stats.cached == int(sys.argv[3]), found.stats
print(seconds)
"""  # noqa: E501


def warm_in_new_process(root: Path, cache_file: Path, count: int) -> float:
    argv = [sys.executable, "-c", _NEW_PROCESS, str(root), str(cache_file), str(count)]
    return float(subprocess.run(argv, capture_output=True, text=True, check=True, timeout=120).stdout)


def timed(action):  # type: ignore[no-untyped-def]
    started = time.perf_counter()
    value = action()
    return time.perf_counter() - started, value


def main() -> None:
    count = int(sys.argv[1]) if len(sys.argv) > 1 else 10_000
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "skills"
        cache_file = Path(tmp) / "cache" / "skills.json"
        build, _ = timed(lambda: write_tree(root, count))
        time.sleep(SETTLE_NS / 1e9 + 0.1)
        roots = [SkillRoot(path=root, scope=SkillScope.USER)]

        walk, files = timed(lambda: sum(1 for _, _, names in os.walk(root) for n in names if n == "SKILL.md"))
        cold, found = timed(lambda: discover_skills(roots, max_depth=6, cache=SkillCache(cache_file)))
        assert len(found.skills) == count and found.stats.parsed == count, found.stats
        warm_runs = []
        for _ in range(5):
            seconds, again = timed(lambda: discover_skills(roots, max_depth=6, cache=SkillCache(cache_file)))
            assert again.stats.parsed == 0 and again.stats.cached == count and again.stats.folders_listed == 0, (
                again.stats
            )
            warm_runs.append(seconds)
        warm = statistics.median(warm_runs)
        fresh = statistics.median(warm_in_new_process(root, cache_file, count) for _ in range(5))
        cache_mb = cache_file.stat().st_size / 1e6

        index_builds = []
        for _ in range(5):
            seconds, index = timed(lambda: SkillIndex(found.skills))
            index_builds.append(seconds)
        index_time = statistics.median(index_builds)
        query_times, query_cpus = [], []
        for _ in range(20):
            for query in QUERIES:
                cpu = time.process_time()
                seconds, _ = timed(lambda q=query: index.match(q, limit=5))  # type: ignore[misc]
                query_cpus.append(time.process_time() - cpu)
                query_times.append(seconds)
        match, match_cpu = statistics.median(query_times), statistics.median(query_cpus)
        best = index.match(QUERIES[0], limit=1)[0]

    print(f"skills: {count} in nested folders (written in {build:.2f}s; {files} SKILL.md files)")
    print(f"baseline os.walk of the tree:       {walk * 1000:8.1f} ms")
    print(f"cold discovery (parse everything):  {cold * 1000:8.1f} ms  ({cold / count * 1e6:.0f} µs per skill)")
    print(f"warm discovery (cache, no changes): {warm * 1000:8.1f} ms  (median of 5; parsed 0; same process)")
    print(f"  cold / warm = {cold / warm:.1f}x   warm / bare walk = {warm / walk:.1f}x")
    print(f"warm discovery in a new process:    {fresh * 1000:8.1f} ms  (median of 5; cache file {cache_mb:.1f} MB)")
    print(f"  cold / new-process warm = {cold / fresh:.1f}x   new-process warm / bare walk = {fresh / walk:.1f}x")
    print(f"match index build (FTS5):           {index_time * 1000:8.1f} ms  (median of 5)")
    print(
        f"match query over all skills:        {match * 1000:8.3f} ms  "
        f"(median of {len(query_times)}; CPU {match_cpu * 1000:.3f} ms)"
    )
    print(f"  warm discovery / one query = {warm / match:.0f}x")
    print(f"example: {best.explain()}")


if __name__ == "__main__":
    main()
