"""The scripted model servers themselves: the official SDKs understand them, and they catch what a real API
would reject or what a test did not expect."""

import anthropic
import openai
import pytest
from tests.servers.model_server import ScriptedModelServer

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(60)]

TOOL_CALL = {
    "reply": "tool_calls",
    "text": "Reading.",
    "calls": [{"id": "c1", "name": "fs_read", "arguments": {"path": "a.py"}}],
}


async def test_openai_sdk_reads_non_streaming_text_and_tool_calls() -> None:
    with ScriptedModelServer("openai", [{"reply": "text", "text": "Hi there."}, TOOL_CALL]) as server:
        client = openai.AsyncOpenAI(api_key="k", base_url=server.base_url, max_retries=0)
        text = await client.chat.completions.create(model="m", messages=[{"role": "user", "content": "hi"}])
        call = await client.chat.completions.create(model="m", messages=[{"role": "user", "content": "read"}])
        await client.close()
    assert text.choices[0].message.content == "Hi there." and text.choices[0].finish_reason == "stop"
    [tool] = call.choices[0].message.tool_calls or []
    assert (tool.id, tool.function.name, tool.function.arguments) == ("c1", "fs_read", '{"path": "a.py"}')
    assert call.choices[0].finish_reason == "tool_calls"


async def test_anthropic_sdk_reads_non_streaming_text_and_tool_use() -> None:
    with ScriptedModelServer("anthropic", [{"reply": "text", "text": "Hi there."}, TOOL_CALL]) as server:
        client = anthropic.AsyncAnthropic(api_key="k", base_url=server.base_url, max_retries=0)
        text = await client.messages.create(model="m", max_tokens=100, messages=[{"role": "user", "content": "hi"}])
        call = await client.messages.create(model="m", max_tokens=100, messages=[{"role": "user", "content": "read"}])
        await client.close()
    assert [(b.type, getattr(b, "text", None)) for b in text.content] == [("text", "Hi there.")]
    assert call.stop_reason == "tool_use"
    assert [(b.type, getattr(b, "id", None), getattr(b, "input", None)) for b in call.content] == [
        ("text", None, None),
        ("tool_use", "c1", {"path": "a.py"}),
    ]


async def test_a_request_after_the_script_ended_is_refused_and_fails_the_test() -> None:
    server = ScriptedModelServer("openai", []).start()
    try:
        client = openai.AsyncOpenAI(api_key="k", base_url=server.base_url, max_retries=0)
        with pytest.raises(openai.BadRequestError):
            await client.chat.completions.create(model="m", messages=[{"role": "user", "content": "hi"}])
        await client.close()
    finally:
        server.stop()
    with pytest.raises(AssertionError, match="came after the script ended"):
        server.verify()


def test_a_reply_left_over_fails_the_test() -> None:
    server = ScriptedModelServer("anthropic", [{"reply": "text", "text": "never asked for"}])
    with pytest.raises(AssertionError, match="1 scripted replies were never requested"), server:
        pass


async def test_anthropic_server_rejects_tool_results_split_over_two_messages() -> None:
    messages = [
        {"role": "user", "content": "read both"},
        {
            "role": "assistant",
            "content": [
                {"type": "tool_use", "id": "a", "name": "fs_read", "input": {}},
                {"type": "tool_use", "id": "b", "name": "fs_read", "input": {}},
            ],
        },
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "a", "content": "x"}]},
        {"role": "assistant", "content": "hm"},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "b", "content": "y"}]},
    ]
    server = ScriptedModelServer("anthropic", [{"reply": "text", "text": "unused"}]).start()
    try:
        client = anthropic.AsyncAnthropic(api_key="k", base_url=server.base_url, max_retries=0)
        with pytest.raises(anthropic.BadRequestError):
            await client.messages.create(model="m", max_tokens=10, messages=messages)  # type: ignore[arg-type]
        await client.close()
    finally:
        server.stop()
    assert any("expected all of ['a', 'b'] in this one message" in f for f in server.failures)


async def test_openai_sdk_reads_streamed_and_whole_responses_with_reasoning_calls_and_cached_usage() -> None:
    step = {**TOOL_CALL, "reasoning": "The file holds the answer.", "cached_tokens": 1000}
    with ScriptedModelServer("responses", [step, {"reply": "text", "text": "Done."}]) as server:
        client = openai.AsyncOpenAI(api_key="k", base_url=server.base_url, max_retries=0)
        stream = await client.responses.create(
            model="m", input=[{"role": "user", "content": "read"}], store=False, stream=True
        )
        events = [event async for event in stream]
        answered = {"type": "function_call_output", "call_id": "c1", "output": "42"}
        whole = await client.responses.create(model="m", store=False, input=[*events[-1].response.output, answered])
        await client.close()
    kinds = [event.type for event in events]
    assert kinds[:2] == ["response.created", "response.in_progress"] and kinds[-1] == "response.completed"
    summary = "".join(e.delta for e in events if e.type == "response.reasoning_summary_text.delta")
    assert summary == "The file holds the answer."
    completed = events[-1].response
    reasoning, message, call = completed.output
    assert (reasoning.type, reasoning.encrypted_content) == ("reasoning", "enc-1")
    assert (call.type, call.call_id, call.name) == ("function_call", "c1", "fs_read")
    assert call.arguments == '{"path": "a.py"}'
    assert message.content[0].text == "Reading."
    assert completed.usage.input_tokens_details.cached_tokens == 1000 and completed.usage.input_tokens > 1000
    assert whole.output_text == "Done."
