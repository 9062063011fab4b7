"""S3, S4: scopes, precedence and shadowing, trust, enable/disable persisted across restarts."""

from pathlib import Path

import pytest
from tests.helpers import kairox
from tests.skills.conftest import WriteSkill

from kairox.config import SkillsConfig, resolve_config, trust_workspace
from kairox.skills import SkillRegistry, registry_from_config
from kairox.skills._discovery import SkillRoot
from kairox.skills._model import SkillScope
from kairox.skills._registry import UNTRUSTED_REASON, SkillLoadError
from kairox.skills._roots import roots_from_config


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    (root / ".git").mkdir(parents=True)
    return root


def _summary(registry: SkillRegistry) -> list[tuple[str, str, bool, list[str]]]:
    return [
        (e.skill.name, str(e.skill.scope), e.offered, [str(s.path) for s in e.shadowed]) for e in registry.entries()
    ]


def test_session_beats_workspace_beats_user_and_shadowed_are_listed(
    workspace: Path, isolated_home: Path, write_skill: WriteSkill, tmp_path: Path
) -> None:
    trust_workspace(workspace)
    user = write_skill(isolated_home / "skills", "pr-review", "user version")
    write_skill(isolated_home / "skills", "only-user", "user only")
    kairox_ws = write_skill(workspace / ".kairox" / "skills", "pr-review", "workspace version")
    claude_ws = write_skill(workspace / ".claude" / "skills", "pr-review", "claude-dir version")
    session = write_skill(tmp_path / "session", "pr-review", "session version")

    registry = registry_from_config(resolve_config(workspace))
    assert _summary(registry) == [
        ("only-user", "user", True, []),
        ("pr-review", "workspace", True, [str(claude_ws), str(user)]),
    ]
    registry.add_session_skill(session.parent)
    entry = registry.require("pr-review")
    assert (entry.skill.description, entry.skill.scope) == ("session version", SkillScope.SESSION)
    assert [str(s.path) for s in entry.shadowed] == [str(kairox_ws), str(claude_ws), str(user)]
    assert [(e.skill.description, e.hidden_reason) for e in registry.entries(include_shadowed=True)[2:]] == [
        ("workspace version", f"shadowed by {session}"),
        ("claude-dir version", f"shadowed by {session}"),
        ("user version", f"shadowed by {session}"),
    ]
    assert [d.source for d in registry.diagnostics if d.reason.startswith("shadowed by")] == [
        str(kairox_ws),
        str(claude_ws),
        str(user),
    ]


def test_compat_dirs_can_be_turned_off(workspace: Path, isolated_home: Path, write_skill: WriteSkill) -> None:
    write_skill(workspace / ".agents" / "skills", "from-agents", "agents dir")
    write_skill(workspace / ".codex" / "skills", "from-codex", "codex dir")
    write_skill(workspace / ".claw" / "skills", "from-claw", "claw dir")
    resolved = resolve_config(workspace)
    assert registry_from_config(resolved).names() == ["from-agents", "from-claw", "from-codex"]
    off = resolve_config(workspace, cli_overrides=["skills.compat_dirs=false"])
    assert registry_from_config(off).names() == []


def test_untrusted_workspace_skills_are_listed_not_offered_and_do_not_shadow_user_skills(
    workspace: Path, isolated_home: Path, write_skill: WriteSkill
) -> None:
    user = write_skill(isolated_home / "skills", "deploy", "the user's deploy")
    ws_deploy = write_skill(workspace / ".kairox" / "skills", "deploy", "the repo's deploy")
    write_skill(workspace / ".kairox" / "skills", "repo-only", "repo skill")
    resolved = resolve_config(workspace)
    assert resolved.trusted is False
    registry = registry_from_config(resolved)
    deploy = registry.require("deploy")
    assert (deploy.skill.path, deploy.offered, [s.path for s in deploy.shadowed]) == (user, True, [ws_deploy])
    repo_only = registry.require("repo-only")
    assert (repo_only.offered, repo_only.hidden_reason, repo_only.held_by_trust) == (False, UNTRUSTED_REASON, True)
    assert deploy.held_by_trust is False  # the user's skill is offered
    assert [s.name for s in registry.offered()] == ["deploy"]
    assert "repo-only" not in registry.catalog().text
    assert [m.skill.name for m in registry.match("repo skill")] == []

    trust_workspace(workspace)
    trusted = registry_from_config(resolve_config(workspace))
    assert trusted.require("deploy").skill.path == ws_deploy
    assert [s.name for s in trusted.offered()] == ["deploy", "repo-only"]
    assert trusted.require("repo-only").held_by_trust is False


