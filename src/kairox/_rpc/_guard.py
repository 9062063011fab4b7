"""Runs a command and takes its whole process group down when the host dies.

The kernel's parent-death signal reaches only the direct child of the host. A command started through a
wrapper (``npx``, ``uvx``, a shell) has grandchildren it would not reach, so the host starts this small
guard instead: the guard is the group leader, waits for the command, and on the host's death kills the
group, grandchildren included; when the command ends, what it left in the group ends with it. Used for every command
that runs outside bubblewrap (whose ``--die-with-parent`` does the same job inside the sandbox).
Standard library only: it runs as ``python -I -S _guard.py --parent HOST_PID -- CMD ARGS``.

``python -I -S _guard.py --host HOST_PID`` (:func:`serve`) is the same guarantee for many children at once: the
one guard of a host, which starts its MCP stdio servers, language servers and debug adapters.
"""

# Imports are most of the guard's start time, and the host's first server waits for it: only modules built into
# the interpreter. No ``subprocess`` (the guard forks and execs itself), ``_signal`` rather than ``signal`` and
# ``_socket`` rather than ``socket`` (their enums cost more than the rest of the guard), ``marshal`` rather than
# ``json`` (the host is the same interpreter), ``_ctypes`` rather than ``ctypes`` for the one C call it needs.
import _signal as signal  # type: ignore[import-not-found]  # no stub; the same functions as signal
import _socket
import os
import sys

TYPE_CHECKING = False  # ``typing`` is not imported for it
if TYPE_CHECKING:
    from collections.abc import Callable

_PR_SET_PDEATHSIG = 1


