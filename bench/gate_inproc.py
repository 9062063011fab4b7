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
import time
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path

from kairox._util import JsonObject
from kairox.config import PolicyConfig
from kairox.events import FanoutSink, RecordingSink
from kairox.hooks import HookRegistry
from kairox.mcp import permission_for
from kairox.policy import NonInteractiveApprover, PolicySettings, Rule
from kairox.registry import RegistrySettings, ToolRegistry, build_registry
from kairox.tools import (
    CallContext,
    SandboxSettings,
    ToolAnnotations,
    ToolCall,
    ToolProvider,
    ToolResult,
    ToolSource,
    ToolSpec,
)

NAME = "lean"
ECHO = f"mcp__{NAME}__echo"
SCHEMA: JsonObject = {"type": "object", "properties": {"message": {"type": "string"}}, "required": ["message"]}

Call = Callable[[str], Awaitable[str]]


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
            name=ECHO, description="Return the message unchanged.", input_schema=SCHEMA, source=ToolSource.MCP,
            permission=permission_for(annotations), origin=NAME, annotations=annotations, timeout_sec=300.0,
            meta={"mcp_server": NAME, "mcp_tool": "echo"},
        )

    async def list_tools(self) -> Sequence[ToolSpec]:
        return (self.spec,)

    async def call_tool(self, name: str, arguments: JsonObject, context: CallContext) -> ToolResult:
        return await echo(arguments)


async def gate_registry(ws: Path, home: Path) -> tuple[ToolRegistry, RecordingSink]:
    rules = [Rule(action="allow", pattern=f"mcp__{NAME}__*")]
    policy = PolicySettings.from_config(PolicyConfig(), workspace=ws, rules=rules, home=home)
    sandbox = SandboxSettings(mode=policy.sandbox, writable_roots=policy.writable_roots, network_access=policy.network_access)
    settings = RegistrySettings(policy=policy, sandbox=sandbox, spill_dir=home / "spill")
    recording = RecordingSink()
    sink = FanoutSink([recording])
    approver = NonInteractiveApprover()
    hooks = HookRegistry(workspace=ws, sandbox=sandbox, approver=approver, events=sink)
    registry = await build_registry(settings, approver=approver, hooks=hooks, events=sink)
    await registry.add_provider(InProcessProvider())
    return registry, recording


async def sequential(call: Call, calls: int) -> tuple[float, float]:
    """p50 latency and CPU of this process per call, in microseconds."""
    times = []
    cpu0 = time.process_time()
    for _ in range(calls):
        t0 = time.perf_counter_ns()
        await call("hello")
        times.append(time.perf_counter_ns() - t0)
    cpu = (time.process_time() - cpu0) / calls * 1e6
    return statistics.median(times) / 1000, cpu


async def concurrent(call: Call, calls: int, conc: int) -> float:
    """Calls per second with ``conc`` tasks at once (each awaits its calls one after another)."""
    per_task = max(1, calls // conc)

    async def worker() -> None:
        for _ in range(per_task):
            await call("hello")

    t0 = time.perf_counter()
    await asyncio.gather(*(worker() for _ in range(conc)))
    return per_task * conc / (time.perf_counter() - t0)


async def main(rounds: int, calls: int, conc: int, profile: str | None) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        ws, home = Path(tmp) / "ws", Path(tmp) / "home"
        ws.mkdir()
        home.mkdir()
        registry, recording = await gate_registry(ws, home)

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
        paths: dict[str, Call] = {"direct": direct, "gate": gate}
        figures: dict[str, dict[str, list[float]]] = {k: {"p50": [], "cpu": [], "conc": []} for k in paths}
        for call in paths.values():  # warm both paths
            await sequential(call, calls // 5)
            await concurrent(call, calls // 5, conc)
        for _ in range(rounds):
            for name, call in paths.items():
                recording.clear()
                p50, cpu = await sequential(call, calls)
                figures[name]["p50"].append(p50)
                figures[name]["cpu"].append(cpu)
                figures[name]["conc"].append(await concurrent(call, calls, conc))
        events = len(recording.events)
    med = {k: {m: statistics.median(v) for m, v in f.items()} for k, f in figures.items()}
    added_cpu = statistics.median(g - d for g, d in zip(figures["gate"]["cpu"], figures["direct"]["cpu"], strict=True))
    added_p50 = statistics.median(g - d for g, d in zip(figures["gate"]["p50"], figures["direct"]["p50"], strict=True))
    print(f"{rounds} rounds x {calls} calls, in-process echo, medians ({events} events recorded in the last gate round)")
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
