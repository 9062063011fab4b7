"""S9 command output, and the real skill collections under ../shared/corpora."""

import json
from pathlib import Path

import pytest
from tests.helpers import kairox
from tests.skills.conftest import WriteSkill

FINANCIAL = "anthropics__financial-services-plugins"


def test_list_json_has_the_documented_shape(tmp_path: Path, isolated_home: Path, write_skill: WriteSkill) -> None:
    workspace = tmp_path / "repo"
    (workspace / ".git").mkdir(parents=True)
    user = write_skill(isolated_home / "skills", "pr-review", "Review PRs (user).")
    ws = write_skill(workspace / ".kairox" / "skills", "pr-review", "Review PRs (workspace).")
    (isolated_home / "skills" / "broken").mkdir()
    (isolated_home / "skills" / "broken" / "SKILL.md").write_text("---\nname: broken\n---\n", encoding="utf-8")
    assert kairox("trust", cwd=workspace).code == 0
    data = kairox("skills", "list", "--json", cwd=workspace).json()
    [skill] = data["skills"]
    assert {
        k: skill[k] for k in ("name", "qualified_name", "scope", "path", "description", "enabled", "format", "shadowed")
    } == {
        "name": "pr-review",
        "qualified_name": "pr-review",
        "scope": "workspace",
        "path": str(ws),
        "description": "Review PRs (workspace).",
        "enabled": True,
        "format": "agent-skills",
        "shadowed": [str(user)],
    }
    assert [{k: d[k] for k in ("path", "line", "severity", "reason")} for d in data["diagnostics"]] == [
        {
            "path": str(isolated_home / "skills" / "broken" / "SKILL.md"),
            "line": 2,
            "severity": "error",
            "reason": "no `description`: a skill needs one to be offered",
        },
        {"path": str(user), "line": None, "severity": "info", "reason": f"shadowed by {ws} (workspace scope)"},
    ]
    everything = kairox("skills", "list", "--json", "--all", cwd=workspace).json()
    assert [(s["path"], s.get("shadowed_by")) for s in everything["skills"]] == [(str(ws), None), (str(user), str(ws))]

    human = kairox("skills", "list", cwd=workspace)
    assert human.stdout == "pr-review  workspace  on        Review PRs (workspace).\n"
    assert human.stderr.startswith(
        f"error: {isolated_home / 'skills' / 'broken' / 'SKILL.md'}:2: skill 'broken': no `description`"
    )


def test_show_prints_settings_and_body(tmp_path: Path, isolated_home: Path, write_skill: WriteSkill) -> None:
    write_skill(
        isolated_home / "skills",
        "deploy",
        "Deploy it.",
        extra="model: fast\narguments:\n  service: {required: true, description: which}",
        body="Deploy ${service}.\n",
    )
    run = kairox("skills", "show", "deploy", "--json", cwd=tmp_path)
    data = run.json()
    assert (data["body"], data["model"], data["arguments"]["required"]) == ("Deploy ${service}.\n", "fast", ["service"])
    assert kairox("skills", "show", "nope", cwd=tmp_path).code == 6


def test_validate_reports_each_broken_file_and_exits_nonzero(tmp_path: Path, write_skill: WriteSkill) -> None:
    write_skill(tmp_path / "plugin" / "skills", "good", "fine")
    (tmp_path / "plugin" / "skills" / "bad").mkdir()
    (tmp_path / "plugin" / "skills" / "bad" / "SKILL.md").write_text("# Bad\n", encoding="utf-8")
    run = kairox("skills", "validate", tmp_path / "plugin", "--json")
    assert run.code == 1
    data = run.json()
    assert data["counts"] == {
        "files": 2,
        "loaded": 1,
        "skipped": 1,
        "passed_over": 0,
        "errors": 1,
        "warnings": 0,
        "info": 0,
    }
    human = kairox("skills", "validate", tmp_path / "plugin" / "skills" / "good")
    assert (human.code, human.stdout) == (0, "1 skill(s) loaded from 1 file(s); 0 skipped; 0 error(s), 0 warning(s)\n")


@pytest.mark.corpus
@pytest.mark.timeout(120)
def test_every_corpus_skill_with_frontmatter_loads_and_each_without_is_one_diagnostic(corpora: Path) -> None:
    run = kairox("skills", "validate", corpora, "--json")
    assert run.code == 1, run.stderr  # problems found, nothing crashed
    data = run.json()
    skill_files = sorted(corpora.rglob("SKILL.md"))
    with_frontmatter = [p for p in skill_files if p.read_bytes().lstrip(b"\xef\xbb\xbf").startswith(b"---")]
    without = sorted(set(skill_files) - set(with_frontmatter))
    assert len(without) == 29 and all(FINANCIAL in str(p) for p in without)
    assert sorted(Path(s["path"]) for s in data["skills"]) == with_frontmatter
    errors = [d for d in data["diagnostics"] if d["severity"] == "error"]
    assert sorted(Path(d["path"]) for d in errors) == without
    assert {d["reason"] for d in errors} == {"no frontmatter: a skill needs YAML frontmatter with a description"}
    assert data["counts"]["files"] == len(skill_files)
    assert (data["counts"]["loaded"], data["counts"]["skipped"]) == (len(with_frontmatter), 29)
    json.dumps(data)


@pytest.mark.corpus
def test_corpus_plugin_skills_register_namespaced(corpora: Path) -> None:
    from kairox.skills import SkillRegistry
    from kairox.skills._discovery import SkillRoot
    from kairox.skills._model import SkillScope

    plugin = corpora / "obra__superpowers"
    registry = SkillRegistry.load([SkillRoot(path=plugin / "skills", scope=SkillScope.PLUGIN, plugin="superpowers")])
    names = registry.names()
    assert len(names) == 14 and all(n.startswith("superpowers:") for n in names)
    assert [m.skill.qualified_name for m in registry.match("debug this failing test systematically", limit=1)] == [
        "superpowers:systematic-debugging"
    ]
