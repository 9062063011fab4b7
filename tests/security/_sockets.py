"""Host Unix sockets for the sandbox tests: real servers (``tests/servers/unix_marker.py``) that write a marker for
every connection, a probe command that tries each one, and the check that a sandboxed probe reached none."""

import contextlib
import os
import shlex
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from tests.helpers import NOBODY, as_user

PYTHON = shutil.which("python3", path="/usr/bin:/bin") or sys.executable
"""A Python both users can run inside the sandbox (a virtualenv under /root is private to root)."""
SERVER = Path(__file__).resolve().parents[1] / "servers" / "unix_marker.py"
TEMP = {Path(os.path.realpath(tempfile.gettempdir())), Path("/tmp")}


def outside_temp() -> Path:
    """A new folder that is neither in a temp folder nor in a workspace, which an unprivileged user can enter:
    ``/var/tmp`` (not the temp folder unless ``$TMPDIR`` says so), else the home of a suite not run as root."""
    for base in (Path("/var/tmp"), Path.home()):
        real = Path(os.path.realpath(base))
        if (
            real.is_dir()
            and os.access(real, os.W_OK | os.X_OK)
            and not any(t == real or t in real.parents for t in TEMP)
        ):
            folder = Path(tempfile.mkdtemp(prefix="kairox-hostsock-", dir=real))
            folder.chmod(0o755)
            return folder
    pytest.fail("no writable folder outside the temp folders for the host sockets (/var/tmp or $HOME)")


@dataclass
class HostSocket:
    path: Path
    marker: Path
    process: subprocess.Popen[str]


def serve(path: Path, markers: Path) -> HostSocket:
    missing = [f for f in (path.parent, *path.parent.parents) if not f.exists()]
    for folder in reversed(missing):
        folder.mkdir()
        folder.chmod(0o755)  # the unprivileged user must reach the socket outside the sandbox
    # a file of its own, made now: two servers of one socket name must not share one (markers appear lazily)
    handle, name = tempfile.mkstemp(prefix=f"{path.name}.", suffix=".marker", dir=markers)
    os.close(handle)
    marker = Path(name)
    process = subprocess.Popen(
        [sys.executable, str(SERVER), str(path), str(marker), "--lifetime", "150"], stdout=subprocess.PIPE, text=True
    )
    assert process.stdout is not None and process.stdout.readline() == "ready\n", (
        f"the socket server for {path} did not start"
    )
    return HostSocket(path, marker, process)


def stop(servers: list[HostSocket]) -> None:
    for server in servers:
        server.process.kill()
        server.process.wait(10)
        if server.process.stdout is not None:
            server.process.stdout.close()


def probe(servers: list[HostSocket], *, tools: bool = True) -> str:
    """A shell command that tries every socket with Python, and with socat and nc -U when they are installed
    (unless not ``tools``)."""
    paths = [str(s.path) for s in servers]
    code = (
        "import socket, sys\n"
        "for p in sys.argv[1:]:\n"
        "    try:\n"
        "        socket.socket(socket.AF_UNIX).connect(p); print('reached', p)\n"
        "    except OSError as exc:\n"
        "        print('refused', p, type(exc).__name__)\n"
        "print('probe-ran')\n"
    )
    others = "".join(
        f"command -v socat >/dev/null && socat -u OPEN:/dev/null UNIX-CONNECT:{p} && echo reached-socat; "
        f"command -v nc >/dev/null && nc -U {p} </dev/null && echo reached-nc; "
        for p in paths
        if tools
    )
    return f"{others}{PYTHON} -c {shlex.quote(code)} {' '.join(paths)}"


def unreached(servers: list[HostSocket], said: str, user: str = "root") -> None:
    """The sandboxed probe that printed ``said`` reached no server, while the same probe outside the sandbox, as
    the same user, reaches each one (the probe itself works)."""
    assert "probe-ran" in said, said  # the command ran
    assert "reached" not in said, said
    run = subprocess.run(
        [*as_user(user), "bash", "-c", probe(servers, tools=False)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert run.stdout.count("reached /") == len(servers), run.stdout + run.stderr
    # a server records its connections in order: once the test's own is recorded, every earlier one is too
    for server in servers:
        with socket.socket(socket.AF_UNIX) as last:
            last.connect(str(server.path))
    ours = f"pid={os.getpid()} "
    for _ in range(400):  # the servers write after accepting: a bounded wait, no timing asserted
        if all(s.marker.exists() and ours in s.marker.read_text() for s in servers):
            break
        time.sleep(0.05)
    lines = {str(s.path): s.marker.read_text().splitlines() if s.marker.exists() else [] for s in servers}
    # Python's probe outside, then the test: nothing from the sandbox before them
    assert {path: len(found) for path, found in lines.items()} == {str(s.path): 2 for s in servers}, lines
    assert all(found[-1].startswith(f"connected {ours}") for found in lines.values()), lines


@contextlib.contextmanager
def place_for(user: str, prefix: str) -> Iterator[Path]:
    """A folder holding a workspace (``ws``), a Kairox home (``home``) and a markers folder (``markers``) that
    both users can reach (pytest's own folders are private to root); removed afterwards."""
    base = Path(tempfile.mkdtemp(prefix=prefix, dir="/tmp"))
    base.chmod(0o755)
    for name in ("ws", "home", "markers"):
        (base / name).mkdir()
    (base / "home" / "trusted_workspaces.json").write_text('{"workspaces": {}}')
    if user == "unprivileged" and os.geteuid() == 0:
        for path in (base / "ws", base / "home", base / "home" / "trusted_workspaces.json"):
            os.chown(path, NOBODY, NOBODY)
    try:
        yield base
    finally:
        shutil.rmtree(base, ignore_errors=True)
