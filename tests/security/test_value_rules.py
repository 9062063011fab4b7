"""An allow rule on a tool's values vouches only for what it names. Unnamed (``mcp__h__t0(SELECT *)``), it vouches
for a call only when every value of the call, also inside lists and objects and also numbers and flags, matches: a
harmless value in one argument must not carry a statement in another. Named (``mcp__h__t0(.sql=SELECT *)``), it
vouches for a call whose arguments are exactly the ones it names, each matching all through. Named deny and ask
rules see every value below the argument they name. The tool is a real MCP server that writes a marker file each
time it really runs; the scripted person says no to every question."""

import sys
from collections.abc import Sequence
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
DROP = "DROP TABLE users"
PARAMETERS = (
    "sql",
    "comment",
    "limit",
    "then",
    "more",
    "a",
    "drop_after",
    "repeat",
    "where",
    "statements",
    "batch",
    "opts",
    "query",
)
"""What the tool's schema declares: the names an unnamed allow rule reads as parameters, not values."""


def rule(action: str, pattern: str, line: int = 1) -> Rule:
    return Rule(action=action, pattern=pattern, layer="user", file="kairox.toml", line=line)


ALLOW_SELECT = rule("allow", "mcp__h__t0(SELECT *)")
ALLOW_SQL = rule("allow", "mcp__h__t0(.sql=SELECT *)")
ALLOW_SQL_LIMIT = rule("allow", "mcp__h__t0(.sql=SELECT *, .limit=*)", 2)
ALLOW_SERVER = rule("allow", "mcp__h__*")
MODE = (
    f"mcp tool {TOOL} from h may change things: it is not annotated "
    "read-only, so it counts as a write with effects outside Kairox's sandbox"
)


def deep(levels: int, inner: object) -> object:
    for index in range(levels):
        inner = {f"level{index}": inner}
    return inner


async def _call(
    tmp_path: Path, arguments: JsonObject, *rules: Rule, approval: ApprovalPolicy = ApprovalPolicy.ON_REQUEST
) -> tuple[ToolResult, list[ApprovalRequest], list[str]]:
    """One call of the server's ``t0`` through a real registry: its result, what the person was asked and the
    marker files the server wrote."""
    ws = workspace(tmp_path)
    markers = tmp_path / "markers"
    markers.mkdir()
    config = McpServerConfig(
        command=sys.executable,
        args=[str(SERVER), "--tools", "1", "--marker-dir", str(markers), "--properties", ",".join(PARAMETERS)],
    )
    approver = ScriptedApprover()
    registry = ToolRegistry(settings(ws, *rules, approval=approval), approver=approver)
    async with McpServerManager({"h": config}, workspace=ws, home=tmp_path / "home") as manager:
        await registry.add_provider(McpToolAdapter(manager.clients["h"]))
        result = await registry.call(ToolCall(name=TOOL, arguments=arguments))
    return result, approver.requests, sorted(p.name for p in markers.iterdir())


def _ids(cases: Sequence[tuple[object, ...]]) -> list[str]:
    return [str(case[0]) for case in cases]


