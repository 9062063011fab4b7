"""/model NAME switches the session's model (checked against the configured providers and models; the conversation
goes on with the new one, over its own wire), /model alone lists the choices, and /resume is a picker of the
workspace's earlier sessions that continues the chosen one in place."""

import json
from pathlib import Path

import pytest
from tests.agent._support import make_workspace, user_config
from tests.servers.model_server import ScriptedModelServer
from tests.tui.test_session_app import api_key, app_for, paste_text, resume, until

from kairox.agent import list_sessions
from kairox.tui._conversation import ToolCallBlock
from kairox.tui._panels import SessionPicker, TextPanel

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(150)]
__all__ = ["api_key"]


def notices(app: object) -> list[str]:
    return [str(w.render()) for w in app.query("#conversation .notice")]  # type: ignore[attr-defined]


async def send(pilot: object, app: object, text: str) -> None:
    await paste_text(pilot, text)
    await pilot.press("escape")  # type: ignore[attr-defined]  # a completion menu closes; the text stays
    await pilot.press("enter")  # type: ignore[attr-defined]


async def test_model_switches_to_a_configured_model_of_another_provider_and_the_conversation_goes_on(
    tmp_path: Path, isolated_home: Path
) -> None:
    workspace = make_workspace(tmp_path / "repo")

    def has_history(body: dict[str, object]) -> None:
        assert body["model"] == "other-model", body["model"]
        texts = [str(m.get("content")) for m in body["messages"]]  # type: ignore[attr-defined]
        assert any("First question" in t for t in texts) and any("First answer." in t for t in texts), texts

    with (
        ScriptedModelServer("openai", [{"reply": "text", "text": "First answer."}]) as first,
        ScriptedModelServer("anthropic", [{"reply": "text", "text": "Second answer.", "check": has_history}]) as second,
    ):
        extra = (
            '[model_providers.second]\nwire_api = "anthropic"\n'
            f'base_url = "{second.base_url}"\napi_key_env = "KAIROX_TEST_MODEL_KEY"\n\n'
            '[model_providers.keyless]\nbase_url = "http://127.0.0.1:9/v1"\napi_key_env = "KAIROX_TEST_UNSET_KEY"\n\n'
            '[profiles.deep]\nmodel = "other-model"\nmodel_provider = "second"\n'
        )
        user_config(isolated_home, first, wire="openai", extra=extra)
        app = app_for(workspace)
        async with app.run_test(size=(140, 40)) as pilot:
            await until(pilot, lambda: app.session is not None)
            await send(pilot, app, "First question")
            await until(pilot, lambda: len(app.session.messages) == 2 and not app.turn_running)
            await send(pilot, app, "/model")
            await until(pilot, lambda: isinstance(app.screen, TextPanel) and bool(app.screen.query("#panel-text")))
            listing = str(app.screen.query_one("#panel-text").render())
            await pilot.press("escape")
            await until(pilot, lambda: not isinstance(app.screen, TextPanel))
            await send(pilot, app, "/model second/other-modle")
            await until(pilot, lambda: any(n.startswith("/model second/other-modle") for n in notices(app)))
            typo = notices(app)[-1]
            await send(pilot, app, "/model keyless/m")
            await until(pilot, lambda: any(n.startswith("/model keyless/m") for n in notices(app)))
            no_key = notices(app)[-1]
            await send(
                pilot, app, "/model vendor/big-model"
            )  # not a provider: a model name of the current one (as routers name them)
            await until(
                pilot,
                lambda: app.settings is not None and app.settings.model == "vendor/big-model",
                what=lambda: notices(app),
            )
            unnamed = notices(app)[-1]
            await send(pilot, app, "/model second/other-model")
            await until(pilot, lambda: app.settings is not None and app.settings.model == "other-model")
            switched = notices(app)[-1]
            status = str(app.query_one("#status-bar").render())
            await send(pilot, app, "Second question")
            await until(pilot, lambda: len(app.session.messages) == 4 and not app.turn_running)
            answers = [m.text for m in app.session.messages if m.role.value == "assistant"]
            transcript = app.session.transcript.path
    [session] = list_sessions(app.resolved.home, workspace=app.resolved.workspace)
    switches = [
        (r["previous_model"], r["model"])
        for r in map(json.loads, transcript.read_text().splitlines())
        if r.get("event") == "ModelSwitched"
    ]
    # the transcript keeps each switch, and the session list (the /resume picker) names the model it ended on
    assert switches == [("scripted-model", "vendor/big-model"), ("vendor/big-model", "other-model")]
    assert (session.provider, session.model) == ("second", "other-model")
    lines = listing.splitlines()
    assert lines[0] == "Model scripted-model from provider scripted (chat)"
    assert any(
        line.split()[:2] == ["scripted/scripted-model", "model"] and line.endswith("(current)") for line in lines
    )
    assert any(line.split() == ["second/other-model", "profile", "deep"] for line in lines)
    assert any(
        line.split()[:3] == ["second", "anthropic", second.base_url] and line.endswith("KAIROX_TEST_MODEL_KEY set")
        for line in lines
    )
    assert (
        typo == "/model second/other-modle: no model second/other-modle in the configuration\n"
        "  hint: did you mean /model second/other-model? (/model alone lists the choices)"
    )
    assert no_key.startswith(
        "/model keyless/m: model provider 'keyless' needs an API key: the variable KAIROX_TEST_UNSET_KEY is not set"
    )
    assert unnamed == (
        "model scripted/vendor/big-model for the rest of this session "
        "(was scripted/scripted-model); it is not named in the "
        "configuration: the provider says at the next turn whether it serves it"
    )
    assert switched == "model second/other-model for the rest of this session (was scripted/vendor/big-model)"
    assert status.startswith("model second/other-model")
    assert answers == ["First answer.", "Second answer."]


