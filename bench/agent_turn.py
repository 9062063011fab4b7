"""Kairox's own cost of one agent turn with three tool calls, outside the model and the tools.

A session on a temporary workspace talks to the scripted OpenAI-compatible server (tests/servers/model_server.py,
127.0.0.1) through the official SDK. Each turn: the model asks for three ``fs.read`` calls in one message, gets
the results, answers. Measured per turn: the whole ``run_turn``; the time inside the model client (HTTP, SSE,
the SDK, the scripted server); and the same three calls made directly on the built-in provider, side by side.
Kairox's overhead = turn - model - direct tools: the gate (validation, policy, events), hooks (none here),
the transcript lines, message conversion and the tool definitions sent with each request.

Run: .venv/bin/python bench/agent_turn.py [TURNS]
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

READS = [{"path": f"file{i}.txt"} for i in range(3)]


def script(turns: int) -> list[dict[str, object]]:
    steps: list[dict[str, object]] = []
    for turn in range(turns):
        calls = [{"id": f"t{turn}c{i}", "name": "fs_read", "arguments": args} for i, args in enumerate(READS)]
        steps += [
            {"reply": "tool_calls", "calls": calls},
            {"reply": "text", "text": f"Read all three files (turn {turn})."},
        ]
    return steps


async def main(turns: int) -> None:
    from kairox.agent import open_session
    from kairox.tools import BuiltinToolProvider, CallContext

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        home, ws = root / "home", root / "ws"
        home.mkdir()
        (ws / ".git").mkdir(parents=True)
        for i in range(3):
            (ws / f"file{i}.txt").write_text(f"line of file {i}\n" * 50)
        os.environ["KAIROX_HOME"] = str(home)
        os.environ["KAIROX_SYSTEM_CONFIG"] = str(home / "none.toml")
        warmup = 3
        with ScriptedModelServer("openai", script(turns + warmup)) as server:
            (home / "kairox.toml").write_text(
                'model = "bench"\nmodel_provider = "scripted"\n'
                f'[model_providers.scripted]\nbase_url = "{server.base_url}"\n'
            )
            async with open_session(ws) as session:
                model_time = [0.0]
                stream = session.client.stream

                async def timed(request):  # type: ignore[no-untyped-def]
                    start = time.perf_counter()
                    try:
                        async for event in stream(request):
                            yield event
                    finally:
                        model_time[0] += time.perf_counter() - start

                session.client.stream = timed  # type: ignore[method-assign]
                provider = BuiltinToolProvider()
                context = CallContext(call_id="bench", workspace=ws)
                totals, models, directs = [], [], []
                for turn in range(turns + warmup):
                    model_time[0] = 0.0
                    start = time.perf_counter()
                    result = await session.run_turn(f"Read the three files ({turn}).")
                    total = time.perf_counter() - start
                    assert result.reason == "completed" and result.tool_calls == 3, result
                    start = time.perf_counter()
                    await asyncio.gather(*(provider.call_tool("fs.read", args, context) for args in READS))
                    direct = time.perf_counter() - start
                    if turn >= warmup:
                        totals.append(total)
                        models.append(model_time[0])
                        directs.append(direct)
    total, model, direct = statistics.median(totals), statistics.median(models), statistics.median(directs)
    overhead = statistics.median(t - m - d for t, m, d in zip(totals, models, directs, strict=True))
    print(f"turn with 3 fs.read calls : {total * 1e3:8.2f} ms (median of {turns} turns)")
    print(f"  inside the model client : {model * 1e3:8.2f} ms (2 requests: SDK, HTTP, scripted server)")
    print(f"  the 3 calls made directly: {direct * 1e3:8.2f} ms")
    print(f"Kairox overhead per turn  : {overhead * 1e3:8.2f} ms ({overhead / 3 * 1e3:.2f} ms per tool call)")
    print(f"ratio overhead / direct tool time: {overhead / direct:.1f}x")


if __name__ == "__main__":
    asyncio.run(main(int(sys.argv[1]) if len(sys.argv) > 1 else 30))
