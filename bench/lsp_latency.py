"""Median latency of ``lsp.definition`` through the ToolRegistry gate, against the same ``textDocument/definition``
sent by a bare framing client over the same warm server's connection, as a ratio.

    .venv/bin/python bench/lsp_latency.py [--server jedi|pylsp] [--rounds 200]

The gated call adds: argument validation, policy, hooks (none here), path resolution, syncing the document
with the disk, converting columns and rendering ``path:line:col: text``.

The timed rounds start once the files' statuses have settled (``kairox.lsp._files.SETTLE_NS`` after they were
written), so the gated call keeps what it read; the last lines time the provider's ``call_tool`` without the gate (what
the LSP side adds, apart from validation, policy and the rest of the gate) and the gated call on a file
rewritten (with the same text) before each call, where the tools read the file again.
"""

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

import anyio

from kairox.config import LspServerConfig
from kairox.lsp import LspToolProvider
from kairox.policy import NonInteractiveApprover, PolicySettings
from kairox.registry import ToolRegistry
from kairox.registry._registry import RegistrySettings
from kairox.tools import CallContext, ToolCall

BIN = Path(sys.executable).parent
try:
    from kairox._util._filestate import SETTLE_NS
except ImportError:  # a Kairox that keeps no texts: the same wait, so runs of both compare
    SETTLE_NS = 2_000_000_000
SETTLE_S = SETTLE_NS / 1e9

LIBRARY = """class Greeter:
    def greet(self, name: str) -> str:
        return "Hello, " + name


def make() -> Greeter:
    return Greeter()
"""
CALLER = """from lib import Greeter, make

print(make().greet("wörld"))
"""


async def measure(server: str, rounds: int) -> None:
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder).resolve()
        (root / "lib.py").write_text(LIBRARY)
        (root / "main.py").write_text(CALLER)
        written = time.monotonic()
        command = {"jedi": "jedi-language-server", "pylsp": "pylsp"}[server]
        config = LspServerConfig(command=str(BIN / command), file_patterns=["*.py"])
        settings = RegistrySettings(policy=PolicySettings(workspace=root))
        registry = ToolRegistry(settings, approver=NonInteractiveApprover())
        async with LspToolProvider({server: config}, workspace=root) as provider:
            await registry.add_provider(provider)
            call = ToolCall(name="lsp.definition", arguments={"path": "main.py", "line": 3, "column": 7})
            warm = await registry.call(call)  # starts the server and opens the document
            assert warm.text_content() == "lib.py:6:5: def make() -> Greeter:", warm.text_content()
            client = provider.servers[server].client
            assert client is not None and client.rpc is not None
            rpc = client.rpc
            params = {
                "textDocument": {"uri": (root / "main.py").as_uri()},
                "position": {"line": 2, "character": 6},
            }
            await anyio.sleep(max(0.0, SETTLE_S - (time.monotonic() - written)))
            for _ in range(20):  # let both paths settle
                await registry.call(call)
                await rpc.request("textDocument/definition", params)
            gated: list[float] = []
            bare: list[float] = []
            fresh: list[float] = []
            ungated: list[float] = []
            context = CallContext(call_id="bench", workspace=root)
            for _ in range(rounds):
                start = time.perf_counter()
                await registry.call(call)
                gated.append(time.perf_counter() - start)
                start = time.perf_counter()
                await provider.call_tool(call.name, dict(call.arguments), context)
                ungated.append(time.perf_counter() - start)
                start = time.perf_counter()
                await rpc.request("textDocument/definition", params)
                bare.append(time.perf_counter() - start)
            for _ in range(rounds // 4):
                (root / "main.py").write_text(CALLER)
                start = time.perf_counter()
                await registry.call(call)
                fresh.append(time.perf_counter() - start)
    gated_ms, bare_ms = statistics.median(gated) * 1000, statistics.median(bare) * 1000
    fresh_ms, ungated_ms = statistics.median(fresh) * 1000, statistics.median(ungated) * 1000
    print(f"server {server}, {rounds} rounds on a warm server")
    print(f"  bare framing client  median {bare_ms:.2f} ms")
    print(f"  lsp.definition gated median {gated_ms:.2f} ms")
    print(f"  ratio gated/bare     {gated_ms / bare_ms:.2f}")
    print(f"  the provider alone (call_tool, no gate): median {ungated_ms:.2f} ms ({ungated_ms / bare_ms:.2f}x bare)")
    print(f"  gated, file rewritten before each call: median {fresh_ms:.2f} ms ({fresh_ms / bare_ms:.2f}x bare)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--server", choices=["jedi", "pylsp"], default="jedi")
    parser.add_argument("--rounds", type=int, default=200)
    args = parser.parse_args()
    anyio.run(measure, args.server, args.rounds)


if __name__ == "__main__":
    main()
