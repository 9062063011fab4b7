"""Runs a command and takes its whole process group down when the host dies.

The kernel's parent-death signal reaches only the direct child of the host. A command started through a
wrapper (``npx``, ``uvx``, a shell) has grandchildren it would not reach, so the host starts this small
guard instead: the guard is the group leader, waits for the command, and on the host's death kills the
group, grandchildren included; when the command ends, what it left in the group ends with it. Used for MCP stdio servers, language servers, debug adapters and every command
that runs outside bubblewrap (whose ``--die-with-parent`` does the same job inside the sandbox). Standard library only: it runs as ``python -I -S _guard.py --parent HOST_PID -- CMD ARGS``.
"""

import contextlib
import ctypes
import os
import signal
import subprocess
import sys

_PR_SET_PDEATHSIG = 1


def _others() -> set[int]:
    """Every other process of the guard's group, and every process below the guard (a child that started a
    session of its own, as a debug adapter does, included), from ``/proc``."""
    me = os.getpid()
    # the group is the guard's only when it leads it (started in a session of its own); else it is the caller's
    group = me if os.getpgid(0) == me else None
    children: dict[int, list[int]] = {}
    found: set[int] = set()
    try:
        entries = os.listdir("/proc")
    except OSError:
        return found
    for entry in entries:
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat", "rb") as handle:
                    fields = handle.read().rsplit(b")", 1)[1].split()
                parent, pgid = int(fields[1]), int(fields[2])
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(parent, []).append(int(entry))
            if pgid == group:
                found.add(int(entry))
    stack = [me]
    while stack:
        for child in children.get(stack.pop(), []):
            found.add(child)
            stack.append(child)
    found.discard(me)
    return found


def _kill_others() -> None:
    # a second look catches what was being forked during the first
    for _round in range(2):
        for pid in _others():
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)


def _kill_group(*_: object) -> None:
    _kill_others()
    if os.getpgid(0) == os.getpid():
        os.killpg(0, signal.SIGKILL)
    os._exit(137)


def _die_with_guard() -> None:  # runs in the server between fork and exec
    with contextlib.suppress(Exception):
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)


def main(argv: list[str]) -> int:
    parent = None
    if len(argv) >= 2 and argv[0] == "--parent":
        parent, argv = int(argv[1]), argv[2:]
    if argv and argv[0] == "--":
        argv = argv[1:]
    if not argv:
        sys.stderr.write("kairox guard: no command given\n")
        return 2
    signal.signal(signal.SIGUSR1, _kill_group)
    if sys.platform.startswith("linux"):
        with contextlib.suppress(Exception):
            ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGUSR1, 0, 0, 0)
    if os.getppid() != (parent or os.getppid()) or os.getppid() == 1:  # the host died before the signal was armed
        _kill_group()
    try:
        linux = sys.platform.startswith("linux")
        server = subprocess.Popen(argv, restore_signals=True, preexec_fn=_die_with_guard if linux else None)
    except OSError as exc:
        sys.stderr.write(f"cannot start {argv[0]!r}: {exc.strerror or exc}\n")
        return 127
    # SIGTERM goes to the whole group; the guard outlives its server only long enough to report the exit code
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    # drop the guard's copies of the pipes, so the host sees end of file when the server exits
    devnull = os.open(os.devnull, os.O_RDWR)
    os.dup2(devnull, 0)
    os.dup2(devnull, 1)
    code = server.wait()
    # nothing the server left in the group (a wrapper's helper) outlives it: the host closing the server's
    # pipes as it dies can end the server before the parent-death signal reaches the guard
    _kill_others()
    if code < 0:  # die of the same signal, so the host reads the exit status the server itself had
        with contextlib.suppress(OSError, ValueError):  # SIGKILL's handler cannot be set (nor needs to be)
            signal.signal(-code, signal.SIG_DFL)
        os.kill(os.getpid(), -code)
    return code if code >= 0 else 128 - code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
