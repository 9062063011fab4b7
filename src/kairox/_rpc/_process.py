"""Child processes that never outlive Kairox and never deadlock on a full stderr pipe.

Every child starts in its own session (so its whole process group can be signalled), gets an allow-listed
environment, asks the kernel to kill it when Kairox dies (``PR_SET_PDEATHSIG``; a ``guarded`` child runs under a
small guard process, which extends that to every process below the child), and has its stderr drained
continuously into a bounded in-memory tail and, optionally, a capped and rotated log file. Stopping is: close
stdin, wait, SIGTERM the group, wait, SIGKILL the group.
"""

import asyncio
import contextlib
import errno
import os
import shutil
import signal
from collections import deque
from collections.abc import Mapping, Sequence
from pathlib import Path
from types import TracebackType
from typing import Protocol, Self

from kairox._rpc._guard import processes, set_pdeathsig
from kairox._rpc._guarded import guarded_argv
from kairox._util._logfile import LOG_LIMIT_BYTES, RotatingLog

BASE_ENV_NAMES = ("HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER", "LANG", "LC_ALL", "TMPDIR", "TZ")
"""Host variables every child gets (when set)."""

_EXIT_POLL = 0.01
"""Seconds between looks at a child's exit status while waiting for it."""


def child_environment(
    host: Mapping[str, str],
    *,
    passthrough: Sequence[str] = (),
    extra: Mapping[str, str] | None = None,
) -> dict[str, str]:
    """The environment of a child: the allow-listed basics, ``passthrough`` names, then ``extra``.

    An empty value in ``extra`` means "pass the host variable of the same name" (as Codex and Claude Code do
    for MCP servers); it is left out when the host does not have it either.
    """
    env = {name: host[name] for name in (*BASE_ENV_NAMES, *passthrough) if name in host}
    for name, value in (extra or {}).items():
        if value == "":
            if name in host:
                env[name] = host[name]
        else:
            env[name] = value
    return env


def _die_with_parent() -> None:  # runs in the child between fork and exec
    set_pdeathsig(signal.SIGKILL)
    if os.getppid() == 1:  # the parent already died between fork and prctl
        os._exit(1)


def _group_runs(pgid: int) -> bool:
    """Whether a process of group ``pgid`` still runs (is not a zombie); True where ``/proc`` cannot tell."""
    table = processes()
    group = str(pgid).encode()
    return not table or any(fields[2] == group and fields[0] != b"Z" for _, fields in table)


class Scrubber(Protocol):
    """What replaces known secrets in a text (``kairox.config.SecretScrubber``)."""

    def text(self, value: str) -> str: ...

    def safe_end(self, value: str) -> int:
        """How much of an unfinished ``value`` can be scrubbed now: not a tail that may start a secret."""
        ...


def _decoded(data: bytes) -> str:
    return data.decode("utf-8", errors="surrogateescape")  # every byte kept: a cut never splits a character


def _encoded(text: str) -> bytes:
    return text.encode("utf-8", errors="surrogateescape")


class StderrTail:
    """The last ``limit`` bytes a child wrote to stderr, and optionally every byte in a log file. With ``scrub``
    (a configuration's known secrets, replaced) both hold whole lines, each scrubbed: a line is kept back until
    its end arrives, so a secret split across two reads is still found. A line longer than ``limit`` is let out
    in parts, each cut where no secret can be cut in two (``Scrubber.safe_end``)."""

    def __init__(
        self,
        limit: int = 16_384,
        log_path: Path | None = None,
        *,
        log_limit: int = LOG_LIMIT_BYTES,
        scrub: Scrubber | None = None,
    ) -> None:
        self.limit = limit
        self._scrub = scrub
        self._partial = b""
        self._chunks: deque[bytes] = deque()
        self._size = 0
        self.total_bytes = 0
        # capped and rotated: a server writing without end fills at most twice ``log_limit`` of disk
        self._log: RotatingLog | None = RotatingLog(log_path, limit=log_limit) if log_path is not None else None

    def feed(self, chunk: bytes) -> None:
        self.total_bytes += len(chunk)
        if self._scrub is not None:
            chunk, self._partial = self._lines(self._partial + chunk)
            if not chunk:
                return
        self._keep(chunk)

    def _lines(self, data: bytes) -> tuple[bytes, bytes]:
        """The whole lines of ``data``, scrubbed, and what is left of an unfinished last line."""
        assert self._scrub is not None
        end = data.rfind(b"\n") + 1
        if end:
            return _encoded(self._scrub.text(_decoded(data[:end]))), data[end:]
        if len(data) < self.limit:
            return b"", data
        text = _decoded(data)  # one line longer than the limit: out in parts, never a secret's first half
        cut = self._scrub.safe_end(text)
        return _encoded(self._scrub.text(text[:cut])), _encoded(text[cut:])

    def _keep(self, chunk: bytes) -> None:
        if self._log is not None:
            # a full disk ends the log, never the draining (the child would block)
            self._log.write(chunk)
        self._chunks.append(chunk)
        self._size += len(chunk)
        while self._size - len(self._chunks[0]) >= self.limit:
            self._size -= len(self._chunks.popleft())

    @property
    def log_path(self) -> Path | None:
        return None if self._log is None else self._log.path

    def note(self, line: str) -> None:
        """Append a line of Kairox's own to the log (how the child ended), not to the tail."""
        if self._log is not None:
            self.flush()
            self._log.write(_encoded(line.rstrip("\n") + "\n"))

    def text(self, max_chars: int | None = None) -> str:
        data = b"".join(self._chunks)[-self.limit :]
        if self._partial and self._scrub is not None:  # the line so far, but not what may begin a secret
            partial = _decoded(self._partial)
            data += _encoded(self._scrub.text(partial[: self._scrub.safe_end(partial)]))
        text = data.decode("utf-8", errors="replace")
        return text[-max_chars:] if max_chars else text

    def flush(self) -> None:
        """Keep the unfinished last line too (the child closed its stderr, or is being stopped)."""
        if self._partial and self._scrub is not None:
            partial, self._partial = self._partial, b""
            self._keep(_encoded(self._scrub.text(_decoded(partial))))

    def close(self) -> None:
        self.flush()
        log, self._log = self._log, None
        if log is not None:
            log.close()


