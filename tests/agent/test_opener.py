"""One session opener (``kairox.open_workspace``): the context with a session when a model is configured, the
context alone otherwise (saying why), a session required or not wanted; and every front end opens through it."""

import ast
from pathlib import Path

import pytest
from tests.agent._support import user_config
from tests.servers.model_server import ScriptedModelServer

import kairox
from kairox.agent import AgentSession, ModelSetupError, open_workspace
from kairox.config import resolve_config

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(120)]

SOURCE = Path(__file__).resolve().parents[2] / "src" / "kairox"


async def test_without_a_model_the_context_opens_alone_and_says_why(workspace: Path, isolated_home: Path) -> None:
    async with kairox.open_workspace(workspace) as opened:
        assert opened.session is None and opened.settings is None
        assert opened.setup_problem is not None and "model" in opened.setup_problem
        assert opened.context.registry.get("fs.read") is not None
    with pytest.raises(ModelSetupError):
        async with open_workspace(workspace, session=True):
            pass


async def test_with_a_model_a_session_opens_over_the_context_unless_none_is_wanted(
    workspace: Path, isolated_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KAIROX_TEST_MODEL_KEY", "sk-test-opener-0123456789")
    with ScriptedModelServer("openai", [{"reply": "text", "text": "Hello there."}]) as server:
        user_config(isolated_home, server, wire="openai")
        async with open_workspace(workspace) as opened:
            assert isinstance(opened.session, AgentSession) and opened.setup_problem is None
            assert opened.session.context is opened.context
            assert opened.settings is not None and opened.settings.model == "scripted-model"
            turn = await opened.session.run_turn("Say hello.")
            assert turn.text == "Hello there."
        async with open_workspace(workspace, session=False) as alone:
            assert alone.session is None and alone.setup_problem is None
            assert alone.context.registry.get("fs.read") is not None


async def test_the_gui_opens_what_the_opener_opens(
    workspace: Path, isolated_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from kairox.web import WebOptions, create_app

    async def gui_state() -> tuple[bool, str | None]:
        app = create_app(WebOptions(workspace=workspace, port=8768, token="t" * 24))
        async with app.router.lifespan_context(app):
            backend = app.state.backend
            await backend.ready_context()
            return backend.session is not None, backend.setup_problem

    async with open_workspace(workspace) as opened:
        expected = (opened.session is not None, opened.setup_problem)
    assert await gui_state() == expected == (False, expected[1])
    monkeypatch.setenv("KAIROX_TEST_MODEL_KEY", "sk-test-opener-0123456789")
    with ScriptedModelServer("openai", []) as server:
        user_config(isolated_home, server, wire="openai")
        assert resolve_config(workspace).config.model == "scripted-model"
        assert await gui_state() == (True, None)


def _calls(path: Path, names: set[str]) -> list[str]:
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Call):
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
            if name in names:
                found.append(f"{path.relative_to(SOURCE)}:{node.lineno} {name}")
    return found


def test_every_front_end_opens_through_the_one_opener() -> None:
    fronts = [
        SOURCE / "cli" / "_run_cmds.py",
        SOURCE / "tui" / "_app.py",
        SOURCE / "web" / "_backend.py",
        SOURCE / "gateway" / "_serve.py",
    ]
    for path in fronts:
        assert _calls(path, {"open_workspace"}), f"{path} does not open through open_workspace"
    # the choice "a model? a session, else the context alone" is made nowhere else
    elsewhere = [
        call
        for path in SOURCE.rglob("*.py")
        if path.parts[-2] in ("cli", "tui", "web", "gateway", "integrations")
        for call in _calls(path, {"open_session", "model_settings"})
    ]
    assert elsewhere == []
