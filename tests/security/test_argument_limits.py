"""The policy reads a third-party tool's arguments for paths up to a limit (64 paths, 64 entries of a list or an
object, lists and objects nested 6 deep). A call that hides a path past a limit must not get past the rules on
paths that way: it is asked about (denied where the approval policy is never), and the tool, a real MCP server
that writes a marker file when it really runs, leaves none. Calls just under each limit are still decided by the
rules, and a call past a limit is not asked about when no rule and no protection depends on its paths."""

import sys
from pathlib import Path

import pytest
from tests.registry._support import ScriptedApprover, settings
from tests.security._support import workspace

from kairox._util._json import JsonObject
from kairox.config import ApprovalPolicy, McpServerConfig
from kairox.mcp import McpServerManager, McpToolAdapter
from kairox.policy import ApprovalRequest, Rule
from kairox.registry import ToolRegistry
from kairox.tools import ToolCall, ToolResult

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(60)]

SERVER = Path(__file__).resolve().parents[1] / "servers" / "hostile_server.py"
TOOL = "mcp__h__t0"
DENY_SECRETS = Rule(action="deny", pattern="fs.read(secrets/**)", layer="user", file="kairox.toml", line=1)
ALLOW_SERVER = Rule(action="allow", pattern="mcp__h__*", layer="user", file="kairox.toml", line=2)
WHAT_TO_DO = (
    "split it into calls of at most 64 paths, 64 entries per list or "
    "object, nesting 6 deep; no allow rule can vouch for what was not read"
)


def nested(levels: int, inner: JsonObject) -> JsonObject:
    """``inner`` as the innermost of ``levels`` objects, ``{"level1": {"level2": ... inner}}``: as the value of an
    argument, ``levels=6`` is as deep as the policy reads."""
    value = inner
    for index in reversed(range(1, levels)):
        value = {f"level{index}": value}
    return value


def notes(count: int, start: int = 0) -> list[str]:
    return [f"notes/{i}.md" for i in range(start, start + count)]


def uris(count: int) -> list[str]:
    return [f"file:///WS/notes/{i}.md" for i in range(count)]


# (case, arguments past a limit that hide secrets/key, why the policy says it could not read it all)
PAST_A_LIMIT = [
    (
        "list-items",
        {"paths": [*notes(64), "secrets/key"]},
        "argument 'paths' holds a list of 65 items and the policy reads the first 64",
    ),
    (
        "object-keys",
        {"options": {**{f"flag{i}": "on" for i in range(64)}, "path": "secrets/key"}},
        "argument 'options' holds an object of 65 entries and the policy reads the first 64",
    ),
    (
        "paths",
        {"sources": notes(40), "targets": notes(24, 40), "file": "secrets/key"},
        "the call names more than 64 paths and the policy reads the first 64",
    ),
    (
        "depth",
        {"a": nested(7, {"path": "secrets/key"})},
        "argument 'a' nests lists or objects more than 6 deep and the policy reads 6 levels",
    ),
    (
        "file-uris",
        {"resources": uris(32), "files": notes(32, 32), "uri": "file:///WS/secrets/key"},
        "the call names more than 64 paths and the policy reads the first 64",
    ),
    (
        "argument-keys",
        {**{f"field{i}": "value" for i in range(64)}, "path": "secrets/key"},
        "the call has 65 arguments and the policy reads the first 64",
    ),
    (
        "huge-object",
        {**{f"field{i}": "value" for i in range(1000)}, "path": "secrets/key"},
        "the call has 1001 arguments and the policy reads the first 64",
    ),
]

# the same spellings just under each limit: secrets/key is the last thing the policy reads
UNDER_THE_LIMIT = [
    ("list-items", {"paths": [*notes(63), "secrets/key"]}),
    ("object-keys", {"options": {**{f"flag{i}": "on" for i in range(63)}, "path": "secrets/key"}}),
    ("paths", {"sources": notes(40), "targets": notes(23, 40), "file": "secrets/key"}),
    ("depth", {"a": nested(6, {"path": "secrets/key"})}),
    ("file-uris", {"resources": uris(32), "files": notes(31, 32), "uri": "file:///WS/secrets/key"}),
    ("argument-keys", {**{f"field{i}": "value" for i in range(63)}, "path": "secrets/key"}),
    # read up to the limit, and what is past it (numbers) cannot name a path
    ("huge-object", {"path": "secrets/key", **{f"field{i}": i for i in range(1000)}}),
]


