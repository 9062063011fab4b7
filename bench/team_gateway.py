"""The team gateway on one machine: calls per second and p50/p99 per call through ``kairox serve --http`` with the
store on PostgreSQL, one replica alone, one behind HAProxy and three behind HAProxy (round robin), plus one
replica on the default SQLite store; then what the store costs per call against the JSON-lines audit.

Clients speak the 2026-07-28 revision (one POST per call, no affinity), each with its own token of a users file;
the upstream is a stdio server whose tool appends a line to a file. Everything binds 127.0.0.1 and stops by itself.
On a 2-core machine the replicas, HAProxy, PostgreSQL and the clients share two cores: three replicas cannot be
faster than one there; the figure shows what the spread costs, not what more machines would give.

Run: .venv/bin/python bench/team_gateway.py [--clients N] [--calls N] [--rows N]
"""

import argparse
import contextlib
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import anyio
import httpx2
from mcp.client.streamable_http import streamable_http_client

from mcp import Client

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.gateway.conftest import Served, start_gateway, trust  # noqa: E402
from tests.gateway.team import haproxy, postgres, team_workspace  # noqa: E402

TOKEN = "bench-token-5d2a"


async def load(url: str, clients: int, calls: int) -> tuple[float, list[float], int]:
    """Total seconds, per-call seconds, errors."""
    latencies: list[float] = []
    errors = 0

    async def worker(n: int) -> None:
        nonlocal errors
        headers = {"Authorization": f"Bearer {TOKEN}"}
        done = 0
        while done < calls:  # a failed request (a balancer's 503 on an overloaded machine) counts, then goes on
            try:
                async with (
                    httpx2.AsyncClient(headers=headers, timeout=60) as http,
                    Client(streamable_http_client(url, http_client=http), mode="auto") as client,
                ):
                    while done < calls:
                        started = time.perf_counter()
                        result = await client.call_tool("mcp__ledger__record", {"tag": f"b{n}-{done}"})
                        latencies.append(time.perf_counter() - started)
                        errors += bool(result.is_error)
                        done += 1
            except Exception:
                errors += 1
                done += 1

    started = time.perf_counter()
    with anyio.fail_after(600):
        async with anyio.create_task_group() as tasks:
            for n in range(clients):
                tasks.start_soon(worker, n)
    return time.perf_counter() - started, latencies, errors


@contextlib.contextmanager
def replicas(root: Path, workspace: Path, store: str | None, count: int, tag: str) -> Iterator[list[Served]]:
    users = root / "users.toml"
    users.write_text(f'bench = "{TOKEN}"\n')
    started: list[Served] = []
    try:
        for n in range(count):
            home = root / f"home-{tag}-{n}"
            trust(workspace, home)
            store_args = ("--store", store) if store else ()
            started.append(
                start_gateway(
                    workspace,
                    home,
                    *store_args,
                    *("--users-file", str(users), "--replica-id", f"{tag}{n}", "--allow-host", "127.0.0.1:*"),
                )
            )
        yield started
    finally:
        for served in started:
            served.stop()


def measured(url: str, clients: int, calls: int) -> tuple[float, list[float], int]:
    """A warm-up round first (each replica's first calls pay for imports and caches), then the measured one."""
    anyio.run(load, url, clients, 5)
    return anyio.run(load, url, clients, calls)


def report(name: str, clients: int, result: tuple[float, list[float], int]) -> float:
    total, latencies, errors = result
    cuts = statistics.quantiles(latencies, n=100)
    rate = len(latencies) / total
    print(
        f"{name:<34} {rate:8.1f} calls/s  p50 {cuts[49] * 1000:7.1f} ms  p99 {cuts[98] * 1000:7.1f} ms  "
        f"errors {errors}  ({clients} clients)"
    )
    return rate


def audit_cost(root: Path, pg_url: str, rows: int) -> None:
    from kairox.gateway import Store
    from kairox.gateway._audit import AuditLog, AuditRecord

    record = AuditRecord(
        client="bench",
        tool="mcp__ledger__record",
        arguments={"tag": "x" * 40},
        decision="allow",
        rule="mcp__ledger__record",
        duration_ms=1.0,
        outcome="ok",
        user="bench",
        replica="r0",
    )
    row = {**record.to_json(), "user_name": "bench"}
    log = AuditLog(root / "audit" / "gateway.jsonl")
    timings: dict[str, float] = {}
    started = time.perf_counter()
    for _ in range(rows):
        log.write(record)
    timings["JSON-lines log (today)"] = (time.perf_counter() - started) / rows
    for name, url in (("SQLite store (default)", f"sqlite:///{root / 'cost.sqlite3'}"), ("PostgreSQL store", pg_url)):
        store = Store(url)
        store.migrate()
        started = time.perf_counter()
        for _ in range(rows):
            store.write_audit(row)
        timings[name] = (time.perf_counter() - started) / rows
        store.close()
    base = timings["JSON-lines log (today)"]
    print(f"\naudit row cost ({rows} rows, one writer):")
    for name, seconds in timings.items():
        print(f"  {name:<24} {seconds * 1e6:8.1f} us/row  {seconds / base:5.1f}x the JSON-lines log")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--calls", type=int, default=40)
    parser.add_argument("--rows", type=int, default=2000)
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="kairox-team-bench-"))
    workspace = team_workspace(root / "ws")
    with contextlib.ExitStack() as cleanup, postgres(durable=True) as pg:  # fsync on, as in production
        cleanup.callback(shutil.rmtree, root, ignore_errors=True)
        rates: dict[str, float] = {}
        with replicas(root, workspace, None, 1, "s") as [one]:
            rates["sqlite"] = report(
                "1 replica, SQLite, direct", args.clients, measured(one.url, args.clients, args.calls)
            )
        with replicas(root, workspace, pg.url, 1, "a") as [one]:
            rates["direct"] = report(
                "1 replica, PostgreSQL, direct", args.clients, measured(one.url, args.clients, args.calls)
            )
            with haproxy([int(one.url.rsplit(":", 1)[1].split("/")[0])], root) as port:
                url = f"http://127.0.0.1:{port}/mcp"
                rates["one"] = report(
                    "1 replica, PostgreSQL, HAProxy", args.clients, measured(url, args.clients, args.calls)
                )
        with replicas(root, workspace, pg.url, 3, "c") as three:
            ports = [int(s.url.rsplit(":", 1)[1].split("/")[0]) for s in three]
            with haproxy(ports, root) as port:
                url = f"http://127.0.0.1:{port}/mcp"
                rates["three"] = report(
                    "3 replicas, PostgreSQL, HAProxy", args.clients, measured(url, args.clients, args.calls)
                )
        print(f"\n3 replicas / 1 replica behind HAProxy: {rates['three'] / rates['one']:.2f}x the calls per second")
        print(f"PostgreSQL / SQLite, 1 replica direct: {rates['direct'] / rates['sqlite']:.2f}x the calls per second")
        audit_cost(root, pg.url, args.rows)


if __name__ == "__main__":
    main()
