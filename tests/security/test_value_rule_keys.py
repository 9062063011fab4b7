"""Rules on values see the whole call (attack corpus): object keys are values, so a deny or ask rule sees every
string at any depth, keys included, and an allow rule vouches only for a call whose every part it looked at, so no
empty list or object, no key and no value it did not match rides along beside what it vouches for."""

from pathlib import Path

import pytest
from tests.security._support import engine, mcp_tool, workspace
from tests.security.test_value_rules import ALLOW_SELECT, DROP, _call

from kairox._util._json import JsonObject
from kairox.policy import Verdict

QUERY = mcp_tool(
    "db", "query", schema={"type": "object", "properties": {"sql": {"type": "string"}, "options": {"type": "object"}}}
)
DENY_DROP = ("deny", "mcp__db__query(*DROP*)")
ASK_DROP = ("ask", "mcp__db__query(*DROP*)")
DENY_NAMED = ("deny", "mcp__db__query(.sql=*DROP*)")
ALLOW_UNNAMED = ("allow", "mcp__db__query(SELECT*)")

KEYED = (
    ("a-top-level-key", {"sql": "SELECT 1", DROP: 1}),
    ("a-key-in-an-object", {"sql": "SELECT 1", "options": {DROP: True}}),
    ("a-deep-key", {"sql": "SELECT 1", "options": {"a": [{"b": {DROP: None}}]}}),
    ("a-key-in-a-list", {"sql": "SELECT 1", "options": {"steps": [{DROP: "SELECT 2"}]}}),
)
UNVOUCHED = (
    (
        "an-extra-key-with-a-matching-value",
        {"sql": "SELECT 1", "options": {DROP: "SELECT 2"}},
        "holds a key that does not match",
    ),
    ("an-empty-object", {"sql": "SELECT 1", "x": {}}, "holds an empty object"),
    ("an-empty-list", {"sql": "SELECT 1", "x": []}, "holds an empty list"),
    ("an-empty-object-in-a-list", {"sql": ["SELECT 1", {}]}, "holds an empty object"),
    ("an-empty-list-deep", {"sql": [["SELECT 1"], []]}, "holds an empty list"),
    ("a-value-under-a-key", {"sql": {DROP: "SELECT 1"}}, "holds a key that does not match"),
    ("the-issue-example", {"sql": "SELECT 1", DROP: 1}, "holds a value that does not match"),
    # a top-level name the schema does not declare is a value too, also when its own value would match
    (
        "an-undeclared-key-with-a-matching-value",
        {"sql": "SELECT 1", DROP: "SELECT 2"},
        "which the tool does not declare, does not match",
    ),
)


def _ids(cases: tuple[tuple[object, ...], ...]) -> list[str]:
    return [str(case[0]) for case in cases]


@pytest.mark.parametrize(("case", "arguments"), KEYED, ids=_ids(KEYED))
def test_a_deny_or_ask_rule_sees_keys_at_any_depth(tmp_path: Path, case: str, arguments: JsonObject) -> None:
    ws = workspace(tmp_path)
    assert engine(ws, DENY_DROP).decide(QUERY, arguments).verdict is Verdict.DENY
    ask = engine(ws, ASK_DROP, ("allow", "mcp__db__query")).decide(QUERY, arguments)
    assert (ask.verdict, ask.source) == (Verdict.ASK, "rule")
    # an allow rule naming the tool does not outweigh the deny either
    assert engine(ws, DENY_DROP, ("allow", "mcp__db__query")).decide(QUERY, arguments).verdict is Verdict.DENY


@pytest.mark.parametrize(("case", "arguments"), KEYED[1:], ids=_ids(KEYED[1:]))
def test_a_named_deny_rule_sees_keys_below_its_argument(tmp_path: Path, case: str, arguments: JsonObject) -> None:
    ws = workspace(tmp_path)
    moved = {"sql": arguments["options"]}
    assert engine(ws, DENY_NAMED).decide(QUERY, moved).verdict is Verdict.DENY


@pytest.mark.parametrize(("case", "arguments", "why"), UNVOUCHED, ids=_ids(UNVOUCHED))
def test_an_unnamed_allow_rule_does_not_vouch_for_what_it_did_not_look_at(
    tmp_path: Path, case: str, arguments: JsonObject, why: str
) -> None:
    decision = engine(workspace(tmp_path), ALLOW_UNNAMED).decide(QUERY, arguments)
    assert (decision.verdict, decision.source) == (Verdict.ASK, "mode")
    assert (
        "allow rule 'mcp__db__query(SELECT*)' (kairox.toml:1) vouches only for calls whose every value matches"
        in decision.reason
    )
    assert why in decision.reason


@pytest.mark.parametrize("arguments", [{"sql": "SELECT 1"}, {"sql": ["SELECT 1", "SELECT 2"]}, {"sql": [["SELECT 1"]]}])
def test_an_unnamed_allow_rule_still_vouches_for_what_all_matches(tmp_path: Path, arguments: JsonObject) -> None:
    decision = engine(workspace(tmp_path), ALLOW_UNNAMED).decide(QUERY, arguments)
    assert (decision.verdict, decision.reason) == (
        Verdict.ALLOW,
        "allowed by allow rule 'mcp__db__query(SELECT*)' (kairox.toml:1)",
    )


@pytest.mark.anyio
@pytest.mark.timeout(60)
@pytest.mark.parametrize(
    "arguments",
    [{"sql": "SELECT 1", "opts": {}}, {"sql": "SELECT 1", "opts": {DROP: "SELECT 2"}}],
    ids=["empty", "key"],
)
async def test_through_a_real_server_the_smuggled_call_never_runs(tmp_path: Path, arguments: JsonObject) -> None:
    result, asked, ran = await _call(tmp_path, arguments, ALLOW_SELECT)
    assert [r.source for r in asked] == ["mode"] and result.is_error and ran == []