class TestAnUnnamedAllowRuleOnValues:
    # (case, a call where one value matches `SELECT *` and another carries what the rule never looked at, why)
    SMUGGLED = (
        ("other-argument", {"sql": DROP, "comment": "SELECT 1"}, "argument 'sql' holds a value that does not match"),
        (
            "other-argument-first",
            {"comment": "SELECT 1", "sql": DROP},
            "argument 'sql' holds a value that does not match",
        ),
        (
            "nested-in-another",
            {"sql": "SELECT 1", "then": {"sql": DROP}},
            "argument 'then' holds a key that does not match",
        ),
        (
            "in-a-list",
            {"sql": "SELECT 1", "more": ["SELECT 2", DROP]},
            "argument 'more' holds a value that does not match",
        ),
        ("deep", {"sql": "SELECT 1", "a": deep(4, {"sql": DROP})}, "argument 'a' holds a key that does not match"),
        (
            "a-flag",
            {"sql": "SELECT * FROM users", "drop_after": True},
            "argument 'drop_after' holds a value that does not match",
        ),
        ("a-number", {"sql": "SELECT 1", "repeat": 100000}, "argument 'repeat' holds a value that does not match"),
        ("a-null", {"sql": "SELECT 1", "where": None}, "argument 'where' holds a value that does not match"),
    )
    HARMLESS = (
        ("one-argument", {"sql": "SELECT 1"}),
        ("every-value-matches", {"sql": "SELECT 1", "comment": "SELECT 2"}),
        ("a-list-that-all-matches", {"statements": ["SELECT 1", "SELECT 2"]}),
        ("nested-that-all-matches", {"batch": [["SELECT 1"], ["SELECT 2", "SELECT 3"]]}),
    )

    @pytest.mark.parametrize(("case", "arguments", "why"), SMUGGLED, ids=_ids(SMUGGLED))
    async def test_a_call_with_a_value_the_rule_does_not_match_is_asked_about(
        self, tmp_path: Path, case: str, arguments: JsonObject, why: str
    ) -> None:
        result, asked, ran = await _call(tmp_path, arguments, ALLOW_SELECT)

        assert len(asked) == 1 and asked[0].source == "mode"
        reason = asked[0].reason
        assert reason.startswith(
            f"{MODE}; allow rule 'mcp__h__t0(SELECT *)' (kairox.toml:1) vouches "
            f"only for calls whose every value matches 'SELECT *', and {why}"
        )
        assert "; name the arguments it vouches for, e.g. mcp__h__t0(." in reason
        assert result.is_error and ran == []

    @pytest.mark.parametrize(("case", "arguments", "why"), SMUGGLED, ids=_ids(SMUGGLED))
    async def test_a_call_with_a_value_the_rule_does_not_match_is_denied_when_nobody_can_be_asked(
        self, tmp_path: Path, case: str, arguments: JsonObject, why: str
    ) -> None:
        result, asked, ran = await _call(tmp_path, arguments, ALLOW_SELECT, approval=ApprovalPolicy.NEVER)

        assert asked == []
        assert result.meta["decision"]["decision"] == "deny" and why in result.meta["decision"]["reason"]
        assert result.is_error and ran == []

    async def test_the_question_says_how_to_name_the_argument(self, tmp_path: Path) -> None:
        _, asked, _ = await _call(tmp_path, {"sql": DROP, "comment": "SELECT 1"}, ALLOW_SELECT)

        assert asked[0].reason.endswith("e.g. mcp__h__t0(.sql=GLOB, .comment=SELECT *)")

    @pytest.mark.parametrize(("case", "arguments"), HARMLESS, ids=_ids(HARMLESS))
    async def test_a_call_whose_every_value_matches_runs(
        self, tmp_path: Path, case: str, arguments: JsonObject
    ) -> None:
        result, asked, ran = await _call(tmp_path, arguments, ALLOW_SELECT)

        assert asked == []  # the mode asks about this tool: the allow rule vouched
        assert (result.is_error, result.text_content(), ran) == (False, "ok t0", ["t0-1"])