def test_plugin_skills_are_namespaced_and_found_by_plain_name_when_unique(
    tmp_path: Path, write_skill: WriteSkill
) -> None:
    write_skill(tmp_path / "plug-a" / "skills", "pdf", "A's pdf")
    write_skill(tmp_path / "plug-b" / "skills", "pdf", "B's pdf")
    write_skill(tmp_path / "plug-b" / "skills", "xlsx", "B's xlsx")
    write_skill(tmp_path / "user", "pdf", "user's pdf")
    roots = [
        SkillRoot(path=tmp_path / "user", scope=SkillScope.USER),
        SkillRoot(path=tmp_path / "plug-a" / "skills", scope=SkillScope.PLUGIN, plugin="plug-a"),
        SkillRoot(path=tmp_path / "plug-b" / "skills", scope=SkillScope.PLUGIN, plugin="plug-b"),
    ]
    registry = SkillRegistry.load(roots)
    assert registry.names() == ["pdf", "plug-a:pdf", "plug-b:pdf", "plug-b:xlsx"]
    assert registry.require("pdf").skill.description == "user's pdf"
    assert registry.require("xlsx").skill.qualified_name == "plug-b:xlsx"


def test_configured_dirs_take_the_scope_of_the_file_that_lists_them(
    workspace: Path, isolated_home: Path, write_skill: WriteSkill, tmp_path: Path
) -> None:
    write_skill(tmp_path / "team-skills", "team", "team skill")
    (isolated_home / "kairox.toml").write_text(f'[skills]\ndirs = ["{tmp_path / "team-skills"}"]\n', encoding="utf-8")
    user_scoped = roots_from_config(resolve_config(workspace))
    assert [(r.path, r.scope) for r in user_scoped if r.label == "[skills] dirs"] == [
        (tmp_path / "team-skills", SkillScope.USER)
    ]

    write_skill(workspace / "tools" / "skills", "repo", "repo skill")
    (workspace / "kairox.toml").write_text('[skills]\ndirs = ["tools/skills"]\n', encoding="utf-8")
    project_scoped = roots_from_config(resolve_config(workspace))
    assert [(r.path, r.scope) for r in project_scoped if r.label == "[skills] dirs"] == [
        (workspace / "tools" / "skills", SkillScope.WORKSPACE)
    ]


def test_disable_and_enable_survive_a_restart(workspace: Path, isolated_home: Path, write_skill: WriteSkill) -> None:
    write_skill(isolated_home / "skills", "pr-review", "Review pull requests.")
    write_skill(workspace / ".kairox" / "skills", "lint", "Lint the repo.")
    assert kairox("trust", cwd=workspace).code == 0

    off = kairox("skills", "disable", "pr-review", cwd=workspace)
    assert off.code == 0, off.stderr
    assert "enabled = false" in (isolated_home / "kairox.toml").read_text(encoding="utf-8")
    off_ws = kairox("skills", "disable", "lint", "--scope", "workspace", cwd=workspace)
    assert off_ws.code == 0, off_ws.stderr
    assert off_ws.stderr.strip() == f"disabled lint in {workspace / '.kairox' / 'kairox.local.toml'}"

    listed = kairox("skills", "list", "--json", cwd=workspace).json()  # a new process reads the files again
    assert [(s["name"], s["enabled"], s["offered"]) for s in listed["skills"]] == [
        ("lint", False, False),
        ("pr-review", False, False),
    ]
    registry = registry_from_config(resolve_config(workspace))
    assert registry.offered() == []
    assert registry.catalog().text == ""

    assert kairox("skills", "enable", "pr-review", cwd=workspace).code == 0
    again = kairox("skills", "list", "--json", cwd=workspace).json()
    assert [(s["name"], s["enabled"]) for s in again["skills"]] == [("lint", False), ("pr-review", True)]


def test_disabling_an_unknown_skill_fails_with_a_suggestion(
    workspace: Path, isolated_home: Path, write_skill: WriteSkill
) -> None:
    write_skill(isolated_home / "skills", "pr-review", "Review pull requests.")
    run = kairox("skills", "disable", "pr-reviw", cwd=workspace)
    assert run.code == 6
    assert run.stderr == "kairox: no skill named 'pr-reviw'\n  hint: did you mean 'pr-review'?\n"
    assert not (isolated_home / "kairox.toml").exists()


