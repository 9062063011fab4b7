"""The wire clients on their own, against the scripted model servers: what they send (headers, body), what
they assemble from the stream, and how each kind of failure ends (retried, final, broken off, cancelled)."""

import socket
from collections.abc import Callable
from typing import Any

import anyio
import pytest
from tests.servers.model_server import ScriptedModelServer

from kairox.agent import Message, ModelRequest, ModelRequestRetried, ModelSettings
from kairox.agent._client import ModelClient, collect
from kairox.agent._messages import ModelResponse
from kairox.agent._provider import ModelProviderError
from kairox.agent._session import client_for
from kairox.events import RecordingSink

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(60)]

WIRES = ["openai", "responses", "anthropic"]
KEY = "sk-test-0123456789abcdef"
TOOL = {"type": "function", "function": {"name": "fs_read", "description": "Read.", "parameters": {"type": "object"}}}
ANTHROPIC_TOOL = {"name": "fs_read", "description": "Read.", "input_schema": {"type": "object"}}


class HeaderServer(ScriptedModelServer):
    """The scripted server, keeping each request's headers."""

    def __init__(self, wire: str, script: list[dict[str, Any]]) -> None:
        super().__init__(wire, script)
        self.headers: list[dict[str, str]] = []

    async def _respond(self, method: str, path: str, headers: dict[str, str], raw: bytes, writer: Any) -> None:
        self.headers.append(headers)
        await super()._respond(method, path, headers, raw, writer)


async def complete(client: ModelClient, request: ModelRequest, on_text: Callable[[str], None]) -> ModelResponse:
    """One answer read from the client's stream, as the session reads it."""
    return await collect(client, request, on_text, provider="scripted")


def settings(wire: str, base_url: str, **extra: Any) -> ModelSettings:
    return ModelSettings(
        model="scripted-model",
        provider="scripted",
        wire_api={"openai": "chat"}.get(wire, wire),
        base_url=base_url,
        api_key_env="KAIROX_TEST_MODEL_KEY",
        **{"max_retries": 2, "request_timeout_sec": 30.0, **extra},
    )


def request(wire: str, text: str = "Hello?") -> ModelRequest:
    return ModelRequest(
        model="scripted-model",
        system="Be brief.",
        messages=(Message.user(text),),
        tools=(ANTHROPIC_TOOL if wire == "anthropic" else TOOL,),
        max_output_tokens=256,
    )


@pytest.mark.parametrize("wire", WIRES)
async def test_the_key_and_the_configured_headers_are_sent_and_the_answer_and_tool_calls_are_assembled(
    wire: str,
) -> None:
    script = [
        {
            "reply": "tool_calls",
            "text": "Reading both.",
            "calls": [
                {"id": "c1", "name": "fs_read", "arguments": {"path": "a.py"}},
                {"id": "c2", "name": "fs_read", "arguments": {"path": "b.py"}},
            ],
        },
    ]
    texts: list[str] = []
    with HeaderServer(wire, script) as server:
        client = client_for(
            settings(wire, server.base_url, headers={"x-team": "blue"}), events=RecordingSink(), api_key=KEY
        )
        response = await complete(client, request(wire), texts.append)
        await client.aclose()
    [headers] = server.headers
    if wire == "anthropic":
        assert (
            headers["x-api-key"] == KEY
            and headers["anthropic-version"] == "2023-06-01"
            and "authorization" not in headers
        )
    else:
        assert headers["authorization"] == f"Bearer {KEY}" and "x-api-key" not in headers
    assert headers["x-team"] == "blue"
    [body] = server.requests
    assert body["stream"] is True and body["model"] == "scripted-model"
    assert "".join(texts) == response.message.text == "Reading both."
    assert [(c.id, c.name, c.arguments) for c in response.message.tool_calls] == [
        ("c1", "fs_read", {"path": "a.py"}),
        ("c2", "fs_read", {"path": "b.py"}),
    ]
    assert response.stop_reason == ("tool_use" if wire == "anthropic" else "tool_calls")
    assert response.usage.input_tokens > 0 and response.usage.output_tokens > 0


async def test_a_provider_without_a_key_gets_no_authorization_header() -> None:
    with HeaderServer("openai", [{"reply": "text", "text": "local"}]) as server:
        client = client_for(settings("openai", server.base_url), events=RecordingSink(), api_key=None)
        response = await complete(client, request("openai"), lambda _: None)
        await client.aclose()
    assert response.message.text == "local" and "authorization" not in server.headers[0]


