"""Tool schemas the compiler understands are accepted without ``jsonschema``, and only when ``jsonschema`` would
accept them too: a schema with a value its draft's meta-schema refuses is still refused, with ``jsonschema``'s
explanation. Checked on generated schemas (well formed and not) against ``jsonschema`` itself, and on a fresh
process, which builds the registry's validators without importing ``jsonschema`` and imports it to explain the
first failing call."""

import json
import subprocess
import sys
import warnings
from typing import Any

from hypothesis import HealthCheck, given
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st
from jsonschema import exceptions, validators

from kairox.registry._validation import _KNOWN_SCHEMAS, schema_validator

SIMPLE = ["string", "integer", "number", "boolean", "null", "object", "array"]
ANY_JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-2, 5) | st.sampled_from([0.5, 2.0, "", "a", "b", "ab"]),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from(["a", "b", "c"]), inner, max_size=3),
    max_leaves=6,
)
COUNT = st.sampled_from([0, 1, 3, -1, 2.0, 2.5, True, "3", None])
NUMBER = st.sampled_from([0, -1, 2.5, 3, True, "1", None])
TEXT = st.sampled_from(["text", "", 5, None, ["x"]])
FLAG = st.sampled_from([True, False, "yes", 0])


def keywords(schema: Any) -> dict[str, Any]:
    """Values for each compiled keyword (and a few others), well formed or not; ``schema``: nested schemas."""
    names = st.sampled_from(["a", "b", "c"])
    return {
        "type": st.sampled_from([*SIMPLE, "strin", 5]) | st.lists(st.sampled_from([*SIMPLE, "x"]), max_size=3),
        "enum": st.lists(st.sampled_from(["a", "b", "c", 1, None]), max_size=3),
        "minLength": COUNT,
        "maxLength": COUNT,
        "minItems": COUNT,
        "maxItems": COUNT,
        "minimum": NUMBER,
        "maximum": NUMBER,
        "exclusiveMinimum": NUMBER,
        "exclusiveMaximum": NUMBER,
        "title": TEXT,
        "description": TEXT,
        "$comment": TEXT,
        "format": TEXT,
        "default": ANY_JSON,
        "examples": st.sampled_from([[], [1, "a"], "x", None]),
        "deprecated": FLAG,
        "readOnly": FLAG,
        "writeOnly": FLAG,
        "required": st.lists(st.sampled_from(["a", "b", 1]), max_size=3),
        "properties": st.dictionaries(names, schema, max_size=2) | st.sampled_from([[], "x"]),
        "additionalProperties": schema | st.sampled_from(["x", 1]),
        "items": schema | st.lists(schema, max_size=1),
        "pattern": st.sampled_from(["^a", "("]),
        "minProperties": COUNT,
    }


def subschemas() -> Any:
    leaf = st.booleans() | st.fixed_dictionaries({}, optional=keywords(st.booleans()))
    return st.recursive(leaf, lambda inner: st.fixed_dictionaries({}, optional=keywords(inner)), max_leaves=4)


ROOTS = st.fixed_dictionaries(
    {"type": st.just("object")},
    optional={
        **{k: v for k, v in keywords(subschemas()).items() if k != "type"},
        "$schema": st.sampled_from([*_KNOWN_SCHEMAS, "http://json-schema.org/draft-04/schema#", "urn:other"]),
    },
)


def jsonschema_verdict(schema: dict[str, Any]) -> tuple[Any, str | None]:
    """What ``jsonschema`` alone says: the validator class, or why the schema is refused."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # an unknown $schema warns and means the default draft
        cls = validators.validator_for(schema, default=validators.Draft202012Validator)
    try:
        cls.check_schema(schema)
    except exceptions.SchemaError as exc:
        return cls, exc.message
    return cls, None


def test_every_known_schema_uri_means_what_jsonschema_says() -> None:
    for uri, name in _KNOWN_SCHEMAS.items():
        assert validators.validator_for({"$schema": uri}).__name__ == name


@hypothesis_settings(max_examples=1500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(schema=ROOTS, values=st.lists(ANY_JSON, min_size=1, max_size=4))
def test_a_schema_is_accepted_and_checked_exactly_as_jsonschema_does(schema: dict[str, Any], values: list[Any]) -> None:
    schema = json.loads(json.dumps(schema, sort_keys=True))  # as the validators are cached: by content, keys sorted
    cls, refused = jsonschema_verdict(schema)
    validator, unsafe = schema_validator(schema)
    if refused is not None:
        assert validator is None and unsafe == f"its input schema is not valid JSON Schema: {refused}"
        return
    assert unsafe is None and validator is not None
    reference = cls(schema)
    for value in [{}, *values, *({"a": v} for v in values)]:
        assert validator.check(value) == reference.is_valid(value), (schema, value)
        error = validator.error(value)
        assert (error is None) == reference.is_valid(value)
        if error is not None:
            assert error.message == exceptions.best_match(reference.iter_errors(value)).message


def test_a_schema_that_jsonschema_cannot_read_leaves_the_tool_out_with_a_reason() -> None:
    assert schema_validator({"type": "object", "$schema": ["x"]}) == (
        None,
        "its input schema is not valid JSON Schema: $schema is list, not a URI",
    )


PROBE = """
import asyncio, json, sys, tempfile
from pathlib import Path
sys.path.insert(0, sys.argv[1])
from tests.registry._support import DemoProvider, settings, spec
from kairox.policy import NonInteractiveApprover
from kairox.registry import ToolRegistry
from kairox.tools import ToolCall

async def main():
    ws = Path(tempfile.mkdtemp())
    schema = {"type": "object", "properties": {"message": {"type": "string", "description": "what to say"}}, "required": ["message"]}
    registry = ToolRegistry(settings(ws), approver=NonInteractiveApprover())
    await registry.add_provider(DemoProvider(specs=[spec("echo", schema=schema)]))
    ok = await registry.call(ToolCall(name="echo", arguments={"message": "hi"}))
    before = "jsonschema" in sys.modules
    bad = await registry.call(ToolCall(name="echo", arguments={"message": 5}))
    print(json.dumps([ok.is_error, before, bad.text_content(), "jsonschema" in sys.modules]))

asyncio.run(main())
"""  # noqa: E501


def test_a_registry_builds_its_validators_without_jsonschema_and_explains_a_failure_with_it(tmp_path: Any) -> None:
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    out = subprocess.run(
        [sys.executable, "-c", PROBE, str(root)], capture_output=True, text=True, timeout=60, check=True
    )
    ok_is_error, imported_before, explained, imported_after = json.loads(out.stdout)
    assert (ok_is_error, imported_before, imported_after) == (False, False, True)
    assert explained == "invalid arguments for echo: arguments['message']: 5 is not of type 'string'"
