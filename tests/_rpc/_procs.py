"""Process checks shared by the _rpc, LSP and DAP tests: is a pid gone, and which processes a test left behind."""

import os
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.helpers import forks_pid


def _stat(pid: int | str) -> list[str] | None:
    try:
        with open(f"/proc/{pid}/stat") as handle:
            return handle.read().rsplit(")", 1)[1].split()
    except (FileNotFoundError, ProcessLookupError, IndexError):
        return None


def process_gone(pid: int) -> bool:
    """True when ``pid`` no longer runs (absent, or a zombie nobody waits for)."""
    fields = _stat(pid)
    return fields is None or fields[0] == "Z"


def children_of(pid: int) -> list[int]:
    """Live (not zombie) children of ``pid``."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            fields = _stat(entry)
            if fields is not None and fields[0] != "Z" and int(fields[1]) == pid:
                found.append(int(entry))
    return found


def descendants(pid: int) -> list[int]:
    """Live processes below ``pid``, nearest first."""
    found: list[int] = []
    queue = [pid]
    while queue:
        children = children_of(queue.pop(0))
        found += children
        queue += children
    return found


def host_pid(sandboxed: int, ancestor: int) -> int:
    """The host's pid of the process below ``ancestor`` that its sandbox (a pid namespace of its own) calls
    ``sandboxed``: what ``os.getpid()`` says inside bwrap is not a pid the host can look up."""
    for pid in descendants(ancestor):
        try:
            with open(f"/proc/{pid}/status") as handle:
                spaces = next((line.split()[1:] for line in handle if line.startswith("NSpid:")), [])
        except OSError:
            continue
        if len(spaces) > 1 and int(spaces[-1]) == sandboxed:
            return pid
    raise LookupError(f"no process below {ancestor} is pid {sandboxed} in a namespace of its own")


def processes_in(folder: Path) -> list[int]:
    """Live processes whose working directory is ``folder`` or below it (servers, adapters, debuggees)."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit() and int(entry) != os.getpid():
            try:
                cwd = Path(os.readlink(f"/proc/{entry}/cwd"))
            except OSError:
                continue
            fields = _stat(entry)
            if fields is not None and fields[0] != "Z" and cwd.is_relative_to(folder):
                found.append(int(entry))
    return found


def our_children() -> list[int]:
    """The test process's children, and those of its ``kairox`` fork server (``tests.helpers``), which lives as long
    as the test process (so it is not one of them)."""
    forks = forks_pid()
    children = [pid for pid in children_of(os.getpid()) if pid != forks]
    return children + (children_of(forks) if forks is not None else [])


@pytest.fixture(autouse=True)
def no_process_left(tmp_path: Path) -> Iterator[None]:
    """Fails a test after which a child of the test process, or any process working in its tmp folder, runs."""
    before = set(our_children())
    yield
    # a process that is still exiting (a debuggee its adapter ends) may finish; one that lives on is a leak
    deadline = time.monotonic() + 5.0
    while True:
        left = [pid for pid in our_children() if pid not in before and not process_gone(pid)]
        left += [pid for pid in processes_in(tmp_path.resolve()) if pid not in left]
        if not left or time.monotonic() > deadline:
            break
        time.sleep(0.05)
    assert left == [], f"processes left behind: {[(pid, _command(pid)) for pid in left]}"


def _command(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as handle:
            return handle.read().replace(b"\0", b" ").decode(errors="replace").strip()
    except OSError:
        return "?"
