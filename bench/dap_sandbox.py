"""The cost of running a debugged program in the sandbox.

One registry per sandbox policy over the same workspace, timed side by side per round: ``danger_full_access``
(baseline: the adapter starts as before, without bwrap), ``workspace_write`` and ``read_only`` (the adapter, and
the program through it, under bwrap). Prints the median over ROUNDS rounds of ``dap.launch`` of a short program
run to its end through the registry (adapter start, launch, program run, adapter stop), in milliseconds, with the
ratio to the baseline.

Run: .venv/bin/python bench/dap_sandbox.py [ROUNDS]
"""

import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path

from kairox.config import DapServerConfig, PolicyConfig, SandboxPolicy
from kairox.dap import DapToolProvider
from kairox.policy import NonInteractiveApprover, PolicySettings
from kairox.registry import ToolRegistry
from kairox.registry._registry import RegistrySettings
from kairox.sandbox import SandboxSettings
from kairox.tools import ToolCall

MODES = (SandboxPolicy.DANGER_FULL_ACCESS, SandboxPolicy.WORKSPACE_WRITE, SandboxPolicy.READ_ONLY)


def registry(ws: Path, mode: SandboxPolicy) -> ToolRegistry:
    policy = PolicySettings.from_config(PolicyConfig(sandbox_policy=mode), workspace=ws, temp_dir=ws / "tmp")
    sandbox = SandboxSettings(mode=policy.sandbox, writable_roots=policy.writable_roots)
    return ToolRegistry(
        RegistrySettings(policy=policy, sandbox=sandbox, spill_dir=ws / "spill"), approver=NonInteractiveApprover()
    )


async def main(rounds: int) -> None:
    config = DapServerConfig(command=sys.executable, args=["-m", "debugpy.adapter"], languages=["python"])
    with tempfile.TemporaryDirectory() as tmp:
        ws = Path(tmp) / "ws"
        (ws / "tmp").mkdir(parents=True)
        (ws / "program.py").write_text("total = sum(range(1000))\nprint(total)\n")
        async with DapToolProvider({"debugpy": config}, workspace=ws) as dap:
            gates = {mode: registry(ws, mode) for mode in MODES}
            for gate in gates.values():
                await gate.add_provider(dap)
            times: dict[SandboxPolicy, list[float]] = {mode: [] for mode in MODES}
            for _ in range(rounds + 1):  # the first round warms up (imports, the bwrap probe)
                for mode, gate in gates.items():
                    started = time.perf_counter()
                    result = await gate.call(ToolCall(name="dap.launch", arguments={"program": "program.py"}))
                    times[mode].append((time.perf_counter() - started) * 1000)
                    if "exit code 0" not in result.text_content():
                        raise SystemExit(f"{mode}: {result.text_content()}")
    base = statistics.median(times[MODES[0]][1:])
    for mode in MODES:
        median = statistics.median(times[mode][1:])
        print(f"{mode:20} {median:8.1f} ms  x{median / base:.2f}")


if __name__ == "__main__":
    asyncio.run(main(int(sys.argv[1]) if len(sys.argv) > 1 else 10))
