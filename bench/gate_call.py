"""The gate's cost per MCP tool call, beside the bare client on the same server, as ratios.

One real MCP server (``tests/servers/lean_server.py``, its ``echo`` tool) and one ``McpClient``. ``bare`` calls
``client.call_tool("echo", ...)``; ``gate`` calls ``registry.call(ToolCall(...))`` on a registry built the way the
runtime builds it: built-in tools, the MCP adapter, an allow rule for the server, a ``HookRegistry`` with no hooks,
events to a ``FanoutSink([RecordingSink()])`` and the non-interactive approver. The two alternate, batch by batch,
in one process (paired: the machine's noise hits both). Per round: sequential calls (p50 latency and this process's
CPU per call) and 8 tasks sharing the session (calls per second). A third path, ``quiet``, is the same gate with
nothing listening to its events (a ``NullSink``): it shows how much of the gate's cost is building and keeping the
three events of each call. Prints the medians over the rounds and the ratios to bare.

Run: .venv/bin/python bench/gate_call.py [--rounds 7] [--calls 1000] [--conc 8]
"""

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

from kairox._rpc._status import ServerStatus
from kairox.config import McpServerConfig, PolicyConfig
from kairox.events import EventSink, FanoutSink, NullSink, RecordingSink
from kairox.hooks import HookRegistry
from kairox.mcp import McpClient, McpToolAdapter
from kairox.policy import NonInteractiveApprover, PolicySettings, Rule
from kairox.registry import ToolRegistry, build_registry
from kairox.registry._registry import RegistrySettings
from kairox.sandbox import SandboxSettings
from kairox.tools import ToolCall, ToolProvider

SERVER = Path(__file__).resolve().parents[1] / "tests" / "servers" / "lean_server.py"
NAME = "lean"

Call = Callable[[str], Awaitable[str]]


async def gate_registry(
    ws: Path, home: Path, provider: ToolProvider, *, listening: bool = True
) -> tuple[ToolRegistry, RecordingSink | None]:
    """The registry as the runtime builds it, with ``provider``'s tools and an allow rule for the server; and the
    sink that records its events, or (``listening`` false) none: its events go nowhere."""
    rules = [Rule(action="allow", pattern=f"mcp__{NAME}__*")]
    policy = PolicySettings.from_config(PolicyConfig(), workspace=ws, rules=rules, home=home)
    sandbox = SandboxSettings(
        mode=policy.sandbox, writable_roots=policy.writable_roots, network_access=policy.network_access
    )
    settings = RegistrySettings(policy=policy, sandbox=sandbox, spill_dir=home / "spill")
    recording = RecordingSink() if listening else None
    sink: EventSink = FanoutSink([recording]) if recording is not None else NullSink()
    approver = NonInteractiveApprover()
    hooks = HookRegistry(workspace=ws, sandbox=sandbox, approver=approver, events=sink)
    registry = await build_registry(settings, approver=approver, hooks=hooks, events=sink)
    await registry.add_provider(provider)
    return registry, recording


async def sequential(call: Call, calls: int) -> tuple[float, float]:
    """p50 latency and CPU of this process per call, in microseconds."""
    times = []
    cpu0 = time.process_time()
    for i in range(calls):
        t0 = time.perf_counter_ns()
        await call(f"hello {i}")
        times.append(time.perf_counter_ns() - t0)
    cpu = (time.process_time() - cpu0) / calls * 1e6
    return statistics.median(times) / 1000, cpu


async def concurrent(call: Call, calls: int, conc: int) -> float:
    """Calls per second with ``conc`` tasks sharing the session."""
    per_task = max(1, calls // conc)

    async def worker() -> None:
        for i in range(per_task):
            await call(f"hello {i}")

    t0 = time.perf_counter()
    await asyncio.gather(*(worker() for _ in range(conc)))
    return per_task * conc / (time.perf_counter() - t0)


async def measure(
    paths: dict[str, Call], rounds: int, calls: int, conc: int, *, each_round: Callable[[], None] = lambda: None
) -> dict[str, dict[str, list[float]]]:
    """Per path and round: sequential p50 and CPU per call, and ``conc``-way calls/s; the paths alternate within
    each round (paired), after one warm pass of each. ``each_round`` runs before every path's round."""
    figures: dict[str, dict[str, list[float]]] = {k: {"p50": [], "cpu": [], "conc": []} for k in paths}
    for call in paths.values():  # warm every path (caches, the server's pages)
        await sequential(call, calls // 5)
        await concurrent(call, calls // 5, conc)
    for _ in range(rounds):
        for name, call in paths.items():
            each_round()
            p50, cpu = await sequential(call, calls)
            figures[name]["p50"].append(p50)
            figures[name]["cpu"].append(cpu)
            figures[name]["conc"].append(await concurrent(call, calls, conc))
    return figures


async def main(rounds: int, calls: int, conc: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        ws, home = Path(tmp) / "ws", Path(tmp) / "home"
        ws.mkdir()
        home.mkdir()
        config = McpServerConfig(command=sys.executable, args=[str(SERVER)])
        async with McpClient(NAME, config, workspace=ws, home=home) as client:
            if client.status is not ServerStatus.READY:
                raise SystemExit(f"the server did not start: {client.reason}")
            adapter = McpToolAdapter(client)
            registry, _recording = await gate_registry(ws, home, adapter)
            quiet_registry, _ = await gate_registry(ws, home, adapter, listening=False)
            echo = f"mcp__{NAME}__echo"

            async def bare(message: str) -> str:
                result = await client.call_tool("echo", {"message": message})
                assert not result.is_error, result.text_content()
                return result.text_content()

            async def gate(message: str) -> str:
                result = await registry.call(ToolCall(name=echo, arguments={"message": message}))
                assert not result.is_error, result.text_content()
                return result.text_content()

            async def quiet(message: str) -> str:
                result = await quiet_registry.call(ToolCall(name=echo, arguments={"message": message}))
                assert not result.is_error, result.text_content()
                return result.text_content()

            figures = await measure({"bare": bare, "gate": gate, "quiet": quiet}, rounds, calls, conc)
    med = {k: {m: statistics.median(v) for m, v in f.items()} for k, f in figures.items()}
    print(
        f"{rounds} rounds x {calls} calls, server {SERVER.name}, "
        "medians (÷ bare; for calls/s >1 means faster than bare)"
    )
    print("gate: events recorded (as the runtime does); quiet: the same gate, nothing listening to its events")
    print(f"{'measure':<26}{'bare':>10}{'gate':>10}{'ratio':>8}{'quiet':>10}{'ratio':>8}")
    for label, key in (("1-way p50 µs", "p50"), ("1-way client CPU µs/call", "cpu"), (f"{conc}-way calls/s", "conc")):
        b, g, q = med["bare"][key], med["gate"][key], med["quiet"][key]
        print(f"{label:<26}{b:>10.1f}{g:>10.1f}{g / b:>7.2f}x{q:>10.1f}{q / b:>7.2f}x")


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--calls", type=int, default=1000)
    parser.add_argument("--conc", type=int, default=8)
    options = parser.parse_args()
    asyncio.run(main(options.rounds, options.calls, options.conc))
