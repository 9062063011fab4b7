"""ChildProcess: the whole process group stops, stderr never blocks a child, nothing stays open."""

import os
import sys
from pathlib import Path

import anyio
import pytest
from tests._rpc._procs import process_gone

from kairox._rpc._process import ChildProcess

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(30)]

STUBBORN = """
import os, signal, subprocess, sys, time
signal.signal(signal.SIGTERM, signal.SIG_IGN)
kid = subprocess.Popen([sys.executable, "-c",
    "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); time.sleep(60)"])
sys.stdout.write(f"{kid.pid}\\n"); sys.stdout.flush()
time.sleep(60)
"""

ORPHANING = """
import subprocess, sys
kid = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
sys.stdout.write(f"{kid.pid}\\n"); sys.stdout.flush()
"""


async def test_stop_kills_a_group_that_ignores_sigterm() -> None:
    child = await ChildProcess([sys.executable, "-c", STUBBORN]).start()
    grandchild = int(await child.stdout.readline())
    code = await child.stop(timeout=0.4)
    assert code == -9
    assert process_gone(child.pid) and process_gone(grandchild)


async def test_stop_kills_what_a_leader_that_exited_left_in_its_group() -> None:
    async with ChildProcess([sys.executable, "-c", ORPHANING]) as child:
        grandchild = int(await child.stdout.readline())
        assert await child.wait(10) == 0
        assert not process_gone(grandchild)
    assert process_gone(grandchild)


async def test_a_child_flooding_stderr_is_drained_and_only_the_tail_is_kept() -> None:
    flood = "import sys; sys.stderr.write('e' * 3_000_000 + 'END'); sys.stderr.flush(); print('done')"
    async with ChildProcess([sys.executable, "-c", flood], stderr_limit=1000) as child:
        assert await child.stdout.readline() == b"done\n"
        assert await child.wait(10) == 0
    assert child.stderr.total_bytes == 3_000_003
    assert child.stderr.text() == "e" * 997 + "END"


def _open_files() -> set[str]:
    found = set()
    for fd in os.listdir("/proc/self/fd"):
        try:
            found.add(os.readlink(f"/proc/self/fd/{fd}"))
        except OSError:
            continue
    return found


async def test_a_child_that_cannot_start_leaves_its_stderr_log_closed(tmp_path: Path) -> None:
    log = tmp_path / "server.log"
    child = ChildProcess(["/nonexistent/kairox-test-child"], stderr_log=log)
    with pytest.raises(FileNotFoundError):
        await child.start()
    assert str(log) not in _open_files()
    assert await child.stop() is None


async def test_stderr_is_still_drained_when_its_log_file_cannot_be_written() -> None:
    flood = "import sys; sys.stderr.write('e' * 1_000_000 + 'END'); sys.stderr.flush(); print('done')"
    async with ChildProcess([sys.executable, "-c", flood], stderr_log=Path("/dev/full")) as child:
        with anyio.fail_after(10):
            assert await child.stdout.readline() == b"done\n"
    assert child.stderr.text().endswith("END")


async def test_a_stderr_log_is_capped_and_rotated_so_a_flood_fills_at_most_two_files(tmp_path: Path) -> None:
    log = tmp_path / "logs" / "server.log"
    flood = "import sys; sys.stderr.write('a' * 2500 + 'b' * 1000); sys.stderr.flush(); print('done')"
    async with ChildProcess([sys.executable, "-c", flood], stderr_log=log, stderr_log_limit=1000) as child:
        with anyio.fail_after(10):
            assert await child.stdout.readline() == b"done\n"
    assert sorted(p.name for p in log.parent.iterdir()) == ["server.log", "server.log.1"]
    assert log.with_name("server.log.1").read_text() == "a" * 500 + "b" * 500
    assert log.read_text() == "b" * 500
    assert child.stderr.total_bytes == 3500


LIST_FDS = "import os; print(' '.join(sorted(os.listdir('/proc/self/fd'), key=int)), flush=True); os.read(0, 1)"


async def test_a_guarded_child_holds_its_pipes_only_as_0_1_and_2() -> None:
    """The guard passes the pipes on as the child's standard streams and keeps no stray copy in it: a child that
    closes its input is seen to have closed it, and what it starts inherits nothing more."""
    async with ChildProcess([sys.executable, "-c", LIST_FDS], guarded=True) as child:
        # 3 is the listing's own descriptor of /proc/self/fd
        assert (await child.stdout.readline()).split() == [b"0", b"1", b"2", b"3"]
