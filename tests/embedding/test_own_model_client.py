"""A caller's own model client drives AgentSession: real tool calls through the gate, the caller's approver, events."""

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from tests.agent._support import make_workspace, transcript_records

from kairox.agent import (
    ModelClient,
    ModelFailed,
    ModelRequest,
    ModelSetupError,
    ResponseEnd,
    Role,
    TextDelta,
    ToolCallPart,
    TurnEndReason,
    Usage,
    open_session,
)
from kairox.agent._client import ModelEvent
from kairox.agent._events import SessionStarted
from kairox.agent._provider import ModelProviderError
from kairox.errors import KairoxError
from kairox.events import RecordingSink
from kairox.policy import ApprovalAnswer, ApprovalRequest
from kairox.registry import ModelProvider, ToolCallDecided, ToolCallFinished

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(120)]


class RuleModel:
    """A tiny rule-based model of the caller's: it reads the conversation it is sent and decides what to do. It
    asks for three calls on the first request (a read, a refused read, a write the policy asks about), then
    answers with what came back."""

    model = "rules-1"

    def __init__(self, dialect: ModelProvider = ModelProvider.ANTHROPIC) -> None:
        self.dialect = dialect
        self.requests: list[ModelRequest] = []
        self.closed = False

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]:
        self.requests.append(request)
        last = request.messages[-1]
        if last.role is Role.USER:
            yield TextDelta(text="Reading the notes, ")
            yield TextDelta(text="then writing a summary.")
            yield ToolCallPart(id="r1", name="fs_read", arguments={"path": "notes.txt"})
            yield ToolCallPart(id="r2", name="fs_read", arguments={"path": "secrets/key.txt"})
            yield ToolCallPart(id="w1", name="fs_write", arguments={"path": "summary.txt", "content": "one note\n"})
            yield ResponseEnd(usage=Usage(input_tokens=120, output_tokens=30), stop_reason="tool_use")
            return
        results = {r.call_id: r for r in last.tool_results}
        read, refused, wrote = results["r1"], results["r2"], results["w1"]
        verdict = "refused" if refused.is_error and "was not run" in refused.text else "read"
        yield TextDelta(
            text=f"notes say {'first note' in read.text}; the key was {verdict}; written: {not wrote.is_error}"
        )
        yield ResponseEnd(usage=Usage(input_tokens=200, output_tokens=12), stop_reason="end_turn")

    async def aclose(self) -> None:
        self.closed = True


class BrokenModel:
    """A client whose stream stops early or fails, as a flaky network client of the caller's would."""

    model = "flaky-1"
    dialect = ModelProvider.OPENAI

    def __init__(self, how: str) -> None:
        self.how = how

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]:
        yield TextDelta(text="Half an answ")
        if self.how == "raise":
            raise ModelProviderError("flaky", "connection reset by peer", status=502)
        if self.how == "kairox-error":
            raise KairoxError("the local model ran out of memory", hint="load a smaller one")
        if self.how == "bug":
            raise ValueError("a bug in the caller's client")


class RecordingApprover:
    def __init__(self) -> None:
        self.requests: list[ApprovalRequest] = []

    async def request_approval(self, request: ApprovalRequest) -> ApprovalAnswer:
        self.requests.append(request)
        return ApprovalAnswer.allow_once()


@pytest.fixture
def workspace(tmp_path: Path, isolated_home: Path) -> Path:
    root = make_workspace(tmp_path / "repo")
    (root / "secrets").mkdir()
    (root / "secrets" / "key.txt").write_text("sk-do-not-show\n", encoding="utf-8")
    (isolated_home / "kairox.toml").write_text(
        '[policy.rules]\ndeny = ["fs.read(secrets/**)"]\nask = ["fs.write(summary.txt)"]\n', encoding="utf-8"
    )
    return root


def test_kairox_clients_and_a_caller_class_satisfy_the_protocol() -> None:
    from kairox.agent import ModelSettings
    from kairox.agent._session import client_for
    from kairox.events import NullSink

    settings = ModelSettings(model="m", provider="p", wire_api="anthropic", base_url="http://127.0.0.1:9")
    own = client_for(settings, events=NullSink(), api_key="k")
    assert isinstance(own, ModelClient) and own.dialect is ModelProvider.ANTHROPIC and own.model == "m"
    assert isinstance(RuleModel(), ModelClient)
    assert not isinstance(object(), ModelClient)


