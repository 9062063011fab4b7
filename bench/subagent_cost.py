"""What a ``task`` call costs over a plain tool call, before the subagent's model has said anything.

A session on a temporary workspace talks to the scripted OpenAI-compatible server (tests/servers/model_server.py,
127.0.0.1). Each round the model asks for one ``fs.read`` (the plain call), then for one ``task`` whose subagent
answers at once. Measured from the session's events, per round:

- plain call: ``fs.read`` through the gate, requested -> finished;
- child start: the ``task`` call requested -> the subagent's first model request (its registry narrowed from the
  parent's, its transcript opened, its hooks and approvals set up, its system prompt and tools sent);
- the same with an agent that brings its own stdio MCP server (tests/servers/basic_server.py), stopped after each
  answer: the first run waits for it to start (confined) and list its tools; later runs list them from the tool
  cache and the server starts beside the first request (printed apart: the first run, then the median).

Printed: medians and the ratios child start / plain call.

Run: .venv/bin/python bench/subagent_cost.py [ROUNDS]
"""

import asyncio
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.servers.model_server import ScriptedModelServer

BASIC = Path(__file__).resolve().parents[1] / "tests" / "servers" / "basic_server.py"
WARMUP = 2


def parent_script(rounds: int, agent: str) -> list[dict[str, object]]:
    steps: list[dict[str, object]] = []
    task = {"subagent_type": agent, "description": "answer", "prompt": "Say done."}
    for n in range(rounds):
        steps += [
            {"reply": "tool_calls", "calls": [{"id": f"r{n}", "name": "fs_read", "arguments": {"path": "a.txt"}}]},
            {"reply": "tool_calls", "calls": [{"id": f"t{n}", "name": "task", "arguments": task}]},
            {"reply": "text", "text": "ok"},
        ]
    return steps


class Clock:
    """Each event of the session with the moment it arrived."""

    def __init__(self) -> None:
        self.seen: list[tuple[float, object]] = []

    def emit(self, event: object) -> None:
        self.seen.append((time.perf_counter(), event))


async def measure(rounds: int, agent: str, home: Path, ws: Path) -> tuple[list[float], list[float], float]:
    from kairox.agent import ModelRequestStarted, SubagentEvent, open_session
    from kairox.registry import ToolCallFinished, ToolCallRequested

    total = rounds + WARMUP
    child = [{"reply": "text", "text": "done"} for _ in range(total)]
    with ScriptedModelServer("openai", parent_script(total, agent), routes={f"BENCH-{agent.upper()}": child}) as server:
        (home / "kairox.toml").write_text(
            'model = "bench"\nmodel_provider = "scripted"\n[policy.rules]\nallow = ["mcp__*"]\n'
            f'[model_providers.scripted]\nbase_url = "{server.base_url}"\n'
        )
        clock = Clock()
        plain, start = [], []
        async with open_session(ws, events=[clock]) as session:
            for n in range(total):
                clock.seen.clear()
                result = await session.run_turn(f"Round {n}.")
                assert result.reason == "completed", result
                at: dict[str, float] = {}
                for moment, event in clock.seen:
                    if isinstance(event, ToolCallRequested | ToolCallFinished):
                        at.setdefault(f"{type(event).__name__}:{event.call_id}", moment)
                    elif isinstance(event, SubagentEvent) and isinstance(event.inner, ModelRequestStarted):
                        at.setdefault("child-request", moment)
                if n == 0:
                    cold = at["child-request"] - at[f"ToolCallRequested:t{n}"]
                if n >= WARMUP:
                    plain.append(at[f"ToolCallFinished:r{n}"] - at[f"ToolCallRequested:r{n}"])
                    start.append(at["child-request"] - at[f"ToolCallRequested:t{n}"])
    return plain, start, cold


async def main(rounds: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        home, ws = root / "home", root / "ws"
        home.mkdir()
        (ws / ".git").mkdir(parents=True)
        (ws / "a.txt").write_text("a line\n" * 50)
        agents = ws / ".kairox" / "agents"
        agents.mkdir(parents=True)
        (agents / "plain.md").write_text("---\nname: plain\ndescription: Answers.\n---\nBENCH-PLAIN\n")
        server = f"mcpServers:\n  own:\n    command: {sys.executable}\n    args: ['{BASIC}']\n"
        (agents / "served.md").write_text(f"---\nname: served\ndescription: Has a server.\n{server}---\nBENCH-SERVED\n")
        os.environ["KAIROX_HOME"] = str(home)
        os.environ["KAIROX_SYSTEM_CONFIG"] = str(home / "none.toml")
        from kairox.config import trust_workspace

        trust_workspace(ws)  # the workspace's agents may start their own servers
        plain, start, _ = await measure(rounds, "plain", home, ws)
        plain2, served, cold = await measure(rounds, "served", home, ws)
    call = statistics.median(plain + plain2)
    child, with_server = statistics.median(start), statistics.median(served)
    print(f"plain tool call (fs.read through the gate)       : {call * 1e3:8.2f} ms (median of {2 * rounds})")
    print(f"task -> the subagent's first model request       : {child * 1e3:8.2f} ms (median of {rounds})")
    print(f"  with its own stdio MCP server (tools cached)   : {with_server * 1e3:8.2f} ms (median of {rounds})")
    print(f"  the first time (the server's tools not cached yet): {cold * 1e3:8.2f} ms")
    print(f"ratio child start / plain call: {child / call:.1f}x; with its own server: {with_server / call:.1f}x")


if __name__ == "__main__":
    asyncio.run(main(int(sys.argv[1]) if len(sys.argv) > 1 else 20))
