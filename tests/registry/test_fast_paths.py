"""The gate's fast paths decide exactly as the slow ones: compiled argument checks, argument-free decisions kept
per tool, and hook points skipped only when nothing would hear them."""

from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st
from jsonschema import validators
from tests.registry._support import DemoProvider, settings, spec

from kairox._util._json import JsonObject
from kairox.events import FanoutSink, RecordingSink
from kairox.hooks import HookEvent, HookRegistry
from kairox.hooks._model import HookSpec
from kairox.policy import NonInteractiveApprover, Rule, Verdict
from kairox.registry import ToolCallDecided, ToolCallRequested, ToolRegistry
from kairox.registry._validation import compile_check, schema_validator
from kairox.tools import ToolCall, ToolResult, ToolSource

SCHEMAS: list[JsonObject] = [
    {"type": "object", "properties": {"message": {"type": "string"}}, "required": ["message"]},
    {
        "type": "object",
        "properties": {"n": {"type": "integer", "minimum": 0, "exclusiveMaximum": 10}},
        "additionalProperties": False,
    },
    {"type": "object", "properties": {"x": {"type": ["number", "null"], "maximum": 2.5}, "b": {"type": "boolean"}}},
    {
        "type": "object",
        "properties": {
            "mode": {"type": "string", "enum": ["a", "b"]},
            "s": {"type": "string", "minLength": 1, "maxLength": 3},
        },
    },
    {
        "type": "object",
        "properties": {"tags": {"type": "array", "items": {"type": "string"}, "minItems": 1, "maxItems": 2}},
    },
    {
        "type": "object",
        "properties": {
            "o": {
                "type": "object",
                "properties": {"k": {"type": "integer"}},
                "required": ["k"],
                "additionalProperties": {"type": "string"},
            }
        },
    },
    {"type": "object", "properties": {"never": False, "any": True}, "additionalProperties": False},
    {
        "$schema": "http://json-schema.org/draft-07/schema#",
        "type": "object",
        "properties": {"i": {"type": "integer", "description": "d", "format": "uri"}},
    },
]

JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-3, 12)
    | st.floats(-3, 12, allow_nan=False)
    | st.sampled_from(["", "a", "b", "abcd", "xyz"]),
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(
            st.sampled_from(["message", "n", "x", "b", "mode", "s", "tags", "o", "k", "z", "never", "any", "i"]),
            inner,
            max_size=4,
        )
    ),
    max_leaves=8,
)


def test_every_schema_of_the_table_is_compiled() -> None:
    for schema in SCHEMAS:
        assert (
            compile_check(schema, validators.validator_for(schema, default=validators.Draft202012Validator)) is not None
        ), schema


@hypothesis_settings(max_examples=400, deadline=None)
@given(index=st.integers(0, len(SCHEMAS) - 1), value=JSON)
def test_the_compiled_check_agrees_with_jsonschema(index: int, value: Any) -> None:
    schema = SCHEMAS[index]
    cls = validators.validator_for(schema, default=validators.Draft202012Validator)
    check = compile_check(schema, cls)
    assert check is not None
    assert check(value) == cls(schema).is_valid(value)


@pytest.mark.parametrize(
    "schema",
    [
        {"type": "object", "properties": {"n": {"enum": [1, 2]}}},
        {"type": "object", "patternProperties": {"^x": {"type": "string"}}},
        {"type": "object", "properties": {"a": {"$ref": "#/$defs/s"}}, "$defs": {"s": {"type": "string"}}},
        {
            "$schema": "http://json-schema.org/draft-04/schema#",
            "type": "object",
            "properties": {"i": {"type": "integer"}},
        },
    ],
)
def test_schemas_beyond_the_compiled_keywords_are_left_to_jsonschema(schema: JsonObject) -> None:
    validator, unsafe = schema_validator(schema)
    assert unsafe is None and validator is not None
    assert not validator.compiled