class TestANamedAllowRule:
    # (case, a call the rules `.sql=SELECT *` and `.sql=SELECT *, .limit=*` must not vouch for, why the first does not)
    NOT_VOUCHED = (
        ("another-argument", {"sql": "SELECT 1", "comment": DROP}, "argument 'comment' is not named by it"),
        ("another-object", {"sql": "SELECT 1", "options": {"then": DROP}}, "argument 'options' is not named by it"),
        ("a-flag", {"sql": "SELECT * FROM users", "drop_after": True}, "argument 'drop_after' is not named by it"),
        ("the-value-in-another", {"sql": DROP, "comment": "SELECT 1"}, "argument 'comment' is not named by it"),
        ("only-another", {"query": "SELECT 1"}, "argument 'query' is not named by it"),
        ("not-matching", {"sql": DROP}, "argument 'sql' does not match 'SELECT *' all through"),
        (
            "an-object-under-the-name",
            {"sql": {"text": "SELECT 1", "then": DROP}},
            "argument 'sql' does not match 'SELECT *' all through",
        ),
        ("a-list-under-the-name", {"sql": ["SELECT 1", DROP]}, "argument 'sql' does not match 'SELECT *' all through"),
        (
            "a-nested-list-under-the-name",
            {"sql": [["SELECT 1"]]},
            "argument 'sql' does not match 'SELECT *' all through",
        ),
        ("an-empty-list", {"sql": []}, "argument 'sql' does not match 'SELECT *' all through"),
        ("a-path", {"sql": "SELECT 1", "file": "src/a.sql"}, "argument 'file' is not named by it"),
        ("a-file-uri", {"sql": "file:///etc/passwd"}, "argument 'sql' does not match 'SELECT *' all through"),
    )
    VOUCHED = (
        ("the-named-argument", {"sql": "SELECT 1"}, ALLOW_SQL),
        ("both-named-arguments", {"sql": "SELECT 1", "limit": 5}, ALLOW_SQL_LIMIT),
        ("a-list-that-all-matches", {"sql": ["SELECT 1", "SELECT 2"]}, ALLOW_SQL),
    )

    @pytest.mark.parametrize(("case", "arguments", "why"), NOT_VOUCHED, ids=_ids(NOT_VOUCHED))
    async def test_a_call_with_anything_the_rule_does_not_name_is_asked_about(
        self, tmp_path: Path, case: str, arguments: JsonObject, why: str
    ) -> None:
        result, asked, ran = await _call(tmp_path, arguments, ALLOW_SQL, ALLOW_SQL_LIMIT)

        assert len(asked) == 1 and asked[0].source == "mode"
        assert asked[0].reason.startswith(
            f"{MODE}; allow rule 'mcp__h__t0(.sql=SELECT *)' (kairox.toml:1) does not vouch for it: {why}"
        )
        assert result.is_error and ran == []

    @pytest.mark.parametrize(("case", "arguments", "why"), NOT_VOUCHED, ids=_ids(NOT_VOUCHED))
    async def test_a_call_with_anything_the_rule_does_not_name_is_denied_when_nobody_can_be_asked(
        self, tmp_path: Path, case: str, arguments: JsonObject, why: str
    ) -> None:
        result, asked, ran = await _call(tmp_path, arguments, ALLOW_SQL, ALLOW_SQL_LIMIT, approval=ApprovalPolicy.NEVER)

        assert asked == [] and result.meta["decision"]["decision"] == "deny"
        assert result.is_error and ran == []

    @pytest.mark.parametrize(("case", "arguments", "allow"), VOUCHED, ids=_ids(VOUCHED))  # type: ignore[arg-type]
    async def test_a_call_of_exactly_the_named_arguments_runs(
        self, tmp_path: Path, case: str, arguments: JsonObject, allow: Rule
    ) -> None:
        result, asked, ran = await _call(tmp_path, arguments, allow)

        assert asked == []  # the mode asks about this tool: the allow rule vouched
        assert (result.is_error, result.text_content(), ran) == (False, "ok t0", ["t0-1"])


class TestANamedAllowRuleOnAPathArgument:
    """A text the policy reads as a path (by the argument's name, or a ``file:`` URI) matches a named allow rule as a
    path, ``..`` folded: as text, ``src/*`` would also match ``src/../../etc/passwd``."""

    ALLOW_PATH = rule("allow", "mcp__h__t0(.path=src/**)")
    ALLOW_TARGET = rule("allow", "mcp__h__t0(.target=staging, .dry_run=*)", 2)
    OUTSIDE = (
        ("dot-dot", {"path": "src/../../etc/passwd"}),
        ("dot-dot-inside-the-workspace", {"path": "src/../secrets/key"}),
        ("absolute", {"path": "/etc/passwd"}),
        ("a-list-with-one-outside", {"path": ["src/a.py", "src/../notes.md"]}),
        ("file-uri", {"path": "file:///etc/passwd"}),
        ("another-word-under-a-path-name", {"target": "production", "dry_run": False}),
    )
    INSIDE = (
        ("a-file", {"path": "src/a.py"}),
        ("a-list", {"path": ["src/a.py", "src/b/c.py"]}),
        ("a-word-under-a-path-name", {"target": "staging", "dry_run": True}),
    )

    @pytest.mark.parametrize(("case", "arguments"), OUTSIDE, ids=_ids(OUTSIDE))
    async def test_a_path_outside_the_glob_is_asked_about(
        self, tmp_path: Path, case: str, arguments: JsonObject
    ) -> None:
        result, asked, ran = await _call(tmp_path, arguments, self.ALLOW_PATH, self.ALLOW_TARGET)

        assert [r.source for r in asked] == ["mode"] and "does not match" in asked[0].reason
        assert result.is_error and ran == []

    @pytest.mark.parametrize(("case", "arguments"), INSIDE, ids=_ids(INSIDE))
    async def test_a_path_inside_the_glob_runs(self, tmp_path: Path, case: str, arguments: JsonObject) -> None:
        result, asked, ran = await _call(tmp_path, arguments, self.ALLOW_PATH, self.ALLOW_TARGET)

        assert asked == []
        assert (result.is_error, result.text_content(), ran) == (False, "ok t0", ["t0-1"])


