"""Two entry points that take what others send: the gate as a model calls it (``call_from_model``: arguments as an
object, as the JSON text OpenAI sends, or nothing at all) and plugin installs (a manifest's name and version become
folder names). Whatever comes, the answer is a result or a clear error, never a traceback."""

import asyncio
import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tests.fuzz._loaders import JSON
from tests.registry._support import settings as registry_settings

from kairox.errors import KairoxError
from kairox.plugins import Marketplaces
from kairox.policy import NonInteractiveApprover
from kairox.registry import ModelProvider, build_registry
from kairox.tools import ToolResult

pytestmark = pytest.mark.timeout(600)

WIRE_NAMES = st.sampled_from(["fs_read", "fs_list", "fs_edit", "search_ripgrep", "shell_exec", "nope"]) | st.text()
ARGUMENTS = st.none() | JSON | st.text() | JSON.map(json.dumps)


@pytest.fixture(scope="module")
def place(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("entry")
    for name in ("ws", "home", "tmp"):
        (root / name).mkdir()
    (root / "ws" / "a.txt").write_text("hello\n")
    return root


def test_the_gate_answers_whatever_a_model_sends_as_arguments(place: Path) -> None:
    async def call(provider: ModelProvider, wire: str, arguments: Any) -> ToolResult:
        registry = await build_registry(registry_settings(place / "ws"), approver=NonInteractiveApprover())
        return await registry.call_from_model(provider, wire, arguments)

    @given(st.sampled_from(list(ModelProvider)), WIRE_NAMES, ARGUMENTS)
    @settings(max_examples=300)
    def run(provider: ModelProvider, wire: str, arguments: Any) -> None:
        result = asyncio.run(call(provider, wire, arguments))
        assert isinstance(result, ToolResult)

    run()


def test_the_gate_reads_the_json_text_of_arguments_and_names_what_is_wrong(place: Path) -> None:
    async def calls() -> list[ToolResult]:
        registry = await build_registry(registry_settings(place / "ws"), approver=NonInteractiveApprover())
        sent = ['{"path": "a.txt"}', None, '["a.txt"]', "{not json", ""]
        return [await registry.call_from_model(ModelProvider.OPENAI, "fs_read", a) for a in sent]

    text, empty, listed, broken, blank = asyncio.run(calls())
    assert (text.is_error, text.text_content()) == (False, "hello\n")
    assert empty.text_content() == "invalid arguments for fs.read: arguments: 'path' is a required property"
    assert listed.text_content() == "the arguments of fs.read must be a JSON object, not list; send an object"
    assert broken.text_content().startswith("the arguments of fs.read are not valid JSON (")
    assert blank.text_content() == empty.text_content()


NAMES = st.text(min_size=1, max_size=400) | st.sampled_from(["a" * 300, "x" * 64, "..", "../../up", "ok-name"])


def test_a_plugin_install_refuses_any_name_or_version_with_an_error_not_a_traceback(place: Path) -> None:
    async def install(name: str, version: str) -> None:
        source = place / "src"
        shutil.rmtree(source, ignore_errors=True)
        (source / ".claude-plugin").mkdir(parents=True)
        (source / ".claude-plugin" / "plugin.json").write_text(json.dumps({"name": name, "version": version}))

        async def yes(_request: object) -> bool:
            return True

        home = place / "home"
        try:
            result = await Marketplaces(home, home / "kairox.toml").install_source(str(source), confirm=yes)
        except KairoxError:
            return
        assert result.record.path.is_relative_to(home / "plugins")

    @given(NAMES, NAMES)
    @settings(max_examples=150)
    def run(name: str, version: str) -> None:
        asyncio.run(install(name, version))

    run()