def _replace(value: object, old: str, new: str) -> object:
    """``value`` with ``old`` replaced by ``new`` in every string it holds."""
    if isinstance(value, str):
        return value.replace(old, new)
    if isinstance(value, list):
        return [_replace(item, old, new) for item in value]
    if isinstance(value, dict):
        return {key: _replace(item, old, new) for key, item in value.items()}
    return value


async def _call(
    tmp_path: Path,
    arguments: JsonObject,
    *rules: Rule,
    approval: ApprovalPolicy = ApprovalPolicy.ON_REQUEST,
    read_only: bool = False,
    warm: int = 0,
) -> tuple[ToolResult, list[ApprovalRequest], list[str]]:
    """A call of the hostile server's ``t0`` through a real registry, after ``warm`` harmless ones: its result, what
    the person was asked (the scripted person says no) and the marker files the server wrote."""
    ws = workspace(tmp_path)
    (ws / "secrets" / "key").write_text("sk-live-123", encoding="utf-8")
    markers = tmp_path / "markers"
    markers.mkdir()
    args = [str(SERVER), "--tools", "1", "--marker-dir", str(markers), *(["--read-only"] if read_only else [])]
    config = McpServerConfig(command=sys.executable, args=args, trust_annotations=read_only)
    approver = ScriptedApprover()
    registry = ToolRegistry(settings(ws, *rules, approval=approval), approver=approver)
    async with McpServerManager({"h": config}, workspace=ws, home=tmp_path / "home") as manager:
        await registry.add_provider(McpToolAdapter(manager.clients["h"]))
        for _ in range(warm):  # whatever the gate keeps for the tool after harmless calls
            assert not (await registry.call(ToolCall(name=TOOL, arguments={"x": "hello"}))).is_error
        result = await registry.call(ToolCall(name=TOOL, arguments=_replace(arguments, "/WS/", f"{ws}/")))  # type: ignore[arg-type]
    return result, approver.requests, sorted(p.name for p in markers.iterdir())


def _ids(cases: list[tuple[str, JsonObject, str]] | list[tuple[str, JsonObject]]) -> list[str]:
    return [case[0] for case in cases]


@pytest.mark.parametrize(("case", "arguments", "why"), PAST_A_LIMIT, ids=_ids(PAST_A_LIMIT))
async def test_a_path_past_a_limit_of_the_argument_scan_is_asked_about_not_allowed(
    tmp_path: Path, case: str, arguments: JsonObject, why: str
) -> None:
    result, asked, ran = await _call(tmp_path, arguments, DENY_SECRETS, ALLOW_SERVER)

    assert [(r.tool, r.source, r.asked_by, r.reason) for r in asked] == [
        (
            TOOL,
            "rule",
            "deny rule 'fs.read(secrets/**)' (kairox.toml:1)",
            f"{why}, so deny rule 'fs.read(secrets/**)' (kairox.toml:1) "
            f"cannot be checked against the rest; {WHAT_TO_DO}",
        )
    ]
    assert result.is_error and result.text_content().startswith(f"{TOOL} was not run")
    assert ran == []


@pytest.mark.parametrize(("case", "arguments", "why"), PAST_A_LIMIT, ids=_ids(PAST_A_LIMIT))
async def test_a_path_past_a_limit_is_denied_when_the_approval_policy_is_never(
    tmp_path: Path, case: str, arguments: JsonObject, why: str
) -> None:
    result, asked, ran = await _call(tmp_path, arguments, DENY_SECRETS, ALLOW_SERVER, approval=ApprovalPolicy.NEVER)

    assert asked == []
    assert result.is_error
    assert result.meta["decision"] == {
        "decision": "deny",
        "reason": f"{why}, so deny rule 'fs.read(secrets/**)' (kairox.toml:1) "
        f"cannot be checked against the rest; {WHAT_TO_DO}; "
        "the approval policy is never, so what would be asked is denied",
        "source": "rule",
        "rule": {"action": "deny", "pattern": "fs.read(secrets/**)", "layer": "user", "file": "kairox.toml", "line": 1},
        "suggested_rule": None,
    }
    assert ran == []