class ChildProcess:
    """``async with ChildProcess(argv, ...) as child:`` starts a child; leaving the block stops it.

    ``child.stdin`` / ``child.stdout`` are asyncio streams. Enter and exit in the same task.
    """

    def __init__(
        self,
        argv: Sequence[str],
        *,
        env: Mapping[str, str] | None = None,
        cwd: Path | str | None = None,
        stderr_log: Path | None = None,
        stderr_limit: int = 16_384,
        stderr_log_limit: int = LOG_LIMIT_BYTES,
        stop_timeout: float = 3.0,
        pipe_stdin: bool = True,
        pipe_stdout: bool = True,
        guarded: bool = False,
        stdin_grace: float | None = None,
        scrub_stderr: Scrubber | None = None,
    ) -> None:
        self.guarded = guarded
        """Started under a guard (``_guard.py``), which takes the child's whole group down with a SIGKILLed host,
        grandchildren included."""
        self.stdin_grace = stdin_grace
        """Seconds :meth:`stop` waits for an exit after closing stdin before it sends SIGTERM; None: half the
        stop timeout. A short grace suits a child that may ignore end of input (an MCP server that declared
        ``roots`` waits for more) and exits cleanly on SIGTERM."""
        self.argv = list(argv)
        self.env = dict(env) if env is not None else child_environment(os.environ)
        self.cwd = cwd
        self.stop_timeout = stop_timeout
        self.stderr = StderrTail(stderr_limit, stderr_log, log_limit=stderr_log_limit, scrub=scrub_stderr)
        """What the child wrote on stderr; with ``scrub_stderr`` every line of it (log file and tail) scrubbed."""
        self._pipe_stdin = pipe_stdin
        self._pipe_stdout = pipe_stdout
        self._proc: asyncio.subprocess.Process | None = None
        self._drain: asyncio.Task[None] | None = None
        self._stdout: asyncio.StreamReader | None = None
        self._stdout_pipe: asyncio.ReadTransport | None = None

    @property
    def process(self) -> asyncio.subprocess.Process:
        if self._proc is None:
            raise RuntimeError("the child process has not been started")
        return self._proc

    @property
    def started(self) -> bool:
        """Whether :meth:`start` created the process (it may have exited since)."""
        return self._proc is not None

    @property
    def pid(self) -> int:
        return self.process.pid

    @property
    def stdin(self) -> asyncio.StreamWriter:
        assert self.process.stdin is not None
        return self.process.stdin

    @property
    def stdout(self) -> asyncio.StreamReader:
        assert self._stdout is not None
        return self._stdout

    @property
    def returncode(self) -> int | None:
        return self.process.returncode

    def check_runnable(self) -> None:
        """Raise what ``exec`` would for a program that is missing or not executable (the guard would only
        report it later, on stderr)."""
        program = self.argv[0] if self.argv else ""
        if os.sep in program:
            path = Path(program) if os.path.isabs(program) else Path(self.cwd or ".") / program
            if not path.is_file():
                raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), program)
            if not os.access(path, os.X_OK):
                raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), program)
        elif shutil.which(program, path=self.env.get("PATH", os.defpath)) is None:
            raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), program)

    async def start(self) -> Self:
        pipe = asyncio.subprocess.PIPE
        loop = asyncio.get_running_loop()
        stdout = asyncio.subprocess.DEVNULL
        if self._pipe_stdout:
            # a pipe of our own read straight into a stream, connected before the child exists (no wait after it
            # started): through the subprocess transport each chunk waits one more turn of the event loop
            # (bench/peer_calls.py: 1.12x the latency per MCP call, 1.13x the CPU)
            read_end, stdout = os.pipe()
            self._stdout = asyncio.StreamReader(limit=2**24, loop=loop)
            protocol = asyncio.StreamReaderProtocol(self._stdout, loop=loop)
            self._stdout_pipe, _ = await loop.connect_read_pipe(lambda: protocol, os.fdopen(read_end, "rb", 0))
        try:
            if self.guarded:
                self.check_runnable()
            self._proc = await asyncio.create_subprocess_exec(
                *(guarded_argv(self.argv) if self.guarded else self.argv),
                stdin=pipe if self._pipe_stdin else asyncio.subprocess.DEVNULL,
                stdout=stdout,
                stderr=pipe,
                env=self.env,
                cwd=str(self.cwd) if self.cwd is not None else None,
                start_new_session=True,
                # the guard arms the parent-death signal itself: without a preexec_fn the host can vfork
                preexec_fn=None if self.guarded else _die_with_parent,
                limit=2**24,
            )
        except BaseException:
            self.stderr.close()  # no child will write to the log file
            if self._stdout_pipe is not None:
                self._stdout_pipe.close()
            raise
        finally:
            if self._pipe_stdout:
                os.close(stdout)  # the child's end: the stream ends when the child (and what it started) closes it
        self._drain = loop.create_task(self._drain_stderr())
        return self

    async def _drain_stderr(self) -> None:
        stream = self.process.stderr
        assert stream is not None
        with contextlib.suppress(Exception):
            while chunk := await stream.read(65_536):
                self.stderr.feed(chunk)
        self.stderr.flush()

    async def wait(self, timeout: float | None = None) -> int | None:
        """The exit code, or None when the child is still running after ``timeout`` seconds.

        The exit is noticed even while a grandchild still holds the child's pipes open (``Process.wait`` alone
        waits for the pipes to close too).
        """
        proc = self.process
        if proc.returncode is not None:
            return proc.returncode
        loop = asyncio.get_running_loop()
        deadline = None if timeout is None else loop.time() + timeout
        waiter = loop.create_task(proc.wait())
        try:
            while proc.returncode is None:
                remaining = _EXIT_POLL if deadline is None else min(deadline - loop.time(), _EXIT_POLL)
                if remaining <= 0:
                    return None
                await asyncio.wait({waiter}, timeout=remaining)
            return proc.returncode
        finally:
            waiter.cancel()

    async def stderr_read(self, timeout: float) -> None:
        """Wait (up to ``timeout`` seconds) until the child's stderr has been read to its end, so its tail holds
        what it wrote before it exited."""
        if self._drain is not None:
            await asyncio.wait({self._drain}, timeout=timeout)

    def _signal_group(self, sig: int) -> None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.process.pid, sig)

    async def _kill_rest_of_group(self, timeout: float = 1.0) -> None:
        """SIGKILL what is left of the child's group and wait (up to ``timeout``) until it is gone."""
        pid = self.process.pid
        if self.process.returncode is not None:
            try:
                os.kill(pid, 0)
            except ProcessLookupError:
                pass  # the group, if any of it is left, is still ours: its id cannot be reused while it exists
            except PermissionError:
                return
            else:
                return  # the leader was reaped and its pid runs again: that process is not ours
        self._signal_group(signal.SIGKILL)
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while loop.time() < deadline:
            try:
                os.killpg(pid, 0)
            except (ProcessLookupError, PermissionError):
                return
            if not _group_runs(pid):
                return  # only zombies are left, for their new parent to reap
            await asyncio.sleep(0.01)

    async def stop(self, timeout: float | None = None) -> int | None:
        """Close stdin, wait; SIGTERM the group, wait; SIGKILL the group. Returns the exit code."""
        if self._proc is None:
            self.stderr.close()  # the log file was opened for a child that never started
            return None
        timeout = self.stop_timeout if timeout is None else timeout
        try:
            if self._proc.returncode is None:
                if self._proc.stdin is not None and not self._proc.stdin.is_closing():
                    with contextlib.suppress(Exception):
                        self._proc.stdin.close()
                grace = timeout / 2 if self.stdin_grace is None else min(self.stdin_grace, timeout)
                if await self.wait(grace) is None:
                    self._signal_group(signal.SIGTERM)
                    if await self.wait(max(timeout - grace, 0.1)) is None:
                        self._signal_group(signal.SIGKILL)
                        await self.wait(5.0)
            # the leader may be gone while others in its group live on
            await self._kill_rest_of_group()
        finally:
            if self._drain is not None:
                with contextlib.suppress(BaseException):
                    await asyncio.wait_for(self._drain, 1.0)
            if self._stdout_pipe is not None:
                self._stdout_pipe.close()
            self.stderr.close()
        return self._proc.returncode

    async def __aenter__(self) -> Self:
        return await self.start()

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await asyncio.shield(self.stop())
