"""S7: the `skill` tool loads a body with arguments validated and substituted, and checks needed tools."""

from pathlib import Path

import pytest
from tests.skills.conftest import WriteSkill

from kairox.events import RecordingSink
from kairox.skills import SkillRegistry, SkillToolProvider
from kairox.skills._discovery import SkillRoot
from kairox.skills._events import SkillLoaded
from kairox.skills._model import SkillScope
from kairox.tools import CallContext, ToolSource

DEPLOY = """keywords: [deploy]
tools: [shell.exec, mcp__k8s__*]
model: fast-model
arguments:
  service: {type: string, description: Which service, required: true}
  replicas: {type: integer, default: 2}"""
DEPLOY_BODY = (
    "Deploy ${service} with ${replicas} replicas.\nKeep ${HOME} and $${service} as written.\nAll: $ARGUMENTS\n"
)


@pytest.fixture
def registry(tmp_path: Path, write_skill: WriteSkill) -> SkillRegistry:
    root = tmp_path / "skills"
    write_skill(root, "deploy", "Deploy a service.", extra=DEPLOY, body=DEPLOY_BODY)
    (root / "deploy" / "scripts").mkdir()
    (root / "deploy" / "scripts" / "rollout.sh").write_text("echo\n", encoding="utf-8")
    write_skill(root, "notes", "Take notes.", body="Notes about: $ARGUMENTS\n")
    write_skill(root, "plain", "Plain skill.", body="Just do it.\n")
    write_skill(root, "manual", "Only for people.", extra="disable-model-invocation: true")
    return SkillRegistry.load([SkillRoot(path=root, scope=SkillScope.USER)])


def _context(tmp_path: Path) -> CallContext:
    return CallContext(call_id="c1", workspace=tmp_path)


@pytest.mark.anyio
async def test_skill_body_gets_arguments_defaults_files_and_model(registry: SkillRegistry, tmp_path: Path) -> None:
    sink = RecordingSink()
    provider = SkillToolProvider(registry, registered=lambda: ["shell.exec", "mcp__k8s__apply", "fs.read"], events=sink)
    [spec] = await provider.list_tools()
    assert (spec.name, spec.source, spec.origin) == ("skill", ToolSource.SKILL, "skills")
    result = await provider.call_tool("skill", {"name": "deploy", "arguments": {"service": "api"}}, _context(tmp_path))
    assert not result.is_error
    folder = tmp_path / "skills" / "deploy"
    assert result.text_content() == (
        "Deploy api with 2 replicas.\nKeep ${HOME} and ${service} as written.\nAll: api 2\n\n---\n"
        f"Skill 'deploy' from {folder / 'SKILL.md'}\n"
        f"Bundled files in {folder}: scripts/rollout.sh\n"
        "The skill asks for model 'fast-model'."
    )
    assert result.structured == {
        "name": "deploy",
        "path": str(folder / "SKILL.md"),
        "folder": str(folder),
        "files": ["scripts/rollout.sh"],
        "model": "fast-model",
        "tools": ["shell.exec", "mcp__k8s__*"],
        "allowed_tools": [],
        "arguments": {"service": "api", "replicas": 2},
        "content": result.text_content(),
    }
    assert sink.events == [
        SkillLoaded(name="deploy", path=str(folder / "SKILL.md"), arguments=("service", "replicas"), model="fast-model")
    ]


@pytest.mark.anyio
async def test_bad_arguments_are_a_readable_tool_error(registry: SkillRegistry, tmp_path: Path) -> None:
    provider = SkillToolProvider(registry, registered=["shell.exec", "mcp__k8s__apply"])
    result = await provider.call_tool(
        "skill", {"name": "deploy", "arguments": {"replicas": "three", "servce": "api"}}, _context(tmp_path)
    )
    assert result.is_error
    assert result.text_content() == (
        "skill 'deploy': bad arguments: 'servce' is not an argument of this skill (did you mean 'service'?); "
        "'service' is a required property; replicas: 'three' is not "
        "of type 'integer'\n  hint: fix the arguments and call again"
    )


