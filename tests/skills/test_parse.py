"""S1, S2: both formats load; odd frontmatter loads with a warning; only what cannot be a skill is skipped."""

from pathlib import Path

from kairox.errors import Severity
from kairox.skills import SkillArgument, read_body
from kairox.skills._load import parse_skill_file
from kairox.skills._model import SkillFormat
from kairox.skills._parse import parse_skill_text


def _diag(outcome: object) -> list[tuple[str, int | None, str]]:
    return [(str(d.severity), d.line, d.reason) for d in outcome.diagnostics]  # type: ignore[attr-defined]


def test_agent_skill_keeps_claude_keys_and_reads_allowed_tools_string(tmp_path: Path) -> None:
    path = tmp_path / "pdf" / "SKILL.md"
    text = (
        "---\n"
        "name: pdf\n"
        "description: Fill and merge PDF forms.\n"
        "license: Apache-2.0\n"
        "compatibility: needs poppler\n"
        "allowed-tools: Read, Bash(pdftotext:*), Grep\n"
        "when_to_use: the user hands over a PDF form\n"
        "disable-model-invocation: false\n"
        "user-invocable: true\n"
        "argument-hint: [file]\n"
        "x-custom: 3\n"
        "metadata:\n  version: 1.2\n  owner: docs\n"
        "---\n# PDF\nSteps.\n"
    )
    outcome = parse_skill_text(text, path)
    skill = outcome.skill
    assert skill is not None
    assert (skill.name, skill.description, skill.format) == (
        "pdf",
        "Fill and merge PDF forms.",
        SkillFormat.AGENT_SKILLS,
    )
    fm = skill.frontmatter
    assert fm.allowed_tools == ("Read", "Bash(pdftotext:*)", "Grep")
    assert fm.tools == ()
    assert fm.license == "Apache-2.0" and fm.compatibility == "needs poppler"
    assert fm.when_to_use == "the user hands over a PDF form"
    assert fm.argument_hint == "[file]", "Claude's documented `argument-hint: [file]` is the hint as written"
    assert fm.extra == {"x-custom": 3}
    assert fm.metadata == {"version": "1.2", "owner": "docs"}
    assert _diag(outcome) == [
        ("warning", 12, "`metadata` values should be strings; version converted to text"),
    ]
    assert skill.body_line == 16


def test_kairox_skill_reads_keywords_tools_model_and_arguments(tmp_path: Path) -> None:
    path = tmp_path / "deploy.md"
    text = (
        "---\n"
        "name: deploy\n"
        "description: Deploy a service.\n"
        "scope: workspace\n"
        "keywords: deploy, release, ship it\n"
        "tools: [shell.exec, mcp__k8s__apply]\n"
        "model: fast\n"
        "arguments:\n"
        "  service: {type: string, description: Which service, required: true}\n"
        "  replicas: {type: integer, default: 2}\n"
        "---\nDeploy ${service}.\n"
    )
    outcome = parse_skill_text(text, path)
    assert outcome.diagnostics == []
    skill = outcome.skill
    assert skill is not None
    assert skill.format is SkillFormat.KAIROX
    assert skill.keywords == ("deploy", "release", "ship it")
    assert skill.tools == ("shell.exec", "mcp__k8s__apply")
    assert skill.model == "fast"
    assert skill.frontmatter.scope == "workspace"
    assert skill.arguments == (
        SkillArgument(name="service", type="string", description="Which service", required=True),
        SkillArgument(name="replicas", type="integer", default=2),
    )


def test_file_without_frontmatter_is_one_error_pointing_at_its_description_line(tmp_path: Path) -> None:
    path = tmp_path / "proposal" / "SKILL.md"
    outcome = parse_skill_text("# Proposal\n\ndescription: Create proposals.\n\n## Steps\n", path)
    assert outcome.skill is None
    [diagnostic] = outcome.diagnostics
    assert (diagnostic.severity, diagnostic.source, diagnostic.line, diagnostic.name) == (
        Severity.ERROR,
        str(path),
        1,
        "proposal",
    )
    assert diagnostic.reason == "no frontmatter: a skill needs YAML frontmatter with a description"
    assert (
        diagnostic.hint == "line 3 has a `description:` line in the body; move it into "
        "frontmatter between `---` lines at the top of the file"
    )


def test_missing_description_is_skipped_with_the_reason(tmp_path: Path) -> None:
    outcome = parse_skill_text("---\nname: x\n---\nbody\n", tmp_path / "x" / "SKILL.md")
    assert outcome.skill is None
    assert _diag(outcome) == [("error", 2, "no `description`: a skill needs one to be offered")]


def test_unquoted_colon_is_repaired_once_with_a_warning_on_its_line(tmp_path: Path) -> None:
    text = "---\nname: review\ndescription: Review code: find bugs, suggest fixes\nkeywords: [review]\n---\nbody\n"
    outcome = parse_skill_text(text, tmp_path / "review" / "SKILL.md")
    assert outcome.skill is not None
    assert outcome.skill.description == "Review code: find bugs, suggest fixes"
    assert _diag(outcome) == [
        ("warning", 3, "unquoted `: ` in the value of `description`; loaded as if it were quoted")
    ]


