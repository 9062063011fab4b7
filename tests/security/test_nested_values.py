"""Deny and ask rules on a tool's values (``mcp__db__query(*DROP TABLE*)``) see every string of the call, also
inside lists and objects: a value cannot get past them by being nested. The tool is a real MCP server that writes a
marker file each time it really runs. An allow rule on values vouches only when every value matches (see
``test_value_rules``), so a nested copy of a harmless value never vouches for a
call. And a plugin tool that declares some of its path arguments has its other
path-like arguments held to the rules on paths and the protected paths too."""

import sys
from pathlib import Path

import pytest
from tests.registry._support import ScriptedApprover, settings
from tests.security._support import workspace

from kairox._util._json import JsonObject
from kairox.config import McpServerConfig, PolicyConfig
from kairox.mcp import McpServerManager, McpToolAdapter
from kairox.policy import DecisionSource, PolicyEngine, PolicySettings, Rule, Verdict
from kairox.registry import ToolRegistry
from kairox.tools import Access, PermissionProfile, ToolCall, ToolResult, ToolSource, ToolSpec

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(60)]

SERVER = Path(__file__).resolve().parents[1] / "servers" / "hostile_server.py"
TOOL = "mcp__h__t0"
ALLOW_SERVER = Rule(action="allow", pattern="mcp__h__*", layer="user", file="kairox.toml", line=1)
DENY_DROP = Rule(action="deny", pattern="mcp__h__t0(*DROP TABLE*)", layer="user", file="kairox.toml", line=2)
ASK_DROP = Rule(action="ask", pattern="mcp__h__t0(*DROP TABLE*)", layer="user", file="kairox.toml", line=2)
DROP = "DROP TABLE users"


def deep(levels: int, inner: object) -> object:
    for index in range(levels):
        inner = {f"level{index}": inner}
    return inner


# (case, arguments that carry the statement somewhere)
NESTED = [
    ("top-level", {"sql": DROP}),
    ("in-an-object", {"query": {"text": DROP, "limit": 5}}),
    ("in-a-list", {"statements": ["SELECT 1", DROP]}),
    ("list-in-object", {"batch": {"steps": [{"sql": "SELECT 1"}, {"sql": DROP}]}}),
    ("twenty-deep", {"a": deep(20, {"sql": DROP})}),
    ("after-a-thousand-items", {"statements": [*(f"SELECT {i}" for i in range(1000)), DROP]}),
    ("lists-of-lists", {"grid": [[["x"], ["y", [DROP]]]]}),
]
HARMLESS = {"batch": {"steps": [{"sql": "SELECT 1"}, {"sql": "SELECT 2"}]}, "grid": [[["x"]]]}


async def _call(tmp_path: Path, arguments: JsonObject, *rules: Rule) -> tuple[ToolResult, list[str], list[str]]:
    """One call of the server's ``t0`` through a real registry: its result, the reasons the person was asked for
    (the scripted person says no) and the marker files the server wrote."""
    ws = workspace(tmp_path)
    markers = tmp_path / "markers"
    markers.mkdir()
    config = McpServerConfig(command=sys.executable, args=[str(SERVER), "--tools", "1", "--marker-dir", str(markers)])
    approver = ScriptedApprover()
    registry = ToolRegistry(settings(ws, *rules), approver=approver)
    async with McpServerManager({"h": config}, workspace=ws, home=tmp_path / "home") as manager:
        await registry.add_provider(McpToolAdapter(manager.clients["h"]))
        result = await registry.call(ToolCall(name=TOOL, arguments=arguments))
    return result, [r.reason for r in approver.requests], sorted(p.name for p in markers.iterdir())


@pytest.mark.parametrize(("case", "arguments"), NESTED, ids=[case for case, _ in NESTED])
async def test_a_deny_rule_on_values_sees_a_nested_value(tmp_path: Path, case: str, arguments: JsonObject) -> None:
    result, asked, ran = await _call(tmp_path, arguments, ALLOW_SERVER, DENY_DROP)

    assert asked == []
    assert result.is_error
    assert result.meta["decision"]["reason"] == "denied by deny rule 'mcp__h__t0(*DROP TABLE*)' (kairox.toml:2)"
    assert ran == []


