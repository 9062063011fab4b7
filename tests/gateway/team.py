"""Real engines for the team-gateway tests, on 127.0.0.1 only: a PostgreSQL cluster from Debian's package in a
temporary folder (run by an unprivileged user when the tests run as root), HAProxy round robin in front of
``kairox serve`` replicas, and a workspace whose one upstream counts its calls in a ledger."""

import contextlib
import glob
import json
import os
import pwd
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

LEDGER_SERVER = Path(__file__).with_name("ledger_server.py")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _wait_port(port: int, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), timeout=1):
            return
        time.sleep(0.1)
    raise AssertionError(f"nothing listens on 127.0.0.1:{port} after {timeout}s")


@dataclass
class Postgres:
    url: str
    port: int


@contextlib.contextmanager
def postgres(*, durable: bool = False) -> Iterator[Postgres]:
    """A throwaway PostgreSQL cluster (initdb, pg_ctl) on 127.0.0.1; fails, never skips, when it is missing.
    Tests run it without fsync; ``durable`` keeps PostgreSQL's defaults (the bench, for honest commit costs)."""
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"))
    assert found, "PostgreSQL is not installed: apt-get install postgresql (.ci/run installs it)"
    bin_dir = Path(found[-1]).parent
    root = Path(tempfile.mkdtemp(prefix="kairox-pg-"))
    prefix: list[str] = []
    if os.geteuid() == 0:  # initdb refuses root: the cluster belongs to the package's own unprivileged user
        owner = pwd.getpwnam("postgres")
        os.chown(root, owner.pw_uid, owner.pw_gid)
        prefix = ["runuser", "-u", "postgres", "--"]
    port = free_port()
    data = root / "data"
    run = {"check": True, "capture_output": True, "text": True, "timeout": 120, "cwd": root}
    try:
        subprocess.run([*prefix, str(bin_dir / "initdb"), "-D", str(data), "-U", "kairox", "--auth=trust"], **run)  # type: ignore[call-overload]
        options = f"-p {port} -k {root} -c listen_addresses=127.0.0.1 -c max_connections=100"
        options += "" if durable else " -c fsync=off"
        subprocess.run(
            [*prefix, str(bin_dir / "pg_ctl"), "-D", str(data), "-o", options, "-l", str(root / "log"), "-w", "start"],
            **run,  # type: ignore[arg-type]
        )
        yield Postgres(url=f"postgresql://kairox@127.0.0.1:{port}/postgres", port=port)
    finally:
        subprocess.run(
            [*prefix, str(bin_dir / "pg_ctl"), "-D", str(data), "-m", "immediate", "-w", "stop"],
            capture_output=True,
            timeout=60,
            cwd=root,
        )
        shutil.rmtree(root, ignore_errors=True)


@contextlib.contextmanager
def haproxy(ports: list[int], workdir: Path) -> Iterator[int]:
    """HAProxy round robin over the replicas' ports, checking ``/healthz``; its own port."""
    binary = shutil.which("haproxy") or "/usr/sbin/haproxy"
    assert os.path.exists(binary), "HAProxy is not installed: apt-get install haproxy (.ci/run installs it)"
    port = free_port()
    servers = "\n".join(
        f"    server r{i} 127.0.0.1:{p} check inter 300 fall 2 rise 2" for i, p in enumerate(ports, start=1)
    )
    config = workdir / "haproxy.cfg"
    config.write_text(
        f"""defaults
    mode http
    timeout connect 2s
    timeout client 120s
    timeout server 120s
    retries 3
    option redispatch
frontend gateway
    bind 127.0.0.1:{port}
    default_backend replicas
backend replicas
    balance roundrobin
    option httpchk GET /healthz
{servers}
"""
    )
    proc = subprocess.Popen([binary, "-f", str(config), "-db"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        _wait_port(port)
        time.sleep(1)  # the first health checks
        yield port
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(10)


def team_workspace(root: Path) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / ".git").mkdir(exist_ok=True)
    (root / "kairox.toml").write_text(
        f"""
[mcp_servers.ledger]
command = {json.dumps(sys.executable)}
args = [{json.dumps(str(LEDGER_SERVER))}, {json.dumps(str(root / "ledger.txt"))}]

[policy.rules]
allow = ["mcp__ledger__record"]
ask = ["mcp__ledger__record(ask*)"]
"""
    )
    return root


def kill_replica(proc: "subprocess.Popen[str]") -> None:
    """SIGKILL, as when a node is lost: the replica and every process below it, at once."""
    from tests.gateway.conftest import descendants

    for pid in [proc.pid, *descendants(proc.pid)]:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    proc.wait(10)
