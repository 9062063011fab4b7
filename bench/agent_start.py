"""``kairox run`` from process start to its first model request, and from the answer to process exit, on both
wires, against a bare client process measured in the same rounds, as ratios.

Each run is a fresh ``kairox run PROMPT --json`` on a temporary workspace with one stdio MCP server
(tests/servers/lean_server.py, standard library only, behind a wrapper that notes when its process started) and
a scripted model server on 127.0.0.1 (tests/servers/model_server.py): the model asks for ``echo`` four times,
then answers "done". All times are ``time.monotonic()`` (one clock for every process of the machine):

- start -> MCP server started: when the server's Python began running;
- start -> first model request: when the scripted server received it;
- answer -> exit: the last reply fully sent -> the process reaped;
- total: start -> reaped.

The baseline is a process that imports ``httpx`` and streams one request from the same kind of scripted server
(what any Python client of a model must pay at least); the ratios are Kairox's figure over the baseline's of the
same round. ``--against DIR`` runs a second source tree (a checkout or an unpacked ``git archive``) in the same
rounds, with ``DIR/src`` first on ``PYTHONPATH``. Runs are interleaved; the first round is a warm-up (it also writes
the bytecode, into a private cache, so every tree runs byte-compiled as an installed package does); medians.

Run: .venv/bin/python bench/agent_start.py [--rounds 7] [--wires openai,anthropic] [--against /tmp/main-tree]
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.servers.model_server import ScriptedModelServer  # noqa: E402

CALLS = 4
PROMPT = "Call the echo tool four times, then say done."
MCP_WRAPPER = (
    "import runpy, sys, time\n"
    "with open(sys.argv[1], 'a') as log:\n    log.write(f'{{time.monotonic()}}\\n')\n"
    "sys.argv = [{server!r}]\nrunpy.run_path({server!r}, run_name='__main__')\n"
)
BASELINE = (
    "import sys, httpx\n"
    "with httpx.Client() as client:\n"
    "    with client.stream('POST', sys.argv[1], json={'model': 'm', 'stream': True, 'max_tokens': 16,\n"
    "                       'messages': [{'role': 'user', 'content': 'hi'}]}) as response:\n"
    "        for _ in response.iter_lines():\n            pass\n"
)


class TimedServer(ScriptedModelServer):
    """The scripted server, noting when each request arrived and when its reply was fully written."""

    def __init__(self, wire: str, script: list[dict[str, Any]]) -> None:
        super().__init__(wire, script, idle_timeout=60)
        self.received: list[float] = []
        self.replied: list[float] = []

    async def _respond(self, method: str, path: str, headers: dict[str, str], raw: bytes, writer: Any) -> None:
        self.received.append(time.monotonic())
        await super()._respond(method, path, headers, raw, writer)
        self.replied.append(time.monotonic())


def steps() -> list[dict[str, Any]]:
    """Four echo calls, each request after the first expecting the previous call's echo, then "done"."""
    out: list[dict[str, Any]] = []
    for i in range(CALLS + 1):
        step: dict[str, Any] = (
            {"reply": "text", "text": "done"}
            if i == CALLS
            else {
                "reply": "tool_calls",
                "calls": [{"id": f"call_{i}", "name": "mcp__lean__echo", "arguments": {"message": f"echo {i}"}}],
            }
        )
        if i:
            step["expect"] = {"tool_results": {f"call_{i - 1}": f"echo {i - 1}"}}
        out.append(step)
    return out


def run_kairox(
    tree: Path | None, wire: str, root: Path, wrapper: Path, env: dict[str, str], stderr: list[str] | None = None
) -> dict[str, float]:
    """One run's figures (ms); its stderr is appended to ``stderr`` when given."""
    home, ws, log = root / "home", root / "ws", root / "mcp-started.log"
    (ws / ".git").mkdir(parents=True, exist_ok=True)
    home.mkdir(exist_ok=True)
    log.write_text("")
    with TimedServer(wire, steps()) as server:
        (home / "kairox.toml").write_text(
            'model = "bench-model"\nmodel_provider = "bench"\n\n'
            f'[model_providers.bench]\nbase_url = "{server.base_url}"\n'
            f'api_key_env = "BENCH_API_KEY"\nwire_api = "{"anthropic" if wire == "anthropic" else "chat"}"\n\n'
            f"[mcp_servers.lean]\ncommand = {json.dumps(sys.executable)}"
            f"\nargs = {json.dumps([str(wrapper), str(log)])}\n\n"
            '[policy.rules]\nallow = ["mcp__lean__echo"]\n'
        )
        child_env = {
            **env,
            "KAIROX_HOME": str(home),
            "KAIROX_SYSTEM_CONFIG": str(home / "none.toml"),
            "BENCH_API_KEY": "dummy",
        }
        if tree is not None:
            child_env["PYTHONPATH"] = str(tree / "src")
        command = [
            sys.executable,
            "-c",
            "import sys; from kairox.cli import main; sys.argv[0] = 'kairox'; sys.exit(main())",
        ]
        started = time.monotonic()
        done = subprocess.run(
            [*command, "--workspace", str(ws), "run", PROMPT, "--json"],
            env=child_env,
            cwd=ws,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=60,
        )
        ended = time.monotonic()
    if done.returncode != 0 or len(server.received) != CALLS + 1 or server.failures:
        raise SystemExit(
            f"kairox run failed (exit {done.returncode}, {len(server.received)}"
            f" requests, {server.failures}):\n{done.stderr[-2000:]}"
        )
    if stderr is not None:
        stderr.append(done.stderr)
    spawned = [float(x) for x in log.read_text().split()]
    return {
        "mcp_started": (spawned[0] - started) * 1000 if spawned else float("nan"),
        "first_request": (server.received[0] - started) * 1000,
        "exit": (ended - server.replied[-1]) * 1000,
        "total": (ended - started) * 1000,
    }


