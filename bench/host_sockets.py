"""The cost of covering every host Unix socket the kernel lists (``/proc/net/unix``) when a sandboxed command starts.

SOCKETS live sockets are bound in a folder outside the temp folders and the workspace. Four cases, timed side by
side per round, ``shell.exec true`` through the registry (workspace_write, network off):

- baseline: the kernel's list is not read (only the socket folders and the temp walk, as before);
- this machine: the real ``/proc/net/unix``, with the SOCKETS live ones in it (one bwrap mount each);
- live only: a table that lists just the SOCKETS live sockets (their mounts, next to no parsing);
- desktop: the live ones among LINES lines like a desktop's (mostly unnamed and abstract sockets, and paths
  that are gone), so parsing a long table is paid on top of the mounts.

Prints the median over ROUNDS rounds in milliseconds with the ratio to the baseline, and the median time of
reading the table alone (``bound_sockets``).

Run: .venv/bin/python bench/host_sockets.py [SOCKETS] [LINES]
"""

import asyncio
import os
import socket
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import kairox.sandbox._bwrap as sandbox
from kairox.config import PolicyConfig
from kairox.policy import NonInteractiveApprover, PolicySettings
from kairox.registry import ToolRegistry
from kairox.registry._registry import RegistrySettings
from kairox.sandbox import SandboxSettings
from kairox.tools import BuiltinToolProvider, ToolCall

ROUNDS = 15
REAL = sandbox.bound_sockets


def outside_temp() -> Path:
    temp = {Path(os.path.realpath(tempfile.gettempdir())), Path("/tmp")}
    for base in (Path("/var/tmp"), Path.home()):
        real = Path(os.path.realpath(base))
        if os.access(real, os.W_OK) and not any(t == real or t in real.parents for t in temp):
            return Path(tempfile.mkdtemp(prefix="kairox-bench-sockets-", dir=real))
    raise SystemExit("no writable folder outside the temp folders (/var/tmp or $HOME)")


def table(path: Path, live: list[Path], lines: int) -> Path:
    rows = ["Num       RefCount Protocol Flags    Type St Inode Path"]
    rows += [f"0000000000000000: 00000002 00000000 00010000 0001 01 {i} {p}" for i, p in enumerate(live)]
    for i in range(max(0, lines - len(live))):
        kind = i % 10
        tail = f" @/tmp/.X11-unix/X{i}" if kind == 0 else f" /run/user/1000/gone-{i}.sock" if kind == 1 else ""
        rows.append(f"0000000000000000: 00000003 00000000 00000000 0001 03 {100000 + i}{tail}")
    path.write_text("\n".join(rows) + "\n")
    return path


async def registry(ws: Path) -> ToolRegistry:
    policy = PolicySettings.from_config(PolicyConfig(), workspace=ws, temp_dir=ws / "tmp")
    settings = SandboxSettings(mode=policy.sandbox, writable_roots=policy.writable_roots)
    built = ToolRegistry(
        RegistrySettings(policy=policy, sandbox=settings, spill_dir=ws / "spill"), approver=NonInteractiveApprover()
    )
    await built.add_provider(BuiltinToolProvider())
    return built


async def main(count: int, lines: int) -> None:
    outside = outside_temp()
    servers: list[socket.socket] = []
    try:
        live = []
        for i in range(count):
            server = socket.socket(socket.AF_UNIX)
            server.bind(str(outside / f"s{i}.sock"))
            server.listen()
            servers.append(server)
            live.append(outside / f"s{i}.sock")
        with tempfile.TemporaryDirectory() as tmp:
            ws = Path(tmp) / "ws"
            (ws / "tmp").mkdir(parents=True)
            live_table = table(Path(tmp) / "live", live, 0)
            desktop_table = table(Path(tmp) / "desktop", live, lines)
            cases: dict[str, Callable[..., list[Path]]] = {
                "baseline (no kernel list)": lambda table=None, skip=(): [],
                "this machine": REAL,
                f"live only ({count})": lambda table=None, skip=(): REAL(live_table, skip=skip),
                f"desktop ({lines} lines)": lambda table=None, skip=(): REAL(desktop_table, skip=skip),
            }
            built = await registry(ws)
            call = ToolCall(name="shell.exec", arguments={"command": "true"})
            timings: dict[str, list[float]] = {name: [] for name in cases}
            reading: dict[str, list[float]] = {name: [] for name in cases}
            for _ in range(ROUNDS):
                for name, read in cases.items():
                    sandbox.bound_sockets = read  # type: ignore[assignment]
                    start = time.perf_counter()
                    result = await built.call(call)
                    timings[name].append(time.perf_counter() - start)
                    assert not result.is_error, result.text_content()
                    start = time.perf_counter()
                    read(skip=sandbox.socket_folders())
                    reading[name].append(time.perf_counter() - start)
            sandbox.bound_sockets = REAL
            base = statistics.median(timings["baseline (no kernel list)"])
            print(
                f"{count} live sockets outside the temp folders, {len(REAL())}"
                f" path sockets listed here; median of {ROUNDS} rounds"
            )
            for name in cases:
                took = statistics.median(timings[name])
                print(
                    f"{name:28} shell.exec true {took * 1e3:7.2f} ms  x{took / base:5.2f}"
                    f"   table alone {statistics.median(reading[name]) * 1e3:6.2f} ms"
                )
    finally:
        for server in servers:
            server.close()
        for path in outside.iterdir():
            path.unlink()
        outside.rmdir()


if __name__ == "__main__":
    asyncio.run(main(int(sys.argv[1]) if len(sys.argv) > 1 else 200, int(sys.argv[2]) if len(sys.argv) > 2 else 5000))