async def test_resume_opens_a_picker_and_continues_the_chosen_session(tmp_path: Path, isolated_home: Path) -> None:
    workspace = make_workspace(tmp_path / "repo")
    script = [
        {"reply": "text", "text": "Earlier answer."},
        {"reply": "text", "text": "Later answer."},
        {"reply": "text", "text": "Continued.", "expect": {"last_user_contains": "Back again"}},
    ]
    with ScriptedModelServer("openai", script) as server:
        user_config(isolated_home, server, wire="openai")
        earlier = app_for(workspace)
        async with earlier.run_test(size=(140, 40)) as pilot:
            await until(pilot, lambda: earlier.session is not None)
            first_id = earlier.session.session_id
            await send(pilot, earlier, "Earlier question")
            await until(pilot, lambda: len(earlier.session.messages) == 2 and not earlier.turn_running)
        app = app_for(workspace)
        async with app.run_test(size=(140, 40)) as pilot:
            await until(pilot, lambda: app.session is not None)
            current = app.session.session_id
            await send(pilot, app, "Later question")
            await until(pilot, lambda: len(app.session.messages) == 2 and not app.turn_running)
            await send(pilot, app, "/resume")
            await until(pilot, lambda: isinstance(app.screen, SessionPicker) and bool(app.screen.query("#sessions")))
            options = app.screen.query_one("#sessions")
            listed = [
                (options.get_option_at_index(i).id, str(options.get_option_at_index(i).prompt))
                for i in range(options.option_count)
            ]
            await pilot.press("down", "enter")
            await until(pilot, lambda: app.session is not None and app.session.session_id == first_id)
            shown = [str(w.render()) for w in app.query("#conversation .user")]
            await send(pilot, app, "Back again")
            await until(pilot, lambda: len(app.session.messages) == 4 and not app.turn_running)
    assert [sid for sid, _ in listed] == [current, first_id]  # newest first
    assert listed[0][1].endswith("Later question   (this session)") and listed[1][1].endswith(
        "1 turn(s)  Earlier question"
    )
    assert shown == ["› Earlier question"]


async def test_on_responses_a_turn_shows_two_tool_calls_and_a_resumed_session_sends_its_reasoning_back(
    tmp_path: Path, isolated_home: Path
) -> None:
    workspace = make_workspace(tmp_path / "repo")
    read = [("r1", "notes.txt"), ("r2", "todo.txt")]
    script = [
        {
            "reply": "tool_calls",
            "reasoning": "Both files.",
            "calls": [{"id": i, "name": "fs_read", "arguments": {"path": p}} for i, p in read],
        },
        {"reply": "text", "text": "Two notes.", "expect": {"tool_results": {"r1": "first", "r2": "second"}}},
        {"reply": "text", "text": "Still two.", "expect": {"last_user_contains": "Again"}},
    ]
    with ScriptedModelServer("responses", script) as server:  # it checks that rs_1 comes back with request 3
        user_config(isolated_home, server, wire="responses")
        earlier = app_for(workspace)
        async with earlier.run_test(size=(140, 40)) as pilot:
            await until(pilot, lambda: earlier.session is not None)
            first_id = earlier.session.session_id
            await send(pilot, earlier, "Read both")
            await until(pilot, lambda: len(earlier.session.messages) == 4 and not earlier.turn_running)
            blocks = sorted(b.call_id for b in earlier.query(ToolCallBlock) if b.outcome.startswith("ok in "))
        app = app_for(workspace)
        async with app.run_test(size=(140, 40)) as pilot:
            await until(pilot, lambda: app.session is not None)
            await resume(pilot, app, first_id)
            await send(pilot, app, "Again")
            await until(pilot, lambda: len(app.session.messages) == 6 and not app.turn_running)
            answers = [m.text for m in app.session.messages if m.role.value == "assistant" and m.text]
    assert blocks == ["r1", "r2"]
    assert answers == ["Two notes.", "Still two."]