@pytest.mark.anyio
async def test_missing_tools_are_named(registry: SkillRegistry, tmp_path: Path) -> None:
    provider = SkillToolProvider(registry, registered=["fs.read"])
    result = await provider.call_tool("skill", {"name": "deploy", "arguments": {"service": "api"}}, _context(tmp_path))
    assert result.is_error
    assert (
        result.text_content().splitlines()[0]
        == "skill 'deploy' needs tools that are not registered: shell.exec, mcp__k8s__*"
    )


@pytest.mark.anyio
async def test_free_text_fills_arguments_placeholder_or_is_appended(registry: SkillRegistry, tmp_path: Path) -> None:
    provider = SkillToolProvider(registry)
    notes = await provider.call_tool("skill", {"name": "notes", "text": "the standup"}, _context(tmp_path))
    assert notes.text_content().splitlines()[0] == "Notes about: the standup"
    plain = await provider.call_tool("skill", {"name": "plain", "text": "quickly"}, _context(tmp_path))
    assert plain.text_content().splitlines()[:3] == ["Just do it.", "", "ARGUMENTS: quickly"]
    named = await provider.call_tool("skill", {"name": "plain", "arguments": {"x": 1}}, _context(tmp_path))
    assert (
        named.text_content().splitlines()[0] == "skill 'plain': bad arguments: 'x' is not an argument of "
        "this skill (it declares none; pass free text as `text`)"
    )


@pytest.mark.anyio
async def test_unknown_and_hidden_skills_are_refused(registry: SkillRegistry, tmp_path: Path) -> None:
    provider = SkillToolProvider(registry)
    unknown = await provider.call_tool("skill", {"name": "deplyo"}, _context(tmp_path))
    assert unknown.text_content() == "no skill named 'deplyo'\n  hint: did you mean 'deploy'?"
    manual = await provider.call_tool("skill", {"name": "manual"}, _context(tmp_path))
    assert (
        manual.text_content()
        == "skill 'manual' is not available: disable-model-invocation is set; only a user can invoke it"
    )
    registry.set_enabled("plain", False)
    off = await provider.call_tool("skill", {"name": "plain"}, _context(tmp_path))
    assert off.text_content() == "skill 'plain' is not available: disabled in configuration"


@pytest.mark.anyio
async def test_no_offered_skills_means_no_tool(tmp_path: Path) -> None:
    provider = SkillToolProvider(SkillRegistry())
    assert await provider.list_tools() == []


def test_a_command_prompt_fills_positional_words_the_whole_text_and_declared_arguments(
    registry: SkillRegistry, tmp_path: Path, write_skill: WriteSkill
) -> None:
    from kairox.skills import command_prompt
    from kairox.skills._use import SkillArgumentsError

    root = tmp_path / "more"
    write_skill(root, "ship", "Ship a branch.", body="Push $1 to $2 ($3), keep $$1 and $10; all: $ARGUMENTS\n")
    more = SkillRegistry.load([SkillRoot(path=root, scope=SkillScope.USER)])
    ship = more.require("ship").skill
    assert (
        command_prompt(ship, '"feature x" upstream').splitlines()[0]
        == 'Push feature x to upstream (), keep $1 and $10; all: "feature x" upstream'
    )
    assert command_prompt(registry.require("plain").skill, "  quickly ").splitlines()[:3] == [
        "Just do it.",
        "",
        "ARGUMENTS: quickly",
    ]
    assert command_prompt(registry.require("plain").skill) == "Just do it.\n"
    deploy = registry.require("deploy").skill
    # one required argument of two: free text does not fill it, and the error names it
    with pytest.raises(SkillArgumentsError, match="'service' is a required property"):
        command_prompt(deploy, "")
