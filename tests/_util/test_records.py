"""``quick_init`` builds the same frozen records as the dataclass's own ``__init__``."""

import dataclasses
from pathlib import Path
from typing import Any

import pytest

from kairox._util import quick_init
from kairox.policy import Decision, DecisionSource
from kairox.registry import ToolCallDecided, ToolCallFinished, ToolCallRequested
from kairox.tools import CallContext, SandboxSettings, TextContent, ToolCall, ToolResult


@quick_init
@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class Record:
    name: str
    count: int = 3
    tags: list[str] = dataclasses.field(default_factory=list)


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class Plain:
    name: str
    count: int = 3
    tags: list[str] = dataclasses.field(default_factory=list)


def test_a_quick_record_equals_the_dataclass_built_one_field_by_field() -> None:
    quick, plain = Record(name="a"), Plain(name="a")
    assert [getattr(quick, f.name) for f in dataclasses.fields(quick)] == ["a", 3, []]
    assert [getattr(plain, f.name) for f in dataclasses.fields(plain)] == ["a", 3, []]
    assert Record(name="a", count=5, tags=["x"]) == Record(name="a", count=5, tags=["x"])
    assert repr(Record(name="b", tags=["y"])).endswith("Record(name='b', count=3, tags=['y'])")
    assert Record(name="a").tags is not Record(name="a").tags  # a new list per record, as default_factory says
    assert dataclasses.replace(Record(name="a"), count=9) == Record(name="a", count=9)


def test_a_quick_record_stays_frozen_and_keyword_only() -> None:
    record = Record(name="a")
    with pytest.raises(dataclasses.FrozenInstanceError):
        record.name = "b"  # type: ignore[misc]
    args: Any = ("a",)
    with pytest.raises(TypeError):
        Record(*args)
    with pytest.raises(TypeError):
        Record()  # type: ignore[call-arg]
    assert hash(TextContent(text="x")) == hash(TextContent(text="x"))


def test_records_that_need_the_dataclass_init_are_refused() -> None:
    @dataclasses.dataclass(frozen=True, slots=True)
    class Positional:
        name: str

    @dataclasses.dataclass(kw_only=True, slots=True)
    class Mutable:
        name: str

    for cls in (Positional, Mutable):
        with pytest.raises(TypeError):
            quick_init(cls)


def test_the_gates_records_are_built_quick_and_whole() -> None:
    decision = Decision.allow("allowed by rule", source=DecisionSource.RULE)
    assert (decision.verdict, decision.reason, decision.rule, decision.suggested_rule) == (
        "allow",
        "allowed by rule",
        None,
        None,
    )
    assert ToolCall(name="t").arguments == {} and ToolCall(name="t").call_id == ""
    assert ToolResult.text("hi") == ToolResult(
        content=(TextContent(text="hi"),), structured=None, is_error=False, meta={}
    )
    context = CallContext(call_id="c", workspace=Path("/"))
    assert (context.sandbox, context.progress, context.unreadable) == (SandboxSettings(), None, None)
    assert ToolCallRequested(call_id="c", tool="t").arguments == {}
    finished = ToolCallFinished(call_id="c", tool="t", duration_ms=1.0, size_chars=2, is_error=False)
    assert (finished.error, finished.spilled_to) == (None, None)
    assert ToolCallDecided(call_id="c", tool="t", decision="allow", reason="r", source="rule").line is None