def test_yaml_that_stays_broken_is_skipped_with_its_line(tmp_path: Path) -> None:
    text = "---\nname: broken\ndescription: fine\nkeywords: [a, b\nmodel: x\n---\nbody\n"
    outcome = parse_skill_text(text, tmp_path / "broken" / "SKILL.md")
    assert outcome.skill is None
    [diagnostic] = outcome.diagnostics
    assert diagnostic.severity is Severity.ERROR
    assert diagnostic.reason.startswith("frontmatter is not valid YAML: ")
    assert diagnostic.line == 5  # `model: x`, where YAML found the list unclosed


def test_name_folder_mismatch_and_long_description_load_with_warnings(tmp_path: Path) -> None:
    long = "word " * 250
    text = f"---\nname: zoom-oauth\ndescription: {long}\n---\nbody\n"
    outcome = parse_skill_text(text, tmp_path / "oauth" / "SKILL.md")
    assert outcome.skill is not None and outcome.skill.name == "zoom-oauth"
    assert _diag(outcome) == [
        ("warning", 2, "`name` 'zoom-oauth' differs from its folder 'oauth'; loaded as 'zoom-oauth'"),
        (
            "warning",
            3,
            f"`description` is {len(long.strip())} characters (more than 1024); the prompt catalog shortens it",
        ),
    ]


def test_missing_name_falls_back_to_the_folder(tmp_path: Path) -> None:
    outcome = parse_skill_text("---\ndescription: d\n---\n", tmp_path / "helper" / "SKILL.md")
    assert outcome.skill is not None and outcome.skill.name == "helper"
    assert _diag(outcome) == [("warning", 2, "no `name`; using the folder name 'helper'")]


def test_unclosed_frontmatter_and_unreadable_files_are_diagnostics(tmp_path: Path) -> None:
    outcome = parse_skill_text("---\nname: a\ndescription: b\n", tmp_path / "a" / "SKILL.md")
    assert _diag(outcome) == [("error", 1, "frontmatter opened by `---` on line 1 is never closed")]
    missing = parse_skill_file(tmp_path / "nope" / "SKILL.md")
    assert missing.skill is None
    assert [d.reason for d in missing.diagnostics] == ["cannot read the file: No such file or directory"]


def test_body_is_read_on_use_not_at_load(tmp_path: Path) -> None:
    path = tmp_path / "s" / "SKILL.md"
    path.parent.mkdir()
    path.write_text("---\nname: s\ndescription: d\n---\nfirst body\n", encoding="utf-8")
    skill = parse_skill_file(path).skill
    assert skill is not None
    path.write_text("---\nname: s\ndescription: d\n---\nsecond body\n", encoding="utf-8")
    assert read_body(skill) == "second body\n"


def test_self_referencing_or_exploding_yaml_aliases_are_one_error_not_a_crash(tmp_path: Path) -> None:
    path = tmp_path / "loop" / "SKILL.md"
    cyclic = "---\nname: loop\ndescription: d\nmetadata: &m\n  again: *m\n---\nbody\n"
    laughs = (
        "---\nname: loop\ndescription: d\n"
        + "".join(f"l{i}: &l{i} [{', '.join([f'*l{i - 1}'] * 10) if i else 'x'}]\n" for i in range(8))
        + "---\n"
    )
    deep = "---\nname: loop\ndescription: d\nmetadata: " + "[" * 900 + "]" * 900 + "\n---\n"
    for text in (cyclic, laughs, deep):
        outcome = parse_skill_text(text, path)
        assert outcome.skill is None
        assert _diag(outcome) == [
            (
                "error",
                2,
                "frontmatter is too large or nested too deeply to read (a "
                "YAML alias that refers to itself, or aliases that multiply)",
            )
        ]


def test_plain_frontmatter_reads_as_yaml_would_and_yaml_words_keep_their_meaning(tmp_path: Path) -> None:
    path = tmp_path / "deploy" / "SKILL.md"
    plain = parse_skill_text(
        "---\nname: deploy\ndescription: Ships it, then checks (twice). Use for C# or http://x/y.\n"
        "keywords: [release, pull request, ci/cd]\nwhen_to_use: a release is due\n"
        "metadata:\n  owner: ops\n  tier: gold\n---\nSteps.\n",
        path,
    )
    assert plain.skill is not None and plain.diagnostics == []
    fm = plain.skill.frontmatter
    assert (plain.skill.description, fm.keywords, fm.when_to_use, fm.metadata, plain.skill.body_line) == (
        "Ships it, then checks (twice). Use for C# or http://x/y.",
        ("release", "pull request", "ci/cd"),
        "a release is due",
        {"owner": "ops", "tier": "gold"},
        10,
    )
    # Words YAML reads as booleans or null, a comment, a colon in a value: what the YAML loader makes of them.
    odd = parse_skill_text(
        "---\nname: deploy\ndescription: yes\nkeywords: [release, on] # two\nmodel: null\n---\n", path
    )
    assert odd.skill is not None and (odd.skill.description, odd.skill.keywords, odd.skill.model) == (
        "True",
        ("release",),
        None,
    )
    assert _diag(odd) == [
        ("warning", 3, "`description` is a bool, not a string; read as 'True'"),
        ("warning", 4, "`keywords` has items that are not strings; they were left out"),
    ]
    repaired = parse_skill_text("---\nname: deploy\ndescription: Ships: then checks\n---\n", path)
    assert repaired.skill is not None and repaired.skill.description == "Ships: then checks"
    assert _diag(repaired) == [
        ("warning", 3, "unquoted `: ` in the value of `description`; loaded as if it were quoted")
    ]
