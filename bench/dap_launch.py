"""Where the time of a debug session goes: ``dap.launch`` of a short program with the real debugpy adapter, phase by
phase, without a sandbox (``bench/dap_sandbox.py`` adds the sandbox's cost).

Each round times two calls in a warm worker process: ``dap.launch`` run to the program's end (``end``), and
``dap.launch`` to a breakpoint then ``dap.continue`` to the end (``breakpoint``). The phases are read off the DAP
messages as they pass (adapter spawned, ``initialize`` answered, ``launch`` sent, the ``initialized`` event,
``configurationDone`` answered, the ``launch`` answer, the first program output, the ``exited`` and ``terminated``
events, the adapter reaped, the call returned), in ms from the call's start, medians over ROUNDS rounds.

With ``--baseline SRC`` (a folder holding another revision's ``kairox`` package, e.g. ``git archive main src``
unpacked) a second worker runs that revision on ``PYTHONPATH``; the rounds alternate between the two, and the last
lines give the ratios. ``--attach`` also times, once per revision, how long ``dap.attach`` takes to fail on a port
that refuses and on one that accepts and says nothing (the old waits run about 30 s each).

Run: .venv/bin/python bench/dap_launch.py [--rounds 10] [--baseline SRC] [--attach]
"""

import argparse
import asyncio
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

PROGRAM = """def compute(n):
    return n * 2


print("total", sum(compute(i) for i in range(1000)))
"""
PHASES = (
    "adapter spawned",
    "initialize answered",
    "launch sent",
    "initialized event",
    "configurationDone answered",
    "launch answered",
    "first output",
    "stopped event",
    "exited event",
    "terminated event",
    "adapter reaped",
    "call returned",
)


# --- the worker: one Kairox (this one or the baseline on PYTHONPATH), timing the calls it is asked for -----------


def instrument(marks: dict[str, float]) -> None:
    """Record the first time of each phase in ``marks`` (ms from ``marks["start"]``), at the DAP connection."""
    from kairox._rpc._process import ChildProcess
    from kairox.dap._connection import DapConnection

    def mark(name: str) -> None:
        if "start" in marks and name not in marks:
            marks[name] = (time.perf_counter() - marks["start"]) * 1000

    dispatch, send = DapConnection._dispatch, DapConnection._send
    start, stop = ChildProcess.start, ChildProcess.stop

    async def on_message(self: Any, message: dict[str, Any]) -> None:
        if message.get("type") == "event":
            event = message.get("event")
            body = message.get("body") or {}
            if event == "output" and body.get("category") in ("stdout", "stderr"):
                mark("first output")
            elif f"{event} event" in PHASES:
                mark(f"{event} event")
        elif message.get("type") == "response" and f"{message.get('command')} answered" in PHASES:
            mark(f"{message.get('command')} answered")
        await dispatch(self, message)

    async def on_send(self: Any, message: Any, *args: Any, **kwargs: Any) -> None:
        if isinstance(message, dict) and message.get("command") == "launch":
            mark("launch sent")
        await send(self, message, *args, **kwargs)

    async def on_start(self: Any) -> Any:
        result = await start(self)
        mark("adapter spawned")
        return result

    async def on_stop(self: Any, timeout: float | None = None) -> int | None:
        code = await stop(self, timeout)
        mark("adapter reaped")
        return code

    DapConnection._dispatch = on_message  # type: ignore[method-assign]
    DapConnection._send = on_send  # type: ignore[method-assign]
    ChildProcess.start = on_start  # type: ignore[method-assign]
    ChildProcess.stop = on_stop  # type: ignore[method-assign]


async def serve(workspace: Path) -> None:
    from kairox.config import DapServerConfig
    from kairox.dap import DapToolProvider
    from kairox.errors import ToolCallError
    from kairox.tools import CallContext

    marks: dict[str, float] = {}
    instrument(marks)
    config = DapServerConfig(command=sys.executable, args=["-m", "debugpy.adapter"], languages=["python"])
    context = CallContext(call_id="bench", workspace=workspace)
    loop = asyncio.get_running_loop()
    async with DapToolProvider({"debugpy": config}, workspace=workspace) as dap:

        async def timed(tool: str, arguments: dict[str, Any]) -> tuple[dict[str, float], str]:
            marks.clear()
            marks["start"] = time.perf_counter()
            try:
                text = (await dap.call_tool(tool, arguments, context)).text_content()
            except ToolCallError as exc:
                text = exc.message
            marks["call returned"] = (time.perf_counter() - marks.pop("start")) * 1000
            return dict(marks), text

        while line := await loop.run_in_executor(None, sys.stdin.readline):
            case, _, port = line.strip().partition(" ")
            result: dict[str, Any]
            if case == "end":
                phases, text = await timed("dap.launch", {"program": "program.py"})
                assert "exit code 0" in text, text
                result = {"launch": phases}
            elif case == "breakpoint":
                stop, text = await timed(
                    "dap.launch", {"program": "program.py", "breakpoints": [{"path": "program.py", "line": 2}]}
                )
                assert "Stopped (breakpoint)" in text, text
                ended, text = await timed("dap.continue", {})
                if "Stopped" in text:  # the breakpoint is hit again: clear it and run to the end
                    await dap.call_tool("dap.set_breakpoints", {"clear": ["program.py"]}, context)
                    ended, text = await timed("dap.continue", {})
                assert "exit code 0" in text, text
                result = {"to breakpoint": stop, "continue": ended}
            else:  # refused / silent: seconds until dap.attach failed
                started = time.perf_counter()
                _, text = await timed("dap.attach", {"port": int(port)})
                result = {"seconds": time.perf_counter() - started, "text": text}
            print(json.dumps(result), flush=True)