@pytest.mark.parametrize(("case", "arguments"), NESTED, ids=[case for case, _ in NESTED])
async def test_an_ask_rule_on_values_sees_a_nested_value(tmp_path: Path, case: str, arguments: JsonObject) -> None:
    result, asked, ran = await _call(tmp_path, arguments, ALLOW_SERVER, ASK_DROP)

    # asked once, naming the rule (past the path scan's depth the reason says the call could not all be read)
    assert len(asked) == 1 and "ask rule 'mcp__h__t0(*DROP TABLE*)' (kairox.toml:2)" in asked[0]
    if case != "twenty-deep":
        assert asked == ["ask rule 'mcp__h__t0(*DROP TABLE*)' (kairox.toml:2) asks for approval"]
    assert result.is_error and ran == []


async def test_a_nested_harmless_call_runs_under_the_same_rules(tmp_path: Path) -> None:
    result, asked, ran = await _call(tmp_path, HARMLESS, ALLOW_SERVER, DENY_DROP, ASK_DROP)

    assert asked == []
    assert (result.is_error, result.text_content()) == (False, "ok t0")
    assert ran == ["t0-1"]


def _engine(ws: Path, *rules: tuple[str, str]) -> PolicyEngine:
    parsed = [
        Rule(action=action, pattern=pattern, layer="user", file="kairox.toml", line=n)
        for n, (action, pattern) in enumerate(rules, 1)
    ]
    return PolicyEngine(PolicySettings.from_config(PolicyConfig(), workspace=ws, rules=parsed, home=ws.parent / "home"))


def _spec(source: ToolSource, *, access: Access = Access.EXTERNAL, path_args: tuple[str, ...] = ()) -> ToolSpec:
    name = "mcp__db__query" if source is ToolSource.MCP else "ops__convert"
    return ToolSpec(
        name=name,
        description="",
        input_schema={"type": "object", "properties": {"sql": {}, "meta": {}, "path": {}, "files": {}}},
        source=source,
        origin="db" if source is ToolSource.MCP else "ops",
        permission=PermissionProfile(access=access, path_args=path_args),
    )


def test_an_allow_rule_on_values_does_not_vouch_for_a_call_by_a_nested_copy(tmp_path: Path) -> None:
    policy, spec = _engine(tmp_path, ("allow", "mcp__db__query(SELECT *)")), _spec(ToolSource.MCP)

    assert policy.decide(spec, {"sql": "SELECT 1"}).verdict is Verdict.ALLOW
    smuggled = policy.decide(spec, {"sql": "DELETE FROM users", "meta": {"note": "SELECT 1"}})
    assert smuggled.verdict is Verdict.ASK and smuggled.rule is None  # the mode decides, not the allow rule


# (case, a plugin tool's arguments besides its declared path `input`, what decides)
UNDECLARED = [
    ("deny-rule", {"input": "notes/a.md", "output_file": "secrets/key"}, (Verdict.DENY, DecisionSource.RULE)),
    (
        "deny-rule-nested",
        {"input": "notes/a.md", "options": {"log_path": "secrets/key"}},
        (Verdict.DENY, DecisionSource.RULE),
    ),
    ("deny-rule-uri", {"input": "notes/a.md", "target": "file:///WS/secrets/key"}, (Verdict.DENY, DecisionSource.RULE)),
    (
        "protected",
        {"input": "notes/a.md", "output_file": ".git/hooks/pre-commit"},
        (Verdict.ASK, DecisionSource.PROTECTED_PATH),
    ),
    (
        "protected-config",
        {"input": "notes/a.md", "destination": ".mcp.json"},
        (Verdict.ASK, DecisionSource.PROTECTED_PATH),
    ),
]


@pytest.mark.parametrize(("case", "arguments", "outcome"), UNDECLARED, ids=[case for case, _, _ in UNDECLARED])
def test_a_plugin_tools_undeclared_path_arguments_are_held_to_the_rules_on_paths(
    tmp_path: Path, case: str, arguments: JsonObject, outcome: tuple[Verdict, DecisionSource]
) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    arguments = {k: v.replace("/WS/", f"{ws}/") if isinstance(v, str) else v for k, v in arguments.items()}
    policy = _engine(ws, ("deny", "fs.read(secrets/**)"), ("allow", "plugin:ops"))
    spec = _spec(ToolSource.PLUGIN, access=Access.EXECUTE, path_args=("input",))

    assert policy.decide(spec, {"input": "notes/a.md", "output_file": "out/a.html"}).verdict is Verdict.ALLOW
    decision = policy.decide(spec, arguments)
    assert (decision.verdict, decision.source) == outcome
