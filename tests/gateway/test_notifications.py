"""What ``kairox serve`` passes on besides results: an upstream's progress, log messages (upstream ones and
Kairox's own language servers), completions of skill arguments, and resource subscriptions."""

from typing import Any

import mcp_types as types
import pytest
from tests.gateway.conftest import Served
from tests.gateway.test_serve import connect, text

from kairox.gateway._wire import prompt_argument_values
from kairox.skills import SkillArgument

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(300)]


async def test_an_upstreams_progress_reaches_the_caller_under_its_token(gateway: Served) -> None:
    seen: list[tuple[float, float | None, str | None]] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        seen.append((progress, total, message))

    async with connect(gateway) as client:
        result = await client.call_tool(
            "mcp__everything__trigger-long-running-operation",
            {"duration": 0.6, "steps": 3},
            progress_callback=on_progress,
        )
    assert not result.is_error, text(result)
    assert [(p, t) for p, t, _ in seen] == [(1, 3), (2, 3), (3, 3)]


async def test_log_messages_reach_a_client_that_set_a_level(gateway: Served) -> None:
    logs: list[types.LoggingMessageNotificationParams] = []

    async def on_log(params: types.LoggingMessageNotificationParams) -> None:
        logs.append(params)

    async with connect(gateway, logging_callback=on_log) as client:
        await client.set_logging_level("info")
        symbols = await client.call_tool("lsp_document_symbols", {"path": "app.py"})  # starts the language server
    assert not symbols.is_error
    lsp = [
        (log.level, log.logger, str(log.data).split(" (pid")[0])
        for log in logs
        if (log.logger or "").startswith("lsp/")
    ]
    assert lsp == [
        ("info", "lsp/jedi", "language server jedi starting"),
        ("info", "lsp/jedi", "language server jedi running"),
    ]


async def test_skill_arguments_complete_and_unknown_prompts_complete_to_nothing(gateway: Served) -> None:
    async with connect(gateway) as client:
        assert client.server_capabilities.completions is not None
        known = await client.complete(types.PromptReference(name="greet-back"), {"name": "who", "value": ""})
        unknown = await client.complete(types.PromptReference(name="no-such-prompt"), {"name": "x", "value": "a"})
    assert (known.completion.values, unknown.completion.values) == ([], [])


async def test_resource_subscriptions_are_accepted_and_taken_back(gateway: Served) -> None:
    async with connect(gateway) as client:
        caps: Any = client.server_capabilities.resources
        assert caps is not None and caps.subscribe is True
        uri = "kairox://mcp/basic/memo://note"
        assert await client.subscribe_resource(uri) == types.EmptyResult()
        assert await client.unsubscribe_resource(uri) == types.EmptyResult()


def test_argument_completions_are_the_default_and_the_booleans_that_start_with_what_was_typed() -> None:
    loud = SkillArgument(name="loud", type="boolean", default=False)
    region = SkillArgument(name="region", default="north")
    assert [
        prompt_argument_values(loud, ""),
        prompt_argument_values(loud, "t"),
        prompt_argument_values(region, "no"),
    ] == [["false", "true"], ["true"], ["north"]]
    assert prompt_argument_values(region, "so") == []