def _libc_prctl() -> "Callable[..., int] | None":
    """``prctl(2)`` from the C library, or None off Linux. Through ``_ctypes``, whose few types are all the call
    needs (``ctypes`` itself costs the guard a tenth of its start); through ``ctypes`` if those ever change."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        import _ctypes

        class _Int(_ctypes._SimpleCData):  # type: ignore[misc]
            _type_ = "i"

        class _Function(_ctypes.CFuncPtr):  # type: ignore[misc]
            _flags_ = _ctypes.FUNCFLAG_CDECL
            _restype_ = _Int

        class _Library:
            _handle = _ctypes.dlopen(None, os.RTLD_NOW)  # type: ignore[arg-type]  # None: the program and its libraries

        function: Callable[..., int] = _Function(("prctl", _Library()))  # type: ignore[arg-type]  # a library is what has _handle
        return function
    except Exception:
        try:
            import ctypes

            found: Callable[..., int] = ctypes.CDLL(None, use_errno=True).prctl
            return found
        except Exception:
            return None


_PRCTL = _libc_prctl()


def _prctl(option: int, value: int) -> None:
    if _PRCTL is not None:
        try:
            _PRCTL(option, value, 0, 0, 0)
        except Exception:
            pass


def _processes() -> list[tuple[int, list[bytes]]]:
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
    table = _processes()
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


def _prctl_pdeathsig(sig: int) -> None:
    _prctl(_PR_SET_PDEATHSIG, sig)


def _spawn(argv: list[str]) -> int:
    """Fork and exec the command, which dies with the guard; its pid. An exec failure is reported on stderr
    and ends the child with 127."""
    pid = os.fork()
    if pid:
        return pid
    try:  # the child: what ``subprocess`` would do, without importing it
        _prctl_pdeathsig(signal.SIGKILL)
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
    _prctl_pdeathsig(signal.SIGUSR1)
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


_PR_SET_CHILD_SUBREAPER = 36


def _descendants() -> set[int]:
    """Every process below the guard, from ``/proc``."""
    return _below(os.getpid(), _processes())


def serve(parent: int) -> int:
    """One guard for the whole host: it starts every server the host asks for and takes them all down with it.

    Requests come on stdin, a Unix seqpacket socket: one ``marshal`` message ``{"argv", "env", "cwd"}`` with the
    server's stdin, stdout and stderr attached as descriptors; the answer is ``{"pid"}``, and ``{"exit", "code"}``
    follows when that server ends. Each server leads a session of its own (the host signals its group) and
    dies with the guard (``PR_SET_PDEATHSIG``); the guard is a child subreaper, so whatever a server leaves behind
    stays below it, and when the host dies (parent-death signal, or the socket's end) it kills everything below
    it. When a server ends, what is left in its group and session ends with it.
    """
    import marshal
    import select

    servers: set[int] = set()

    def kill_all(*_: object) -> None:
        for _round in range(2):
            for pid in servers:
                _killpg(pid)
            for pid in _descendants():
                _kill(pid, signal.SIGKILL)
        os._exit(137)

    signal.signal(signal.SIGUSR1, kill_all)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _prctl_pdeathsig(signal.SIGUSR1)
    _prctl(_PR_SET_CHILD_SUBREAPER, 1)
    if os.getppid() != parent:  # the host died before the signal was armed
        kill_all()
    channel = _socket.socket(fileno=os.dup(0))
    devnull = os.open(os.devnull, os.O_RDWR)
    os.dup2(devnull, 0)
    wake_read, wake_write = os.pipe()
    os.set_blocking(wake_write, False)
    signal.set_wakeup_fd(wake_write, warn_on_full_buffer=False)
    signal.signal(signal.SIGCHLD, lambda *_: None)

    def tell(message: dict[str, object]) -> None:
        try:
            channel.send(marshal.dumps(message))
        except OSError:  # the host is gone
            kill_all()

    def reap() -> None:
        while True:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return
            if pid in servers:
                servers.discard(pid)
                _killpg(pid)
                _kill_session(pid)
                tell({"exit": pid, "code": os.waitstatus_to_exitcode(status)})

    try:
        while True:
            ready, _, _ = select.select([channel.fileno(), wake_read], [], [])
            if wake_read in ready:
                os.read(wake_read, 4096)
                reap()
            if channel.fileno() in ready:
                message, fds = _receive(channel)
                if not message:  # the host closed its end or died
                    kill_all()
                request = marshal.loads(message)
                try:
                    pid = _spawn_server(request["argv"], request["env"], request["cwd"], fds)
                except OSError as exc:
                    tell({"error": exc.strerror or str(exc)})
                else:
                    servers.add(pid)
                    tell({"pid": pid})
                finally:
                    for fd in fds:
                        os.close(fd)
    finally:  # whatever ends the loop, nothing the guard started outlives it
        kill_all()


def _receive(channel: _socket.socket) -> tuple[bytes, list[int]]:
    """One message and the descriptors sent with it (what ``socket.recv_fds`` does, with ``_socket`` alone). They
    arrive close-on-exec: a server gets them as its 0, 1 and 2 only, not as stray copies that would keep its pipes
    open after it closed them (and leak into everything it starts)."""
    size = 4  # a C int per descriptor
    cloexec = getattr(_socket, "MSG_CMSG_CLOEXEC", 0)
    message, ancillary, _flags, _address = channel.recvmsg(1 << 20, _socket.CMSG_LEN(3 * size), cloexec)
    fds: list[int] = []
    for level, kind, data in ancillary:
        if level == _socket.SOL_SOCKET and kind == _socket.SCM_RIGHTS:
            fds += [
                int.from_bytes(data[i : i + size], sys.byteorder, signed=True)
                for i in range(0, len(data) - size + 1, size)
            ]
    return message, fds


def _killpg(pgid: int) -> None:
    try:
        os.killpg(pgid, signal.SIGKILL)
    except OSError:
        pass


def _kill_session(sid: int) -> None:
    session = str(sid).encode()
    for pid, fields in _processes():
        if fields[3] == session:
            _kill(pid, signal.SIGKILL)


def _spawn_server(argv: list[str], env: dict[str, str], cwd: str | None, fds: list[int]) -> int:
    pid = os.fork()
    if pid:
        return pid
    try:  # the server: a session of its own, dies with the guard, the host's pipes as 0, 1 and 2
        os.setsid()
        _prctl_pdeathsig(signal.SIGKILL)
        for sig in (signal.SIGPIPE, signal.SIGXFSZ, signal.SIGINT, signal.SIGUSR1, signal.SIGCHLD):
            signal.signal(sig, signal.SIG_DFL)
        signal.set_wakeup_fd(-1)
        for target, fd in enumerate(fds):
            os.dup2(fd, target)  # dup2 makes them inheritable
        if cwd is not None:
            os.chdir(cwd)
        os.execvpe(argv[0], argv, env)
    except OSError as exc:
        os.write(2, f"cannot start {argv[0]!r}: {exc.strerror or exc}\n".encode())
    finally:
        os._exit(127)


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--host":
        sys.exit(serve(int(sys.argv[2])))
    sys.exit(main(sys.argv[1:]))
