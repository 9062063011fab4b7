"""S5 selection that explains itself; S6 the catalog within its budget."""

from pathlib import Path

from tests.helpers import kairox
from tests.skills.conftest import WriteSkill

from kairox.skills import SkillDef
from kairox.skills._catalog import HEADER, render_catalog
from kairox.skills._match import SkillIndex
from kairox.skills._model import SkillFormat, SkillFrontmatter


def _fixture_skills(root: Path, write_skill: WriteSkill) -> None:
    write_skill(
        root,
        "pr-review",
        "Review a pull request for correctness, style and test coverage.",
        extra="keywords: [pull request, code review, test coverage]\nwhen_to_use: the user asks to review a PR",
    )
    write_skill(root, "test-writer", "Write unit tests for a module.", extra="keywords: [unit tests, pytest]")
    write_skill(
        root, "release-notes", "Draft release notes from merged pull requests.", extra="keywords: [changelog, release]"
    )
    write_skill(root, "pdf", "Fill PDF forms.")


def test_pr_review_ranks_first_and_says_why(tmp_path: Path, isolated_home: Path, write_skill: WriteSkill) -> None:
    _fixture_skills(isolated_home / "skills", write_skill)
    run = kairox("skills", "match", "review this pull request for test coverage", "--json", cwd=tmp_path)
    assert run.code == 0, run.stderr
    matches = run.json()["matches"]
    assert [m["name"] for m in matches] == [
        "pr-review",
        "test-writer",
        "release-notes",
    ]  # BM25: "test" in a name and keywords outweighs "pull request" in a description
    assert all(m["score"] > 0.5 for m in matches), "every match scores: four skills are a corpus too"
    best = matches[0]
    assert [t["term"] for t in best["terms"]] == [
        "review",
        "coverage",
        "pull",
        "request",
        "test",
    ]  # rarest and best-placed first
    assert {t["term"]: t["fields"] for t in best["terms"]} == {
        "review": ["name", "keywords", "examples", "description"],
        "test": ["keywords", "description"],
        "coverage": ["keywords", "description"],
        "pull": ["keywords", "description"],
        "request": ["keywords", "description"],
    }
    assert best["phrases"] == ["pull request", "test coverage"]
    assert best["why"].startswith("pr-review scored ")

    human = kairox("skills", "match", "review this pull request for test coverage", cwd=tmp_path)
    assert human.stdout.splitlines()[0].startswith("1. pr-review scored ")
    assert "matched review (name, keywords, examples, description); coverage (keywords, description)" in human.stdout


def test_prompt_with_no_shared_terms_matches_nothing(tmp_path: Path, write_skill: WriteSkill) -> None:
    from kairox.skills import SkillRegistry
    from kairox.skills._discovery import SkillRoot
    from kairox.skills._model import SkillScope

    _fixture_skills(tmp_path / "skills", write_skill)
    registry = SkillRegistry.load([SkillRoot(path=tmp_path / "skills", scope=SkillScope.USER)])
    assert registry.match("the weather in lisbon") == []
    assert [m.skill.name for m in registry.match("fill this PDF")] == ["pdf"]


def test_inflected_words_meet_their_stem() -> None:
    skill = SkillDef(
        name="tests",
        description="Testing helpers.",
        path=Path("/x/tests.md"),
        format=SkillFormat.KAIROX,
        frontmatter=SkillFrontmatter(keywords=("reviewing",)),
    )
    [found] = SkillIndex([skill]).match("reviews of tested code")
    assert sorted(found.terms) == ["reviews", "tested"]  # the prompt's words, met by FTS5's porter stemming


def _skill(name: str, description: str) -> SkillDef:
    return SkillDef(name=name, description=description, path=Path(f"/s/{name}.md"), format=SkillFormat.KAIROX)


def test_catalog_fits_whole_when_it_can() -> None:
    catalog = render_catalog([_skill("b", "Bee."), _skill("a", "Ay  \n more.")], 1_000)
    assert catalog.text == f"{HEADER}\n- a: Ay more.\n- b: Bee."
    assert (catalog.shown, catalog.shortened, catalog.dropped) == (("a", "b"), 0, ())


def test_catalog_shortens_descriptions_before_dropping_skills() -> None:
    skills = [_skill(f"s{i:02d}", f"Skill {i} " + "does many careful things " * 8) for i in range(10)]
    full = render_catalog(skills, 100_000)
    budget = len(full.text) // 2
    catalog = render_catalog(skills, budget)
    assert len(catalog.text) <= budget
    assert catalog.dropped == ()
    assert catalog.shortened == 10
    assert catalog.shown == tuple(f"s{i:02d}" for i in range(10))
    assert all(line.endswith("…") for line in catalog.text.splitlines()[1:])
    assert render_catalog(list(reversed(skills)), budget) == catalog  # deterministic whatever the input order


def test_catalog_drops_from_the_end_and_says_how_many_when_short_descriptions_do_not_fit() -> None:
    skills = [_skill(f"skill-{i:03d}", "x" * 200) for i in range(100)]
    catalog = render_catalog(skills, 1_000)
    assert len(catalog.text) <= 1_000
    assert catalog.shown == tuple(f"skill-{i:03d}" for i in range(len(catalog.shown)))
    assert len(catalog.shown) + len(catalog.dropped) == 100 and catalog.dropped
    assert (
        catalog.text.splitlines()[-1] == f"- ... and {len(catalog.dropped)} more skill(s) not listed for lack of room"
    )


def test_one_or_two_skills_are_ranked_and_scored_above_zero(tmp_path: Path) -> None:
    def skill(name: str, description: str, keywords: list[str]) -> SkillDef:
        return SkillDef(
            name=name,
            description=description,
            path=tmp_path / f"{name}.md",
            format=SkillFormat.KAIROX,
            frontmatter=SkillFrontmatter(keywords=tuple(keywords)),
        )

    review = skill("pr-review", "Review a pull request.", ["code review"])
    changelog = skill("changelog", "Write the changelog of a release.", ["release notes"])
    (alone,) = SkillIndex([review]).match("review my pull request")
    assert alone.score > 1.0, alone.explain()
    pair = SkillIndex([review, changelog]).match("review the pull request before the release")
    assert [m.skill.name for m in pair] == ["pr-review", "changelog"]
    assert pair[0].score > pair[1].score > 0.5, [m.explain() for m in pair]
