"""The cost of the ToolRegistry gate around a no-op tool.

Direct: ``await provider.call_tool(...)``. Gated: ``await registry.call(...)`` on the same provider, with argument
validation, the policy (30 rules, none matching, so every rule is tried), events to a recording sink and the
output cap; no hooks, no approval. Prints the median over ROUNDS batches of CALLS calls, in microseconds per
call, and the gated/direct ratio. For scale, the same for ``fs.read`` of a small file (a real built-in).

Run: .venv/bin/python bench/gate_overhead.py [CALLS]
"""

import asyncio
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path

from kairox._util._json import JsonObject
from kairox.config import PolicyConfig
from kairox.events import RecordingSink
from kairox.policy import NonInteractiveApprover, PolicySettings, Rule
from kairox.registry import ToolRegistry
from kairox.registry._registry import RegistrySettings
from kairox.tools import BuiltinToolProvider, CallContext, ToolCall, ToolProvider, ToolResult, ToolSource, ToolSpec
from kairox.tools._model import READ_ONLY

ROUNDS = 15
SCHEMA: JsonObject = {
    "type": "object",
    "properties": {"message": {"type": "string"}},
    "required": ["message"],
    "additionalProperties": False,
}
RESULT = ToolResult.text("ok")


class NoOpProvider(ToolProvider):
    origin = "bench"

    async def list_tools(self) -> Sequence[ToolSpec]:
        return [
            ToolSpec(
                name="noop",
                description="does nothing",
                input_schema=SCHEMA,
                source=ToolSource.BUILTIN,
                origin="bench",
                permission=READ_ONLY,
            )
        ]

    async def call_tool(self, name: str, arguments: JsonObject, context: CallContext) -> ToolResult:
        return RESULT


async def main(calls: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        ws = Path(tmp)
        rules = [
            Rule(action=action, pattern=f"mcp__server{i}__*", file="kairox.toml", line=i)
            for i, action in enumerate(["deny", "ask", "allow"] * 10)
        ]
        policy = PolicySettings.from_config(PolicyConfig(), workspace=ws, rules=rules)
        sink = RecordingSink()
        registry = ToolRegistry(
            RegistrySettings(policy=policy, spill_dir=ws / "spill"), approver=NonInteractiveApprover(), events=sink
        )
        provider = NoOpProvider()
        await registry.add_provider(provider)
        context = CallContext(call_id="bench", workspace=ws)
        call = ToolCall(name="noop", arguments={"message": "hi"}, call_id="bench")
        assert (await registry.call(call)) == RESULT

        direct, gated = await measure(
            calls, lambda: provider.call_tool("noop", {"message": "hi"}, context), lambda: registry.call(call)
        )
        print(f"no-op direct : {direct * 1e6:8.2f} us per call")
        print(f"no-op gated  : {gated * 1e6:8.2f} us per call")
        print(f"gate overhead: {(gated - direct) * 1e6:8.2f} us per call (median of {ROUNDS} x {calls} calls)")
        print(f"ratio gated/direct (no-op): {gated / direct:.1f}x")

        (ws / "small.txt").write_text("hello\n" * 20)
        builtins = BuiltinToolProvider()
        await registry.add_provider(builtins)
        read = ToolCall(name="fs.read", arguments={"path": "small.txt"}, call_id="bench")
        direct, gated = await measure(
            calls, lambda: builtins.call_tool("fs.read", {"path": "small.txt"}, context), lambda: registry.call(read)
        )
        print(
            f"fs.read direct: {direct * 1e6:8.2f} us per call, gated: "
            f"{gated * 1e6:8.2f} us per call, ratio {gated / direct:.2f}x"
        )


async def measure(
    calls: int, direct_call: Callable[[], Awaitable[object]], gated_call: Callable[[], Awaitable[object]]
) -> tuple[float, float]:
    direct_times, gated_times = [], []
    for _ in range(ROUNDS):
        start = time.perf_counter()
        for _ in range(calls):
            await direct_call()
        direct_times.append((time.perf_counter() - start) / calls)
        start = time.perf_counter()
        for _ in range(calls):
            await gated_call()
        gated_times.append((time.perf_counter() - start) / calls)
    return statistics.median(direct_times), statistics.median(gated_times)


if __name__ == "__main__":
    asyncio.run(main(int(sys.argv[1]) if len(sys.argv) > 1 else 2000))
