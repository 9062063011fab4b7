"""Runs a command and takes its whole process group down when the host dies.

The kernel's parent-death signal reaches only the direct child of the host. A command started through a
wrapper (``npx``, ``uvx``, a shell) has grandchildren it would not reach, so the host starts this small
guard instead: the guard is the group leader, waits for the command, and on the host's death kills the
group, grandchildren included; when the command ends, what it left in the group ends with it. Used for every command
that runs outside bubblewrap (whose ``--die-with-parent`` does the same job inside the sandbox).
Standard library only: it runs as ``python -I -S _guard.py --parent HOST_PID -- CMD ARGS``.
"""

# Standard library only, and no ``subprocess``: the guard forks and execs the command itself.
import ctypes
import os
import signal
import sys

_PR_SET_PDEATHSIG = 1


def _libc_prctl() -> "ctypes._NamedFuncPointer | None":
    """``prctl(2)`` from the C library, or None off Linux."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        return ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None


_PRCTL = _libc_prctl()


def _prctl(option: int, value: int) -> None:
    if _PRCTL is not None:
        try:
            _PRCTL(option, value, 0, 0, 0)
        except Exception:
            pass


def processes() -> list[tuple[int, list[bytes]]]:
    """Every process as ``(pid, the fields of /proc/PID/stat after its name)``: state, parent, group, session ...;
    empty where ``/proc`` cannot be read."""
    try:
        entries = os.listdir("/proc")
    except OSError:
        return []
    table: list[tuple[int, list[bytes]]] = []
    for entry in entries:
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat", "rb") as handle:
                    fields = handle.read().rsplit(b")", 1)[1].split()
            except (OSError, IndexError):
                continue
            if len(fields) > 3:
                table.append((int(entry), fields))
    return table


def _below(pid: int, table: list[tuple[int, list[bytes]]]) -> set[int]:
    """Every process below ``pid`` in ``table``."""
    children: dict[int, list[int]] = {}
    for child, fields in table:
        children.setdefault(int(fields[1]), []).append(child)
    found: set[int] = set()
    stack = [pid]
    while stack:
        for child in children.get(stack.pop(), []):
            found.add(child)
            stack.append(child)
    return found


def _others() -> set[int]:
    """Every other process of the guard's group, and every process below the guard (a child that started a
    session of its own, as a debug adapter does, included), from ``/proc``."""
    me = os.getpid()
    # the group is the guard's only when it leads it (started in a session of its own); else it is the caller's
    group = str(me).encode() if os.getpgid(0) == me else None
    table = processes()
    found = {pid for pid, fields in table if fields[2] == group} | _below(me, table)
    found.discard(me)
    return found


def _kill(pid: int, sig: int) -> None:
    try:
        os.kill(pid, sig)
    except OSError:
        pass


def _kill_others() -> None:
    # a second look catches what was being forked during the first
    for _round in range(2):
        for pid in _others():
            _kill(pid, signal.SIGKILL)


def _kill_group(*_: object) -> None:
    _kill_others()
    if os.getpgid(0) == os.getpid():
        os.killpg(0, signal.SIGKILL)
    os._exit(137)


def set_pdeathsig(sig: int) -> None:
    _prctl(_PR_SET_PDEATHSIG, sig)


def _spawn(argv: list[str]) -> int:
    """Fork and exec the command, which dies with the guard; its pid. An exec failure is reported on stderr
    and ends the child with 127."""
    pid = os.fork()
    if pid:
        return pid
    try:  # the child: what ``subprocess`` would do, without importing it
        set_pdeathsig(signal.SIGKILL)
        for sig in (signal.SIGPIPE, signal.SIGXFSZ):  # Python ignores these; the server gets the defaults
            signal.signal(sig, signal.SIG_DFL)
        os.execvp(argv[0], argv)
    except OSError as exc:
        os.write(2, f"cannot start {argv[0]!r}: {exc.strerror or exc}\n".encode())
    finally:
        os._exit(127)


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
    set_pdeathsig(signal.SIGUSR1)
    if os.getppid() != (parent or os.getppid()) or os.getppid() == 1:  # the host died before the signal was armed
        _kill_group()
    server = _spawn(argv)
    # SIGTERM goes to the whole group; the guard outlives its server only long enough to report the exit code
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    # drop the guard's copies of the pipes, so the host sees end of file when the server exits
    devnull = os.open(os.devnull, os.O_RDWR)
    os.dup2(devnull, 0)
    os.dup2(devnull, 1)
    code = os.waitstatus_to_exitcode(os.waitpid(server, 0)[1])
    # nothing the server left in the group (a wrapper's helper) outlives it: the host closing the server's
    # pipes as it dies can end the server before the parent-death signal reaches the guard
    _kill_others()
    if code < 0:  # die of the same signal, so the host reads the exit status the server itself had
        try:  # SIGKILL's handler cannot be set (nor needs to be)
            signal.signal(-code, signal.SIG_DFL)
        except (OSError, ValueError):
            pass
        _kill(os.getpid(), -code)
    return code if code >= 0 else 128 - code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
