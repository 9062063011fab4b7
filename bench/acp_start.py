"""``kairox acp`` from spawn to ``initialize`` answered and to the first ``session/update`` of a new session, against
``kairox run``'s start to its first model request, in the same rounds, as ratios.

Each round runs both on a fresh temporary workspace with one stdio MCP server (tests/servers/lean_server.py,
standard library only) and a scripted model server on 127.0.0.1 (tests/servers/model_server.py). The editor side is
a bare JSON-lines client (what an editor pays is its own): it writes ``initialize``, then ``session/new`` once that
is answered, and notes when each answer and the first ``session/update`` (the slash commands, sent once the session
is open) arrive. ``kairox run PROMPT`` is timed to the scripted server receiving its first request (the session is
open then too). All times are ``time.monotonic()``; the first round is a warm-up (it also writes the bytecode into a
private cache, so both run byte-compiled as an installed package does); medians.

Run: .venv/bin/python bench/acp_start.py [--rounds 7]
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

KAIROX = [sys.executable, "-c", "import sys; from kairox.cli import main; sys.argv[0] = 'kairox'; sys.exit(main())"]


class TimedServer(ScriptedModelServer):
    """The scripted server, noting when each request arrived."""

    def __init__(self, script: list[dict[str, Any]]) -> None:
        super().__init__("openai", script, idle_timeout=60)
        self.received: list[float] = []

    async def _respond(self, method: str, path: str, headers: dict[str, str], raw: bytes, writer: Any) -> None:
        self.received.append(time.monotonic())
        await super()._respond(method, path, headers, raw, writer)


def setup(root: Path, base_url: str) -> tuple[Path, dict[str, str]]:
    home, ws = root / "home", root / "ws"
    (ws / ".git").mkdir(parents=True, exist_ok=True)
    home.mkdir(exist_ok=True)
    server = ROOT / "tests" / "servers" / "lean_server.py"
    (home / "kairox.toml").write_text(
        'model = "bench-model"\nmodel_provider = "bench"\n\n'
        f'[model_providers.bench]\nbase_url = "{base_url}"\napi_key_env = "BENCH_API_KEY"\n\n'
        f"[mcp_servers.lean]\ncommand = {json.dumps(sys.executable)}\nargs = {json.dumps([str(server)])}\n"
    )
    env = {**os.environ, "KAIROX_HOME": str(home), "KAIROX_SYSTEM_CONFIG": str(home / "none.toml")}
    env["BENCH_API_KEY"] = "dummy"
    return ws, env


def run_acp(root: Path) -> dict[str, float]:
    ws, env = setup(root, "http://127.0.0.1:9/v1")  # never asked: no prompt is sent
    started = time.monotonic()
    proc = subprocess.Popen(
        [*KAIROX, "acp"], cwd=ws, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL
    )
    assert proc.stdin is not None and proc.stdout is not None

    def send(message: dict[str, Any]) -> None:
        assert proc.stdin is not None
        proc.stdin.write((json.dumps({"jsonrpc": "2.0", **message}) + "\n").encode())
        proc.stdin.flush()

    send({"id": 0, "method": "initialize", "params": {"protocolVersion": 1, "clientCapabilities": {}}})
    marks: dict[str, float] = {}
    for line in proc.stdout:
        message = json.loads(line)
        if message.get("id") == 0 and "initialized" not in marks:
            marks["initialized"] = time.monotonic()
            send({"id": 1, "method": "session/new", "params": {"cwd": str(ws), "mcpServers": []}})
        elif message.get("id") == 1:
            if "error" in message:
                raise SystemExit(f"session/new failed: {message['error']}")
            marks["session"] = time.monotonic()
        elif message.get("method") == "session/update":
            marks["update"] = time.monotonic()
            break
    proc.stdin.close()
    proc.wait(timeout=60)
    return {name: (mark - started) * 1000 for name, mark in marks.items()}


def run_kairox(root: Path) -> float:
    with TimedServer([{"reply": "text", "text": "done"}]) as server:
        ws, env = setup(root, server.base_url)
        started = time.monotonic()
        done = subprocess.run(
            [*KAIROX, "run", "Say done."], cwd=ws, env=env, stdin=subprocess.DEVNULL, capture_output=True, timeout=60
        )
    if done.returncode != 0 or not server.received:
        raise SystemExit(f"kairox run failed (exit {done.returncode}):\n{done.stderr.decode()[-2000:]}")
    return (server.received[0] - started) * 1000


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args()
    rows: list[dict[str, float]] = []
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["PYTHONPYCACHEPREFIX"] = str(Path(tmp) / "pycache")
        for round_no in range(args.rounds + 1):
            acp = run_acp(Path(tmp) / f"acp-{round_no}")
            run = run_kairox(Path(tmp) / f"run-{round_no}")
            if round_no:
                rows.append({**acp, "run": run})
            print(f"round {round_no}{' (warm-up)' if not round_no else ''} done", file=sys.stderr)

    def med(key: str) -> float:
        return statistics.median(r[key] for r in rows)

    ratios = [r["update"] / r["run"] for r in rows]
    print(f"\n{args.rounds} rounds after a warm-up, interleaved; medians (ms)")
    print(f"kairox acp: initialize answered {med('initialized'):.0f}, session/new answered {med('session'):.0f}, ")
    print(f"            first session/update {med('update'):.0f}")
    print(f"kairox run: first model request  {med('run'):.0f}")
    print(f"ratio (acp first update / run first request): {statistics.median(ratios):.2f}")
    print(f"ratio (acp initialize answered / run first request): {med('initialized') / med('run'):.2f}")


if __name__ == "__main__":
    main()
