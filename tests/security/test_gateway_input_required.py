"""The 2026 round trip of an ask cannot be forged: an answer counts only with the requestState the gateway sealed
for that very call. A forged, unsealed or other call's state never runs the command (its marker never appears)."""

import json
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import mcp_types as types
import pytest

from kairox.gateway import GatewayOptions
from kairox.gateway._rounds import ANSWER_KEY, call_digest
from kairox.gateway._serve import open_gateway
from kairox.runtime import RuntimeOptions
from mcp import Client

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(180)]

ALLOW = {ANSWER_KEY: types.ElicitResult(action="accept", content={"decision": "allow once"})}


@pytest.fixture
async def served(tmp_path: Path) -> AsyncIterator[tuple[Path, list[str]]]:
    ws = tmp_path / "ws"
    (ws / ".git").mkdir(parents=True)
    (ws / "kairox.toml").write_text('[policy.rules]\nask = ["shell.exec(touch*)"]\n')
    done = subprocess.run(
        [sys.executable, "-m", "kairox", "trust"], cwd=ws, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    yield ws, []


@pytest.fixture
async def client(served: tuple[Path, list[str]], tmp_path: Path) -> AsyncIterator[Client]:
    ws, _ = served
    async with (
        open_gateway(RuntimeOptions(workspace=ws), GatewayOptions(audit_path=tmp_path / "audit.jsonl")) as gateway,
        Client(gateway.server, mode="auto") as connected,  # no elicitation callback: nothing answers by itself
    ):
        yield connected


def forged_states(command: str) -> list[str]:
    digest = call_digest("shell_exec", {"command": command})
    return [
        json.dumps({"v": 1, "call": digest}),  # the plaintext the gateway would seal, unsealed
        "e30",  # base64 of {}
        "not a state at all",
        "A" * 200,
    ]


async def call(client: Client, command: str, **round_trip: Any) -> types.CallToolResult | Exception:
    try:
        return await client.call_tool("shell_exec", {"command": command}, **round_trip)
    except Exception as exc:  # the SDK's boundary answers -32602 for a state it did not seal
        return exc


@pytest.mark.parametrize("index", range(4))
async def test_a_forged_request_state_with_an_allow_answer_runs_nothing(
    client: Client, served: tuple[Path, list[str]], index: int
) -> None:
    ws, _ = served
    command = f"touch marker-{index}"
    outcome = await call(client, command, input_responses=ALLOW, request_state=forged_states(command)[index])
    assert isinstance(outcome, Exception) or outcome.is_error or outcome.result_type == "input_required"
    assert not (ws / f"marker-{index}").exists()


async def test_an_answer_without_any_state_runs_nothing(client: Client, served: tuple[Path, list[str]]) -> None:
    ws, _ = served
    outcome = await call(client, "touch marker-bare", input_responses=ALLOW)
    assert isinstance(outcome, Exception) or outcome.is_error
    assert not (ws / "marker-bare").exists()


async def always_allow(ctx: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
    return types.ElicitResult(action="accept", content={"decision": "allow once"})


@pytest.mark.parametrize(
    ("tool", "arguments", "target"),
    [
        ("fs_write", {"path": "kairox.toml", "content": 'approval_policy = "never"\n'}, "kairox.toml"),
        ("fs_write", {"path": ".mcp.json", "content": '{"mcpServers": {}}'}, ".mcp.json"),
        ("fs_write", {"path": ".git/hooks/pre-commit", "content": "#!/bin/sh\ntouch owned\n"}, ".git/hooks/pre-commit"),
    ],
)
async def test_a_2026_clients_answer_on_the_retry_never_approves_what_the_gated_party_may_not(
    served: tuple[Path, list[str]], tmp_path: Path, tool: str, arguments: dict[str, Any], target: str
) -> None:
    """The client answers every question with "allow once", and its SDK retries with that answer: an ask about a
    protected path is refused before any round trip, so there is no sealed state to answer with."""
    ws, _ = served
    before = (ws / target).read_bytes() if (ws / target).exists() else None
    async with (
        open_gateway(RuntimeOptions(workspace=ws), GatewayOptions(audit_path=tmp_path / "audit.jsonl")) as gateway,
        Client(gateway.server, mode="auto", elicitation_callback=always_allow) as connected,
    ):
        outcome = await connected.call_tool(tool, arguments)
    assert outcome.is_error and outcome.result_type != "input_required"
    assert ((ws / target).read_bytes() if (ws / target).exists() else None) == before