class TestNamedDenyAndAskRules:
    DENY_SQL = rule("deny", "mcp__h__t0(.sql=*DROP TABLE*)", 2)
    DENY_FORCE = rule("deny", "mcp__h__t0(.force=true)", 3)
    DENY_PROD_DELETE = rule("deny", "mcp__h__t0(.sql=DELETE *, .database=prod)", 4)
    # (case, a call whose named argument holds what a deny rule names somewhere below it, the rule)
    DENIED = (
        ("top-level", {"sql": DROP}, DENY_SQL),
        ("in-an-object", {"sql": {"text": DROP, "limit": 5}}, DENY_SQL),
        ("in-a-list", {"sql": ["SELECT 1", DROP]}, DENY_SQL),
        ("twenty-deep", {"sql": deep(20, [DROP])}, DENY_SQL),
        ("after-a-thousand-items", {"sql": [*(f"SELECT {i}" for i in range(1000)), DROP]}, DENY_SQL),
        ("a-flag", {"force": True}, DENY_FORCE),
        ("a-flag-in-a-list", {"force": [False, True]}, DENY_FORCE),
        ("both-conditions", {"sql": "DELETE FROM users", "database": "prod"}, DENY_PROD_DELETE),
    )
    RUNS = (
        ("another-argument", {"sql": "SELECT 1", "comment": DROP}),
        ("a-flag-off", {"force": False}),
        ("the-flag-under-another-name", {"options": {"force": True}}),
        ("one-condition-of-two", {"sql": "DELETE FROM users", "database": "dev"}),
    )

    @pytest.mark.parametrize(("case", "arguments", "deny"), DENIED, ids=_ids(DENIED))  # type: ignore[arg-type]
    async def test_a_named_deny_rule_sees_every_value_below_its_argument(
        self, tmp_path: Path, case: str, arguments: JsonObject, deny: Rule
    ) -> None:
        result, asked, ran = await _call(
            tmp_path, arguments, ALLOW_SERVER, self.DENY_SQL, self.DENY_FORCE, self.DENY_PROD_DELETE
        )

        assert asked == []
        assert result.meta["decision"]["reason"] == f"denied by deny rule {deny.pattern!r} (kairox.toml:{deny.line})"
        assert result.is_error and ran == []

    @pytest.mark.parametrize(("case", "arguments", "deny"), DENIED, ids=_ids(DENIED))  # type: ignore[arg-type]
    async def test_a_named_ask_rule_sees_every_value_below_its_argument(
        self, tmp_path: Path, case: str, arguments: JsonObject, deny: Rule
    ) -> None:
        ask = Rule(action="ask", pattern=deny.pattern, layer="user", file="kairox.toml", line=deny.line)
        result, asked, ran = await _call(tmp_path, arguments, ALLOW_SERVER, ask)

        # asked once, naming the rule (past the path scan's depth the reason says the call could not all be read)
        assert (
            len(asked) == 1
            and asked[0].source == "rule"
            and f"ask rule {deny.pattern!r} (kairox.toml:{deny.line})" in asked[0].reason
        )
        if case != "twenty-deep":
            assert asked[0].reason == f"ask rule {deny.pattern!r} (kairox.toml:{deny.line}) asks for approval"
        assert result.is_error and ran == []

    @pytest.mark.parametrize(("case", "arguments"), RUNS, ids=_ids(RUNS))
    async def test_a_named_deny_rule_holds_for_its_argument_only(
        self, tmp_path: Path, case: str, arguments: JsonObject
    ) -> None:
        result, asked, ran = await _call(
            tmp_path, arguments, ALLOW_SERVER, self.DENY_SQL, self.DENY_FORCE, self.DENY_PROD_DELETE
        )

        assert asked == []
        assert (result.is_error, result.text_content(), ran) == (False, "ok t0", ["t0-1"])
