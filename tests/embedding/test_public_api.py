"""The top-level API: a short list of names, loaded lazily, that are the same objects as in their packages."""

import json
import pickle
import subprocess
import sys
import typing

import pytest

import kairox
from kairox.agent import ResponseEnd, Usage
from kairox.tools import ToolCall

PUBLIC = {
    "AgentSession",
    "ApprovalAnswer",
    "ApprovalRequest",
    "Approver",
    "Event",
    "EventSink",
    "ExtensionContext",
    "KairoxError",
    "ModelClient",
    "ModelProvider",
    "ModelRequest",
    "ResponseEnd",
    "TextDelta",
    "ToolCall",
    "ToolCallDecided",
    "ToolCallPart",
    "ToolRegistry",
    "ToolResult",
    "Usage",
    "__version__",
    "build_extension_context",
    "open_session",
    "open_workspace",
}


def test_the_public_names_are_the_promised_ones() -> None:
    assert set(kairox.__all__) == PUBLIC
    assert set(dir(kairox)) >= PUBLIC


def test_import_kairox_loads_none_of_its_packages() -> None:
    code = (
        "import sys, json, kairox; print(json.dumps(sorted(m for m "
        "in sys.modules if m.startswith('kairox') or m == 'typing')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60).stdout
    assert json.loads(out) == ["kairox", "kairox._version"]


def test_reading_a_name_loads_its_package_only() -> None:
    code = (
        "import sys, json, kairox; kairox.ToolCall; print(json.dumps(sorted(m "
        "for m in sys.modules if m.startswith('kairox.'))))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60).stdout
    loaded = json.loads(out)
    assert "kairox.tools" in loaded
    assert not {"kairox.agent", "kairox.runtime", "kairox.registry", "kairox.mcp"} & set(loaded)


@pytest.mark.parametrize("name", sorted(PUBLIC - {"__version__"}))
def test_each_name_is_its_packages_object_and_pickles_and_resolves_its_hints(name: str) -> None:
    value = getattr(kairox, name)
    import importlib

    package = next(p for p, names in kairox._EXPORTS.items() if name in names)
    assert getattr(importlib.import_module(package), name) is value
    if isinstance(value, type):
        assert pickle.loads(pickle.dumps(value)) is value
        if value.__module__ == "kairox":  # shown as kairox.Name: its annotations must resolve from here too
            typing.get_type_hints(value)
            assert f"{value.__module__}.{value.__qualname__}" == f"kairox.{name}"


def test_tracebacks_and_reprs_name_the_public_path() -> None:
    assert repr(kairox.ToolCall) == "<class 'kairox.ToolCall'>"
    assert repr(kairox.AgentSession) == "<class 'kairox.AgentSession'>"
    assert "kairox.KairoxError: no" in "".join(__import__("traceback").format_exception_only(kairox.KairoxError("no")))
    # a class whose annotations are strings keeps its module, so its hints still resolve
    assert kairox.ExtensionContext.__module__ == "kairox.runtime._context"


def test_instances_of_public_records_pickle_by_their_public_name() -> None:
    end = kairox.ResponseEnd(usage=kairox.Usage(input_tokens=3, output_tokens=4), stop_reason="stop")
    data = pickle.dumps(end)
    assert b"kairox" in data and b"_client" not in data
    assert pickle.loads(data) == end == ResponseEnd(usage=Usage(input_tokens=3, output_tokens=4), stop_reason="stop")
    call = kairox.ToolCall(name="fs.read", arguments={"path": "a.txt"})
    assert pickle.loads(pickle.dumps(call)) == call == ToolCall(name="fs.read", arguments={"path": "a.txt"})


def test_an_unknown_name_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="has no attribute 'McpClient'"):
        kairox.McpClient  # noqa: B018 - reading it is the test