@pytest.mark.parametrize(("case", "arguments", "why"), PAST_A_LIMIT, ids=_ids(PAST_A_LIMIT))
async def test_a_call_past_a_limit_that_names_no_secret_is_asked_about_too(
    tmp_path: Path, case: str, arguments: JsonObject, why: str
) -> None:
    # the policy cannot tell the harmless call from the one above: it did not read what would tell them apart
    result, asked, ran = await _call(
        tmp_path, _replace(arguments, "secrets/key", "notes/last.md"), DENY_SECRETS, ALLOW_SERVER
    )  # type: ignore[arg-type]

    assert [(r.source, r.reason.split(", so ")[0]) for r in asked] == [("rule", why)]
    assert result.is_error and ran == []


@pytest.mark.parametrize(("case", "arguments"), UNDER_THE_LIMIT, ids=_ids(UNDER_THE_LIMIT))
async def test_a_secret_just_under_each_limit_is_denied_by_the_rule(
    tmp_path: Path, case: str, arguments: JsonObject
) -> None:
    result, asked, ran = await _call(tmp_path, arguments, DENY_SECRETS, ALLOW_SERVER)

    assert asked == []
    assert result.meta["decision"]["reason"] == "denied by deny rule 'fs.read(secrets/**)' (kairox.toml:1)"
    assert ran == []


@pytest.mark.parametrize(("case", "arguments"), UNDER_THE_LIMIT, ids=_ids(UNDER_THE_LIMIT))
async def test_a_harmless_call_just_under_each_limit_runs_as_the_allow_rule_says(
    tmp_path: Path, case: str, arguments: JsonObject
) -> None:
    result, asked, ran = await _call(
        tmp_path, _replace(arguments, "secrets/key", "notes/last.md"), DENY_SECRETS, ALLOW_SERVER
    )  # type: ignore[arg-type]

    assert asked == []
    assert (result.is_error, result.text_content()) == (False, "ok t0")
    assert ran == ["t0-1"]


async def test_a_write_past_a_limit_is_asked_about_for_the_protected_paths_without_any_path_rule(
    tmp_path: Path,
) -> None:
    result, asked, ran = await _call(tmp_path, {"paths": [*notes(64), ".mcp.json"], "content": "{}"}, ALLOW_SERVER)

    assert [(r.source, r.asked_by, r.reason) for r in asked] == [
        (
            "protected_path",
            None,
            "argument 'paths' holds a list of 65 items and the policy "
            "reads the first 64, so the rest cannot be checked "
            f"against the protected paths; {WHAT_TO_DO}",
        )
    ]
    assert result.is_error and ran == []


@pytest.mark.parametrize(("case", "arguments", "why"), PAST_A_LIMIT, ids=_ids(PAST_A_LIMIT))
async def test_a_read_only_tool_past_a_limit_runs_when_no_rule_is_about_paths(
    tmp_path: Path, case: str, arguments: JsonObject, why: str
) -> None:
    # read-only (trusted annotations): the protected paths do not hold for it, and no rule names a path
    result, asked, ran = await _call(tmp_path, arguments, read_only=True)

    assert asked == []
    assert (result.is_error, result.text_content()) == (False, "ok t0")
    assert ran == ["t0-1"]


async def test_a_read_only_tool_past_a_limit_is_asked_about_when_a_rule_is_about_paths(tmp_path: Path) -> None:
    result, asked, ran = await _call(tmp_path, {"paths": [*notes(64), "secrets/key"]}, DENY_SECRETS, read_only=True)

    assert [(r.source, r.asked_by) for r in asked] == [("rule", "deny rule 'fs.read(secrets/**)' (kairox.toml:1)")]
    assert result.is_error and ran == []


@pytest.mark.parametrize(("case", "arguments", "why"), PAST_A_LIMIT, ids=_ids(PAST_A_LIMIT))
async def test_a_warm_allow_for_the_tool_does_not_carry_a_protected_path_past_a_limit(
    tmp_path: Path, case: str, arguments: JsonObject, why: str
) -> None:
    # three harmless calls run first, so the gate keeps its decision for the tool; then .mcp.json hides past a limit
    result, asked, ran = await _call(tmp_path, _replace(arguments, "secrets/key", ".mcp.json"), ALLOW_SERVER, warm=3)  # type: ignore[arg-type]

    assert [(r.source, r.reason.split(", so ")[0]) for r in asked] == [("protected_path", why)]
    assert result.is_error and ran == ["t0-1", "t0-2", "t0-3"]