@pytest.mark.anyio
async def test_arguments_failing_a_schema_left_to_jsonschema_are_explained(tmp_path: Path) -> None:
    for name in ("ws", "home", "tmp"):
        (tmp_path / name).mkdir()
    schema: JsonObject = {
        "type": "object",
        "properties": {"n": {"enum": [1, 2]}},
        "patternProperties": {"^x": {"type": "string"}},
    }
    provider = DemoProvider(specs=[spec("echo", schema=schema)])
    registry = ToolRegistry(settings(tmp_path / "ws"), approver=NonInteractiveApprover())
    await registry.add_provider(provider)
    wrong_enum = await registry.call(ToolCall(name="echo", arguments={"n": 3}))
    wrong_pattern = await registry.call(ToolCall(name="echo", arguments={"xa": 1}))
    assert wrong_enum == ToolResult.error("invalid arguments for echo: arguments['n']: 3 is not one of [1, 2]")
    assert wrong_pattern == ToolResult.error("invalid arguments for echo: arguments['xa']: 1 is not of type 'string'")
    assert (await registry.call(ToolCall(name="echo", arguments={"n": 2, "xa": "ok"}))).is_error is False
    assert provider.calls == [("echo", {"n": 2, "xa": "ok"})]


@pytest.mark.anyio
async def test_a_rule_on_argument_values_is_checked_on_every_call(tmp_path: Path) -> None:
    for name in ("ws", "home", "tmp"):
        (tmp_path / name).mkdir()
    rules = [Rule(action="deny", pattern="mcp__s__echo(*secret*)"), Rule(action="allow", pattern="mcp__s__*")]
    registry = ToolRegistry(settings(tmp_path / "ws", *rules), approver=NonInteractiveApprover())
    await registry.add_provider(
        DemoProvider(origin="s", specs=[spec("mcp__s__echo", source=ToolSource.MCP, origin="s")])
    )
    verdicts = []
    for message in ("hello", "my secret", "hello"):
        verdicts.append(registry.check("mcp__s__echo", {"message": message}).verdict)
    assert verdicts == [Verdict.ALLOW, Verdict.DENY, Verdict.ALLOW]


@pytest.mark.anyio
async def test_a_path_named_after_an_argument_free_decision_is_still_held_to_the_protected_paths(
    tmp_path: Path,
) -> None:
    for name in ("ws", "home", "tmp"):
        (tmp_path / name).mkdir()
    schema: JsonObject = {"type": "object", "properties": {"message": {"type": "string"}, "path": {"type": "string"}}}
    registry = ToolRegistry(
        settings(tmp_path / "ws", Rule(action="allow", pattern="mcp__s__*")), approver=NonInteractiveApprover()
    )
    await registry.add_provider(
        DemoProvider(origin="s", specs=[spec("mcp__s__echo", source=ToolSource.MCP, origin="s", schema=schema)])
    )
    first = registry.check("mcp__s__echo", {"message": "hi"})
    protected = registry.check("mcp__s__echo", {"path": str(tmp_path / "ws" / ".git" / "config")})
    again = registry.check("mcp__s__echo", {"message": "hi"})
    assert (first.verdict, protected.verdict, again) == (Verdict.ALLOW, Verdict.ASK, first)


@pytest.mark.anyio
async def test_events_start_with_the_next_call_once_a_sink_is_added(tmp_path: Path) -> None:
    for name in ("ws", "home", "tmp"):
        (tmp_path / name).mkdir()
    sink = FanoutSink()
    registry = ToolRegistry(settings(tmp_path / "ws"), approver=NonInteractiveApprover(), events=sink)
    await registry.add_provider(DemoProvider())
    assert await registry.call(
        ToolCall(name="echo", arguments={"message": "unheard"}, call_id="c1")
    ) == ToolResult.text("echo: unheard")
    recording = RecordingSink()
    sink.add(recording)
    await registry.call(ToolCall(name="echo", arguments={"message": "heard"}, call_id="c2"))
    assert [type(e).__name__ for e in recording.events] == ["ToolCallRequested", "ToolCallDecided", "ToolCallFinished"]
    assert recording.events[0] == ToolCallRequested(call_id="c2", tool="echo", arguments={"message": "heard"})
    assert isinstance(recording.events[1], ToolCallDecided) and recording.events[1].call_id == "c2"


def test_hook_registry_listens_only_at_the_points_and_tools_its_hooks_match(tmp_path: Path) -> None:
    hooks = HookRegistry(
        [HookSpec(event=HookEvent.PRE_TOOL_USE, command="true", matcher="fs.*", name="config:pre_tool_use.1")],
        workspace=tmp_path,
    )
    assert [
        hooks.listens_pre_tool_use("fs.read"),
        hooks.listens_pre_tool_use("shell.exec"),
        hooks.listens_post_tool_use("fs.read"),
    ] == [True, False, False]
    assert not HookRegistry(workspace=tmp_path).listens_pre_tool_use("fs.read")
