"""What Kairox's own MCP session (``mcp/_native.py``) buys at start-up: a fresh process that connects to one
handshake-era stdio server and lists its tools, once with the native session (what ``McpClient`` does) and once
with the SDK's ``Client`` taking every connection (what Kairox would do without ``_native``). Rounds are
interleaved; the figure is the median of spawn -> tools listed, and its ratio paired per round.
Run: .venv/bin/python bench/mcp_native_startup.py [--rounds 7]
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

SERVER = Path(__file__).resolve().parents[1] / "tests" / "servers" / "lean_server.py"

WORKER = r"""
import time, sys, json
began = time.monotonic()
import anyio
from contextlib import AsyncExitStack
from pathlib import Path
from kairox.config import McpServerConfig
from kairox.mcp import McpClient, ServerStatus

class SdkOnly(McpClient):
    # every connection through the SDK's Client, as the code would be without the native session
    async def _connect(self, stack: AsyncExitStack):
        from kairox.mcp._callbacks import ClientCallbacks
        from kairox.mcp._transports import open_stdio
        self._child, _ = await open_stdio(stack, self.config, environ=self.environ, workspace=self.workspace,
                                          base_dir=self.base_dir, log_path=self.log_path, confinement=self.confinement)
        return await self._sdk_session(stack, ClientCallbacks(self.name, self.features, self.events), "legacy", None)

async def main() -> None:
    kind, server, folder = sys.argv[1], sys.argv[2], Path(sys.argv[3])
    cls = McpClient if kind == "native" else SdkOnly
    imported = time.monotonic()
    config = McpServerConfig(command=sys.executable, args=[server])
    async with cls("s", config, workspace=folder, home=folder) as client:
        assert client.status == ServerStatus.READY, client.lifecycle.reason
        assert client.tools, "no tools listed"
        listed = time.monotonic()
        print(json.dumps({"began": began, "imported": imported, "listed": listed, "session": client.session_kind}))

anyio.run(main)
"""


def once(kind: str, folder: Path) -> dict[str, float]:
    spawned = time.monotonic()
    run = subprocess.run(
        [sys.executable, "-c", WORKER, kind, str(SERVER), str(folder)], capture_output=True, text=True, check=False
    )
    if run.returncode != 0:
        raise SystemExit(f"{kind}: {run.stderr[-2000:]}")
    got = json.loads(run.stdout.strip().splitlines()[-1])
    return {
        "import": got["imported"] - got["began"],
        "listed": got["listed"] - spawned,
        "session": got["session"],
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        os.environ["KAIROX_HOME"] = tmp
        once("native", folder), once("sdk", folder)  # warm the file cache
        rows: dict[str, list[dict[str, float]]] = {"native": [], "sdk": []}
        for index in range(args.rounds):
            for kind in ("native", "sdk") if index % 2 == 0 else ("sdk", "native"):
                rows[kind].append(once(kind, folder))
    print(f"cores: {os.cpu_count()}, rounds: {args.rounds} (medians), server: {SERVER.name}")
    for kind, runs in rows.items():
        sessions = {r["session"] for r in runs}
        imported = statistics.median(r["import"] for r in runs) * 1000
        listed = statistics.median(r["listed"] for r in runs) * 1000
        print(
            f"{kind:7} session {'/'.join(sorted(map(str, sessions))):6} import "
            f"{imported:6.0f} ms   spawn -> tools listed {listed:6.0f} ms"
        )
    ratio = statistics.median(s["listed"] / n["listed"] for s, n in zip(rows["sdk"], rows["native"], strict=True))
    print(f"sdk / native (spawn -> tools listed, paired per round): {ratio:.2f}x")


if __name__ == "__main__":
    main()