@pytest.mark.parametrize("wire", WIRES)
async def test_a_500_is_retried_and_a_400_is_final_with_the_providers_message(wire: str) -> None:
    script = [
        {"reply": "error", "status": 500, "message": "the backend hiccuped"},
        {"reply": "error", "status": 400, "message": "messages: text content blocks must be non-empty"},
    ]
    sink = RecordingSink()
    with ScriptedModelServer(wire, script) as server:
        client = client_for(settings(wire, server.base_url), events=sink, api_key=KEY)
        with pytest.raises(ModelProviderError) as caught:
            await complete(client, request(wire), lambda _: None)
        await client.aclose()
    [retried] = sink.of_type(ModelRequestRetried)
    assert retried.attempt == 1 and "HTTP 500: the backend hiccuped" in retried.reason
    assert caught.value.status == 400 and "text content blocks must be non-empty" in caught.value.reason
    assert "retried 1 times" in str(caught.value)


@pytest.mark.parametrize("wire", WIRES)
async def test_a_refused_connection_is_retried_then_reported_as_cannot_connect(wire: str) -> None:
    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    sink = RecordingSink()
    client = client_for(settings(wire, f"http://127.0.0.1:{port}", max_retries=1), events=sink, api_key=KEY)
    with pytest.raises(ModelProviderError) as caught:
        await complete(client, request(wire), lambda _: None)
    await client.aclose()
    assert "cannot connect" in caught.value.reason and caught.value.status is None
    assert [r.attempt for r in sink.of_type(ModelRequestRetried)] == [1]


@pytest.mark.parametrize("wire", WIRES)
async def test_an_error_event_after_the_answer_started_breaks_it_off_with_the_providers_message(wire: str) -> None:
    texts: list[str] = []
    sink = RecordingSink()
    with ScriptedModelServer(
        wire,
        [{"reply": "stream_error", "text": "A long answer that the provider gives up on.", "message": "overloaded"}],
    ) as server:
        client = client_for(settings(wire, server.base_url), events=sink, api_key=KEY)
        with pytest.raises(ModelProviderError) as caught:
            await complete(client, request(wire), texts.append)
        await client.aclose()
    assert "broke off" in caught.value.reason and "overloaded" in caught.value.reason
    assert not sink.of_type(ModelRequestRetried)  # text had streamed: never sent again


@pytest.mark.parametrize("wire", WIRES)
async def test_a_stream_that_stalls_longer_than_the_request_timeout_breaks_off_as_timed_out(wire: str) -> None:
    with ScriptedModelServer(wire, [{"reply": "text", "text": "Slowly, word by word.", "delay_sec": 2}]) as server:
        client = client_for(
            settings(wire, server.base_url, request_timeout_sec=0.5), events=RecordingSink(), api_key=KEY
        )
        with pytest.raises(ModelProviderError) as caught:
            await complete(client, request(wire), lambda _: None)
        await client.aclose()
        server.script.clear()
    assert "broke off" in caught.value.reason and "timed out" in caught.value.reason


@pytest.mark.parametrize("wire", WIRES)
async def test_a_cancel_mid_stream_ends_the_request_and_the_client_serves_the_next_one(wire: str) -> None:
    script = [
        {"reply": "text", "text": "This answer is cancelled while it streams.", "delay_sec": 0.3},
        {"reply": "text", "text": "Next."},
    ]
    texts: list[str] = []
    with ScriptedModelServer(wire, script) as server:
        client = client_for(settings(wire, server.base_url), events=RecordingSink(), api_key=KEY)
        with anyio.CancelScope() as scope:

            def on_text(text: str) -> None:
                texts.append(text)
                scope.cancel()  # at the first piece of text

            await complete(client, request(wire), on_text)
        assert scope.cancelled_caught
        after = await complete(client, request(wire, "Again?"), lambda _: None)
        await client.aclose()
    assert len(texts) == 1 and "This answer is cancelled while it streams.".startswith(texts[0])
    assert after.message.text == "Next."


async def test_anthropic_input_counts_the_cached_parts_of_the_prompt() -> None:
    cached = {"input_tokens": 12, "cache_read_input_tokens": 3000, "cache_creation_input_tokens": 400}
    with ScriptedModelServer("anthropic", [{"reply": "text", "text": "cached", "anthropic_usage": cached}]) as server:
        client = client_for(settings("anthropic", server.base_url), events=RecordingSink(), api_key=KEY)
        response = await complete(client, request("anthropic"), lambda _: None)
        await client.aclose()
    assert response.usage.input_tokens == 3412, "the context measure counts the whole prompt, cached or not"


@pytest.mark.parametrize("wire", WIRES)
async def test_on_request_sent_is_called_once_per_request_when_it_is_out_before_the_answer_is_read(wire: str) -> None:
    said: list[str] = []

    def on_text(text: str) -> None:
        if said[-1] != "text":  # an answer streams in pieces
            said.append("text")

    script = [{"reply": "text", "text": "one"}, {"reply": "text", "text": "two"}]
    with ScriptedModelServer(wire, script) as server:
        client = client_for(
            settings(wire, server.base_url),
            events=RecordingSink(),
            api_key=KEY,
            on_request_sent=lambda: said.append("sent"),
        )
        for _ in script:
            await complete(client, request(wire), on_text)
        await client.aclose()
    assert said == ["sent", "text", "sent", "text"]
