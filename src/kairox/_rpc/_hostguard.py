"""One guard process for the whole host (``_guard.py --host``): it starts the guarded children and takes them down
with the host.

A guard per child cost a Python start (about 30 ms of CPU) for every server; this one starts once. The host
creates each child's pipes, hands their far ends to the guard over a Unix seqpacket socket, and gets the child's
pid back, then its exit code when it ends. Messages are ``marshal`` data: the guard runs this same interpreter,
and it starts faster without ``json``. A reader thread takes the guard's messages, so one guard serves every
event loop of the process.
"""

import asyncio
import collections
import marshal
import os
import socket
import subprocess
import sys
import threading
from collections.abc import Mapping, Sequence

from kairox._rpc._guarded import GUARD_SCRIPT


class GuardedProcess:
    """A child the host guard started: the parts of ``asyncio.subprocess.Process`` that ``ChildProcess`` uses."""

    def __init__(
        self,
        pid: int,
        stdin: asyncio.StreamWriter | None,
        stdout: asyncio.StreamReader | None,
        stderr: asyncio.StreamReader,
        transports: list[asyncio.BaseTransport],
    ) -> None:
        self.pid = pid
        self.stdin = stdin
        self.stdout = stdout
        self.stderr = stderr
        self.returncode: int | None = None
        self._exited = asyncio.Event()
        self._transports = transports

    def _set_exit(self, code: int) -> None:
        self.returncode = code
        self._exited.set()

    async def wait(self) -> int:
        await self._exited.wait()
        assert self.returncode is not None
        return self.returncode

    def close_pipes(self) -> None:
        for transport in self._transports:
            transport.close()


class HostGuard:
    """The guard process of this host process and the thread that reads what it says."""

    def __init__(self) -> None:
        self.owner = os.getpid()
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        try:
            self._process = subprocess.Popen(
                [sys.executable, "-I", "-S", str(GUARD_SCRIPT), "--host", str(self.owner)],
                stdin=theirs.fileno(),
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                start_new_session=True,  # a Ctrl-C in the terminal is the host's to handle, not the guard's
            )
        finally:
            theirs.close()
        self._socket = ours
        self._lock = threading.Lock()
        self._replies: collections.deque[tuple[asyncio.AbstractEventLoop, asyncio.Future[dict[str, object]]]] = (
            collections.deque()
        )
        self._children: dict[int, tuple[asyncio.AbstractEventLoop, GuardedProcess]] = {}
        self._early_exits: dict[int, int] = {}
        self._reader = threading.Thread(target=self._read, name="kairox-guard", daemon=True)
        self._reader.start()

    @property
    def pid(self) -> int:
        pid: int = self._process.pid
        return pid

    def _read(self) -> None:
        while True:
            try:
                data = self._socket.recv(1 << 16)
            except OSError:
                data = b""
            if not data:  # the guard is gone: nothing it started runs any more
                with self._lock:
                    children, self._children = self._children, {}
                    replies = list(self._replies)
                    self._replies.clear()
                for loop, process in children.values():
                    _call_soon(loop, process._set_exit, -9)
                for loop, future in replies:
                    _call_soon(loop, _resolve, future, {"error": "the process guard exited"})
                return
            message = marshal.loads(data)
            if "exit" in message:
                pid, code = int(message["exit"]), int(message["code"])
                with self._lock:
                    child = self._children.pop(pid, None)
                    if child is None:  # it ended before spawn() registered it
                        self._early_exits[pid] = code
                if child is not None:
                    _call_soon(child[0], child[1]._set_exit, code)
            else:
                with self._lock:
                    loop, future = self._replies.popleft()
                _call_soon(loop, _resolve, future, message)

    async def spawn(
        self,
        argv: Sequence[str],
        *,
        env: Mapping[str, str],
        cwd: str | None,
        pipe_stdin: bool,
        pipe_stdout: bool,
        limit: int,
    ) -> GuardedProcess:
        loop = asyncio.get_running_loop()
        ends: list[int] = []  # the host's ends
        theirs: list[int] = []
        try:
            for index in range(3):
                if (index == 0 and not pipe_stdin) or (index == 1 and not pipe_stdout):
                    theirs.append(os.open(os.devnull, os.O_RDWR))
                    ends.append(-1)
                    continue
                read, write = os.pipe()
                ends.append(write if index == 0 else read)
                theirs.append(read if index == 0 else write)
            future: asyncio.Future[dict[str, object]] = loop.create_future()
            request = marshal.dumps({"argv": list(argv), "env": dict(env), "cwd": cwd})
            with self._lock:
                self._replies.append((loop, future))
                socket.send_fds(self._socket, [request], theirs)
        except BaseException:
            for fd in ends:
                if fd >= 0:
                    os.close(fd)
            raise
        finally:
            for fd in theirs:
                os.close(fd)
        try:
            reply = await future
        except BaseException:
            for fd in ends:
                if fd >= 0:
                    os.close(fd)
            raise
        if "error" in reply:
            for fd in ends:
                if fd >= 0:
                    os.close(fd)
            raise OSError(str(reply["error"]))
        pid = int(str(reply["pid"]))
        transports: list[asyncio.BaseTransport] = []
        stdin = None
        if ends[0] >= 0:
            transport, protocol = await loop.connect_write_pipe(
                lambda: asyncio.streams.FlowControlMixin(loop=loop), os.fdopen(ends[0], "wb", buffering=0)
            )
            transports.append(transport)
            stdin = asyncio.StreamWriter(transport, protocol, None, loop)
        readers: list[asyncio.StreamReader | None] = []
        for fd in ends[1:]:
            if fd < 0:
                readers.append(None)
                continue
            reader = asyncio.StreamReader(limit=limit, loop=loop)
            read_transport, _ = await loop.connect_read_pipe(
                lambda reader=reader: asyncio.StreamReaderProtocol(reader, loop=loop),  # type: ignore[misc]
                os.fdopen(fd, "rb", buffering=0),
            )
            transports.append(read_transport)
            readers.append(reader)
        stderr = readers[1]
        assert stderr is not None
        process = GuardedProcess(pid, stdin, readers[0], stderr, transports)
        with self._lock:
            code = self._early_exits.pop(pid, None)
            if code is None:
                self._children[pid] = (loop, process)
        if code is not None:
            process._set_exit(code)
        return process


def _resolve(future: "asyncio.Future[dict[str, object]]", message: dict[str, object]) -> None:
    if not future.done():
        future.set_result(message)


def _call_soon(loop: asyncio.AbstractEventLoop, callback: object, *args: object) -> None:
    try:
        loop.call_soon_threadsafe(callback, *args)  # type: ignore[arg-type]
    except RuntimeError:
        pass  # that event loop is closed: nobody waits there any more


_guard: HostGuard | None = None
_guard_lock = threading.Lock()


def running_host_guard() -> int | None:
    """The pid of this process's guard, when one runs."""
    guard = _guard
    if guard is None or guard.owner != os.getpid() or guard._process.poll() is not None:
        return None
    return guard.pid


def host_guard() -> HostGuard:
    """This process's guard, started on first use (again in a forked child, which has a guard of its own)."""
    global _guard
    with _guard_lock:
        if _guard is None or _guard.owner != os.getpid() or _guard._process.poll() is not None:
            _guard = HostGuard()
        return _guard


def start_host_guard() -> None:
    """Start this process's guard now, if it is not running, so that it is ready when the first child is asked
    for (the guard's start overlaps the caller's own work); a guard that cannot start says so at that spawn."""
    try:
        host_guard()
    except OSError:
        pass