def run_baseline(env: dict[str, str]) -> dict[str, float]:
    with TimedServer("openai", [{"reply": "text", "text": "done"}]) as server:
        started = time.monotonic()
        subprocess.run(
            [sys.executable, "-c", BASELINE, server.base_url + "/chat/completions"],
            env=env,
            check=True,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=60,
        )
        ended = time.monotonic()
    return {
        "first_request": (server.received[0] - started) * 1000,
        "exit": (ended - server.replied[-1]) * 1000,
        "total": (ended - started) * 1000,
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--wires", default="openai,anthropic")
    parser.add_argument("--against", type=Path, help="another source tree (with src/kairox) to run beside this one")
    args = parser.parse_args()
    wires = args.wires.split(",")
    trees: dict[str, Path | None] = {"this": ROOT}
    if args.against is not None:
        trees["against"] = args.against.resolve()
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "KAIROX_HOME", "PYTHONDONTWRITEBYTECODE")}
    rows: dict[tuple[str, str], list[dict[str, float]]] = {(t, w): [] for t in trees for w in wires}
    base: list[dict[str, float]] = []
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        env["PYTHONPYCACHEPREFIX"] = str(
            root / "pycache"
        )  # both trees byte-compiled (the warm-up writes it), as installed
        (root / "wrapper.py").write_text(MCP_WRAPPER.format(server=str(ROOT / "tests" / "servers" / "lean_server.py")))
        for round_no in range(args.rounds + 1):
            figures = run_baseline(env)
            if round_no:
                base.append(figures)
            for tree_name, tree in trees.items():
                for wire in wires:
                    result = run_kairox(tree, wire, root / f"{tree_name}-{wire}", root / "wrapper.py", env)
                    if round_no:
                        result["ratio_first"] = result["first_request"] / figures["first_request"]
                        result["ratio_total"] = result["total"] / figures["total"]
                        rows[tree_name, wire].append(result)
            print(f"round {round_no}{' (warm-up)' if not round_no else ''} done", file=sys.stderr)

    def med(values: list[dict[str, float]], key: str) -> float:
        return statistics.median(v[key] for v in values)

    print(
        f"\n{args.rounds} rounds after a warm-up, interleaved; medians "
        "(ms). The baseline: `import httpx` + one streamed request"
    )
    print(
        f"{'':<22}{'MCP started':>12}{'1st request':>12}{'answer->exit':>13}"
        f"{'total':>9}{'1st ÷ base':>12}{'total ÷ base':>13}"
    )
    print(
        f"{'baseline':<22}{'':>12}{med(base, 'first_request'):>12.0f}"
        f"{med(base, 'exit'):>13.0f}{med(base, 'total'):>9.0f}{'1.00x':>12}{'1.00x':>13}"
    )
    for (tree_name, wire), values in rows.items():
        label = f"{tree_name} {wire}" if len(trees) > 1 else f"kairox {wire}"
        print(
            f"{label:<22}{med(values, 'mcp_started'):>12.0f}"
            f"{med(values, 'first_request'):>12.0f}{med(values, 'exit'):>13.0f}"
            f"{med(values, 'total'):>9.0f}{med(values, 'ratio_first'):>11.2f}x{med(values, 'ratio_total'):>12.2f}x"
        )
    if len(trees) > 1:
        print("\nthis tree over the other, same round (median):")
        for wire in wires:
            ours, theirs = rows["this", wire], rows["against", wire]
            for key in ("first_request", "exit", "total"):
                ratio = statistics.median(a[key] / b[key] for a, b in zip(ours, theirs, strict=True))
                print(f"  {wire:<10}{key:<15}{ratio:>6.2f}x")


if __name__ == "__main__":
    main()