@pytest.mark.parametrize("dialect", [ModelProvider.ANTHROPIC, ModelProvider.OPENAI])
async def test_own_client_calls_tools_through_the_gate_with_the_callers_approver(
    dialect: ModelProvider, workspace: Path, isolated_home: Path
) -> None:
    model = RuleModel(dialect)
    approver = RecordingApprover()
    sink = RecordingSink()
    async with open_session(workspace, client=model, approver=approver, events=[sink]) as session:
        result = await session.run_turn("Summarise the notes.")
        transcript = session.transcript.path
    assert result.reason is TurnEndReason.COMPLETED and result.tool_calls == 3
    assert result.text == "notes say True; the key was refused; written: True"
    # the definitions came in the client's dialect, and the system prompt carries the prompt context
    first = model.requests[0]
    assert first.model == "rules-1" and "Kairox" in first.system
    names = [t["name"] if dialect is ModelProvider.ANTHROPIC else t["function"]["name"] for t in first.tools]
    assert {"fs_read", "fs_write", "shell_exec"} <= set(names)
    # the gate decided each call; the refusal names its rule; the ask went to the caller's approver
    decided: dict[str, list[ToolCallDecided]] = {}
    for event in sink.of_type(ToolCallDecided):
        decided.setdefault(event.call_id, []).append(event)
    assert [e.decision for e in decided["r1"]] == ["allow"]
    assert [(e.decision, e.rule) for e in decided["r2"]] == [("deny", "fs.read(secrets/**)")]
    assert [(e.decision, e.source) for e in decided["w1"]] == [("ask", "rule"), ("allow", "approver")]
    assert [(r.tool, r.arguments["path"]) for r in approver.requests] == [("fs.write", "summary.txt")]
    assert (workspace / "summary.txt").read_text(encoding="utf-8") == "one note\n"
    finished = {e.call_id: e.is_error for e in sink.of_type(ToolCallFinished)}
    assert finished == {"r1": False, "r2": True, "w1": False}
    # the caller's client is the caller's to close; the transcript names it
    assert not model.closed
    assert [e.provider for e in sink.of_type(SessionStarted)] == ["RuleModel"]
    records = transcript_records(transcript)
    assert records[0]["model"] == "rules-1" and records[0]["provider"] == "RuleModel"
    assert "sk-do-not-show" not in transcript.read_text(encoding="utf-8")
    assert session.usage == Usage(input_tokens=320, output_tokens=42)


@pytest.mark.parametrize(
    ("how", "provider", "status", "expected"),
    [
        ("stop", "BrokenModel", None, "the stream ended without a ResponseEnd"),
        ("raise", "flaky", 502, "connection reset by peer"),
        ("kairox-error", "BrokenModel", None, "the local model ran out of memory"),
    ],
)
async def test_a_stream_that_breaks_off_ends_the_turn_with_an_error_and_keeps_the_text(
    how: str, provider: str, status: int | None, expected: str, workspace: Path
) -> None:
    sink = RecordingSink()
    async with open_session(workspace, client=BrokenModel(how), events=[sink]) as session:
        result = await session.run_turn("hello")
        history = list(session.messages)
    assert result.reason is TurnEndReason.ERROR
    assert result.message is not None and expected in result.message
    [failed] = sink.of_type(ModelFailed)
    assert (failed.provider, failed.status) == (provider, status) and expected in failed.message
    assert history[-1].role is Role.ASSISTANT and history[-1].text == "Half an answ"


async def test_a_bug_in_the_callers_client_is_raised_not_hidden(workspace: Path) -> None:
    async with open_session(workspace, client=BrokenModel("bug")) as session:
        with pytest.raises(ValueError, match="a bug in the caller's client"):
            await session.run_turn("hello")
        assert session.messages[-1].role is Role.USER  # nothing half-made was added to the conversation


async def test_a_client_and_a_model_name_together_are_refused(workspace: Path) -> None:
    with pytest.raises(ModelSetupError, match="a model client and a model or provider name"):
        async with open_session(workspace, client=RuleModel(), model="gpt-x"):
            pass
