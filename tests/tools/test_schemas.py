"""One name for one thing across the tools the model sees: a file is ``path``; a breakpoint has one shape."""

import json
from typing import Any

from kairox.dap._specs import LAUNCH_PERMISSION, SESSION_PERMISSION, dap_tool_specs
from kairox.lsp._specs import LSP_PERMISSION, lsp_tool_specs
from kairox.tools import BUILTIN_SPECS, ToolSpec

ALL_SPECS: list[ToolSpec] = [*BUILTIN_SPECS, *lsp_tool_specs(), *dap_tool_specs()]


def _property_names(schema: Any) -> set[str]:
    """Every property name anywhere in a JSON schema, nested objects and array items included."""
    names: set[str] = set()
    if isinstance(schema, dict):
        properties = schema.get("properties")
        if isinstance(properties, dict):
            names |= set(properties)
        for value in schema.values():
            names |= _property_names(value)
    elif isinstance(schema, list):
        for value in schema:
            names |= _property_names(value)
    return names


def test_no_tool_takes_a_file_argument() -> None:
    takes_file = sorted(s.name for s in ALL_SPECS if {"file", "files", "lines"} & _property_names(s.input_schema))
    assert takes_file == []
    assert {s.name for s in ALL_SPECS if "path" in s.input_schema["properties"]} >= {
        "fs.read", "lsp.definition", "lsp.document_symbols", "lsp.diagnostics", "lsp.rename",
    }  # fmt: skip


def test_breakpoints_have_one_shape_wherever_they_are_taken() -> None:
    shapes = {
        s.name: s.input_schema["properties"]["breakpoints"]["items"]
        for s in ALL_SPECS
        if "breakpoints" in s.input_schema["properties"]
    }
    assert sorted(shapes) == ["dap.attach", "dap.launch", "dap.set_breakpoints"]
    assert len({json.dumps(item, sort_keys=True) for item in shapes.values()}) == 1
    item = shapes["dap.launch"]
    assert (sorted(item["properties"]), item["required"]) == (["condition", "line", "path"], ["path", "line"])


def test_the_gate_reads_the_renamed_path_arguments() -> None:
    assert LSP_PERMISSION.path_args == ("path",)
    assert (LAUNCH_PERMISSION.path_args, SESSION_PERMISSION.path_args) == (("program", "cwd"), ("clear",))
    for spec in [*lsp_tool_specs(), *dap_tool_specs()]:
        declared = set(spec.input_schema["properties"])
        assert set(spec.permission.path_args) & declared or not {"path", "program", "cwd", "clear"} & declared