# --- the runner ----------------------------------------------------------------------------------------------------


class Worker:
    def __init__(self, name: str, workspace: Path, pythonpath: str | None) -> None:
        env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
        if pythonpath:
            env["PYTHONPATH"] = pythonpath
        self.name = name
        self.process = subprocess.Popen(
            [sys.executable, __file__, "--worker", str(workspace)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            env=env,
        )

    def ask(self, case: str) -> dict[str, Any]:
        assert self.process.stdin is not None and self.process.stdout is not None
        self.process.stdin.write(case + "\n")
        self.process.stdin.flush()
        line = self.process.stdout.readline()
        if not line:
            raise SystemExit(f"the {self.name} worker ended")
        result: dict[str, Any] = json.loads(line)
        return result

    def close(self) -> None:
        assert self.process.stdin is not None
        self.process.stdin.close()
        self.process.wait(60)


def median(runs: list[dict[str, Any]], call: str, phase: str) -> float | None:
    values = [run[call][phase] for run in runs if phase in run[call]]
    return statistics.median(values) if values else None


def table(title: str, calls: list[str], runs: dict[str, list[dict[str, Any]]]) -> None:
    names = list(runs)
    for call in calls:
        print(f"\n{title}: {call} (ms from the call's start, median)")
        print(f"{'phase':28}" + "".join(f"{name:>12}" for name in names))
        for phase in PHASES:
            values = [median(runs[name], call, phase) for name in names]
            if all(v is None for v in values):
                continue
            print(f"{phase:28}" + "".join(f"{v:12.1f}" if v is not None else f"{'-':>12}" for v in values))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--baseline", help="a folder with another revision's kairox package, run beside this one")
    parser.add_argument("--attach", action="store_true", help="also time failing attaches (once per revision)")
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        asyncio.run(serve(Path(args.worker)))
        return
    with tempfile.TemporaryDirectory() as tmp:
        workspace = Path(tmp) / "ws"
        workspace.mkdir()
        (workspace / "program.py").write_text(PROGRAM)
        workers = [Worker("this", workspace, None)]
        if args.baseline:
            workers.append(Worker("baseline", workspace, args.baseline))
        ends: dict[str, list[dict[str, Any]]] = {w.name: [] for w in workers}
        stops: dict[str, list[dict[str, Any]]] = {w.name: [] for w in workers}
        try:
            for round_ in range(args.rounds + 1):  # the first round warms up (imports, caches)
                for worker in workers if round_ % 2 else reversed(workers):
                    end, stop = worker.ask("end"), worker.ask("breakpoint")
                    if round_:
                        ends[worker.name].append(end)
                        stops[worker.name].append(stop)
            table("to the end", ["launch"], ends)
            table("to a breakpoint, then on", ["to breakpoint", "continue"], stops)
            if args.baseline:
                print()
                for label, runs, call in (
                    ("dap.launch to the end", ends, "launch"),
                    ("dap.launch to a breakpoint", stops, "to breakpoint"),
                    ("dap.continue to the end", stops, "continue"),
                ):
                    new, old = (
                        median(runs["this"], call, "call returned"),
                        median(runs["baseline"], call, "call returned"),
                    )
                    assert new is not None and old is not None
                    print(f"{label:28} this {new:8.1f} ms  baseline {old:8.1f} ms  x{new / old:.2f}")
            if args.attach:
                print()
                for case in ("refused", "silent"):
                    with socket.socket() as server:
                        server.bind(("127.0.0.1", 0))
                        if case == "silent":
                            server.listen(4)  # the kernel accepts; nothing answers
                        port = server.getsockname()[1]
                        for worker in workers:
                            said = worker.ask(f"{case} {port}")
                            print(
                                f"attach, port {case:8} {worker.name:9} fails "
                                f"after {said['seconds']:6.2f} s: {said['text']}"
                            )
        finally:
            for worker in workers:
                worker.close()


if __name__ == "__main__":
    main()