def test_in_memory_enable_state_and_bad_session_skill(tmp_path: Path, write_skill: WriteSkill) -> None:
    write_skill(tmp_path / "skills", "a", "A.")
    registry = SkillRegistry.load([SkillRoot(path=tmp_path / "skills", scope=SkillScope.USER)], config=SkillsConfig())
    registry.set_enabled("a", False)
    assert (registry.require("a").enabled, registry.offered()) == (False, [])
    bad = tmp_path / "bad.md"
    bad.write_text("no frontmatter\n", encoding="utf-8")
    with pytest.raises(SkillLoadError) as raised:
        registry.add_session_skill(bad)
    assert (
        str(raised.value) == f"{bad}: cannot load the skill: error: {bad}:1: skill 'bad': no frontmatter: "
        "a skill needs YAML frontmatter with a description (start the file with "
        "YAML frontmatter between `---` lines holding at least `description`)"
    )


def test_disable_warns_when_a_higher_layer_still_enables_it(
    workspace: Path, isolated_home: Path, write_skill: WriteSkill
) -> None:
    write_skill(isolated_home / "skills", "pr-review", "Review pull requests.")
    local = workspace / ".kairox" / "kairox.local.toml"
    local.parent.mkdir()
    local.write_text('[skills.entries."pr-review"]\nenabled = true\n', encoding="utf-8")
    run = kairox("skills", "disable", "pr-review", cwd=workspace)
    assert run.code == 0
    assert run.stderr.splitlines() == [
        f"disabled pr-review in {isolated_home / 'kairox.toml'}",
        f"warning: {local} still sets it to true, which wins over {isolated_home / 'kairox.toml'}",
    ]


def test_plugin_skill_names_are_persisted_quoted(workspace: Path, isolated_home: Path) -> None:
    run = kairox("skills", "disable", "my-plugin:pdf", cwd=workspace)
    assert run.code == 0, run.stderr
    assert (isolated_home / "kairox.toml").read_text(
        encoding="utf-8"
    ) == '[skills.entries."my-plugin:pdf"]\nenabled = false\n'
    assert resolve_config(workspace).config.skills.entries["my-plugin:pdf"].enabled is False


def test_discovery_and_matching_are_reported_as_events(tmp_path: Path, write_skill: WriteSkill) -> None:
    from kairox.events import RecordingSink
    from kairox.skills._events import SkillsDiscovered, SkillsMatched

    write_skill(tmp_path / "skills", "pr-review", "Review pull requests.")
    write_skill(tmp_path / "skills", "bad", None)
    sink = RecordingSink()
    roots = [SkillRoot(path=tmp_path / "skills", scope=SkillScope.USER)]
    registry = SkillRegistry.load(roots, cache_file=tmp_path / "cache.json", events=sink)
    [found] = registry.match("review my pull request")
    SkillRegistry.load(roots, cache_file=tmp_path / "cache.json", events=sink)
    assert sink.events == [
        SkillsDiscovered(skills=1, shadowed=0, diagnostics=1, parsed=2, cached=0),
        SkillsMatched(
            prompt_terms=("review", "pull", "request"), matches=("pr-review",), scores=(round(found.score, 4),)
        ),
        SkillsDiscovered(skills=1, shadowed=0, diagnostics=1, parsed=0, cached=2),
    ]


def test_a_workspace_at_the_home_folder_reads_its_skills_once_as_user_skills(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, write_skill: WriteSkill
) -> None:
    home_dir = tmp_path / "me"
    (home_dir / ".git").mkdir(parents=True)
    monkeypatch.setenv("KAIROX_HOME", str(home_dir / ".kairox"))
    write_skill(home_dir / ".kairox" / "skills", "mine", "My skill.")
    resolved = resolve_config(home_dir)
    assert [(r.scope, r.label) for r in roots_from_config(resolved) if r.path == home_dir / ".kairox" / "skills"] == [
        (SkillScope.USER, "$KAIROX_HOME/skills")
    ]
    assert resolved.trusted is False
    registry = registry_from_config(resolved)
    assert [(e.skill.name, e.shadowed, e.offered) for e in registry.entries()] == [("mine", (), True)]


def test_excluded_plugin_skills_are_not_loaded(tmp_path: Path, write_skill: WriteSkill) -> None:
    write_skill(tmp_path / "kit", "pdf", "PDF.")
    write_skill(tmp_path / "kit", "lint", "Lint.")
    roots = [SkillRoot(path=tmp_path / "kit", scope=SkillScope.PLUGIN, plugin="kit")]
    registry = SkillRegistry.load(roots, exclude={"kit:lint"})
    assert [e.skill.qualified_name for e in registry.entries(include_shadowed=True)] == ["kit:pdf"]
