"""Runs a command and takes its whole process group down when the host dies.

The kernel's parent-death signal reaches only the direct child of the host. A command started through a
wrapper (``npx``, ``uvx``, a shell) has grandchildren it would not reach, so the host starts this small
guard instead: the guard is the group leader, waits for the command, and on the host's death kills the
group, grandchildren included. Used for MCP stdio servers and for every command that runs outside bubblewrap
(whose ``--die-with-parent`` does the same job inside the sandbox). Standard library only: it runs as ``python -I -S _guard.py --parent HOST_PID -- CMD ARGS``.
"""

import contextlib
import ctypes
import os
import signal
import subprocess
import sys

_PR_SET_PDEATHSIG = 1


def _kill_group(*_: object) -> None:
    os.killpg(0, signal.SIGKILL)


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
        server = subprocess.Popen(argv, restore_signals=True)
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
    return code if code >= 0 else 128 - code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
