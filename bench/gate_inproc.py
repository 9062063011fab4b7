"""The gate's own cost per call, with no process and no protocol under it.

The registry is built exactly as ``bench/gate_call.py`` builds it (built-in tools, an allow rule
``mcp__lean__*``, the default ``on_request`` policy and ``workspace_write`` sandbox, a ``HookRegistry`` with no
hooks, events to a ``FanoutSink([RecordingSink()])``, the non-interactive approver), but the ``echo`` tool comes
from an in-process provider shaped like the MCP adapter (same name, schema, source, permission, timeout) whose
function returns at once. ``direct`` awaits that function; ``gate`` calls ``registry.call(ToolCall(...))``. The
two alternate round by round in one process (paired: the machine's noise hits both). Per round: sequential calls
(p50 latency and this process's CPU per call) and 8 tasks at once (calls per second). Prints the medians and what
the gate adds per call (gate minus direct), the figure issue 16 budgets.

The recording sink keeps every event; it is cleared between rounds so memory stays flat.

Run: .venv/bin/python bench/gate_inproc.py [--rounds 9] [--calls 5000] [--conc 8] [--profile FILE]
"""

import argparse
import asyncio
import cProfile
import statistics
import tempfile
from collections.abc import Sequence
from pathlib import Path

from gate_call import NAME, gate_registry, measure, sequential

from kairox._util._json import JsonObject
from kairox.mcp import permission_for
from kairox.tools import (
    CallContext,
    ToolAnnotations,
    ToolCall,
    ToolProvider,
    ToolResult,
    ToolSource,
    ToolSpec,
)

ECHO = f"mcp__{NAME}__echo"
SCHEMA: JsonObject = {"type": "object", "properties": {"message": {"type": "string"}}, "required": ["message"]}


async def echo(arguments: JsonObject) -> ToolResult:
    """The tool's function: returns at once."""
    return ToolResult.text(str(arguments["message"]))


class InProcessProvider(ToolProvider):
    """One tool shaped as the MCP adapter lists ``echo`` of ``tests/servers/lean_server.py``."""

    def __init__(self) -> None:
        super().__init__()
        self.origin = NAME
        annotations = ToolAnnotations()
        self.spec = ToolSpec(
            name=ECHO,
            description="Return the message unchanged.",
            input_schema=SCHEMA,
            source=ToolSource.MCP,
            permission=permission_for(annotations),
            origin=NAME,
            annotations=annotations,
            timeout_sec=300.0,
            meta={"mcp_server": NAME, "mcp_tool": "echo"},
        )

    async def list_tools(self) -> Sequence[ToolSpec]:
        return (self.spec,)

    async def call_tool(self, name: str, arguments: JsonObject, context: CallContext) -> ToolResult:
        return await echo(arguments)


async def main(rounds: int, calls: int, conc: int, profile: str | None) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        ws, home = Path(tmp) / "ws", Path(tmp) / "home"
        ws.mkdir()
        home.mkdir()
        registry, recording = await gate_registry(ws, home, InProcessProvider())
        assert recording is not None

        async def direct(message: str) -> str:
            result = await echo({"message": message})
            assert not result.is_error, result.text_content()
            return result.text_content()

        async def gate(message: str) -> str:
            result = await registry.call(ToolCall(name=ECHO, arguments={"message": message}))
            assert not result.is_error, result.text_content()
            return result.text_content()

        if profile:
            await sequential(gate, calls // 5)
            profiler = cProfile.Profile()
            profiler.enable()
            await sequential(gate, calls)
            profiler.disable()
            profiler.dump_stats(profile)
            print(f"profile of {calls} gate calls written to {profile}")
            return
        figures = await measure(
            {"direct": direct, "gate": gate}, rounds, calls, conc, each_round=recording.events.clear
        )
        events = len(recording.events)
    med = {k: {m: statistics.median(v) for m, v in f.items()} for k, f in figures.items()}
    added_cpu = statistics.median(g - d for g, d in zip(figures["gate"]["cpu"], figures["direct"]["cpu"], strict=True))
    added_p50 = statistics.median(g - d for g, d in zip(figures["gate"]["p50"], figures["direct"]["p50"], strict=True))
    print(
        f"{rounds} rounds x {calls} calls, in-process echo, medians ({events} events recorded in the last gate round)"
    )
    print(f"{'measure':<26}{'direct':>10}{'gate':>10}{'added':>10}")
    print(f"{'1-way p50 µs':<26}{med['direct']['p50']:>10.2f}{med['gate']['p50']:>10.2f}{added_p50:>10.2f}")
    print(f"{'1-way CPU µs/call':<26}{med['direct']['cpu']:>10.2f}{med['gate']['cpu']:>10.2f}{added_cpu:>10.2f}")
    d, g = med["direct"]["conc"], med["gate"]["conc"]
    print(f"{f'{conc}-way calls/s':<26}{d:>10.0f}{g:>10.0f}{g / d:>9.2f}x")


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=9)
    parser.add_argument("--calls", type=int, default=5000)
    parser.add_argument("--conc", type=int, default=8)
    parser.add_argument("--profile", help="write a cProfile of sequential gate calls to this file instead")
    options = parser.parse_args()
    asyncio.run(main(options.rounds, options.calls, options.conc, options.profile))
