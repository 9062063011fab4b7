"""Running the real ``kairox`` command as a user would: a process of its own, with its own environment, working
folder, stdin and exit code.

Each run is a fork of one process per test process that has already imported the command line (``_CliForks``): the
run is still a separate process, without an interpreter start and the command line's imports each time. A test
whose subject is the process boundary itself (the interpreter's start, ``-m kairox``, the installed entry point)
runs the command with ``subprocess`` on its own.
"""

import atexit
import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any


@dataclass
class Run:
    code: int
    stdout: str
    stderr: str

    @property
    def returncode(self) -> int:
        return self.code

    def json(self) -> Any:
        return json.loads(self.stdout)


_FORK_SERVER = r"""
import json, os, sys
import kairox.cli._app  # what the commands load; each fork starts from here
import kairox.runtime._context

def serve() -> None:
    requests = os.fdopen(int(sys.argv[1]), "rb", buffering=0)
    replies = os.fdopen(int(sys.argv[2]), "wb", buffering=0)
    while line := requests.readline():
        request = json.loads(line)
        pid = os.fork()
        if pid == 0:
            code = 1
            try:
                requests.close()
                replies.close()
                os.setpgid(0, 0)
                os.environ.clear()
                os.environ.update(request["env"])
                os.chdir(request["cwd"])
                for fd, name in enumerate(("stdin", "stdout", "stderr")):
                    target = os.open(request[name], os.O_RDONLY if fd == 0 else os.O_WRONLY)
                    os.dup2(target, fd)
                    os.close(target)
                sys.argv = ["kairox", *request["args"]]
                from kairox.cli import main
                main()
                code = 0
            except SystemExit as exc:
                code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
                if not isinstance(exc.code, (int, type(None))):
                    print(exc.code, file=sys.stderr)
            except BaseException:
                import traceback
                traceback.print_exc()
            # the interpreter's own exit, as a process of its own ends: atexit functions, flushes, threads joined
            sys.exit(code)
        replies.write(f"{pid}\n".encode())
        _, status = os.waitpid(pid, 0)
        replies.write(f"{os.waitstatus_to_exitcode(status)}\n".encode())

serve()
"""


class _CliForks:
    """The process that forks a run of ``kairox`` for each request (one per test process, started on first use)."""

    def __init__(self) -> None:
        requests_read, self._requests = os.pipe()
        self._replies, replies_write = os.pipe()
        self.process = subprocess.Popen(
            [sys.executable, "-c", _FORK_SERVER, str(requests_read), str(replies_write)],
            pass_fds=(requests_read, replies_write),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            start_new_session=True,
        )
        os.close(requests_read)
        os.close(replies_write)
        self._lines: IO[bytes] = os.fdopen(self._replies, "rb", buffering=0)
        self._lock = threading.Lock()

    def run(self, args: Sequence[str], *, env: Mapping[str, str], cwd: Path, stdin: str | None, timeout: float) -> Run:
        with tempfile.TemporaryDirectory(prefix="kairox-run-") as folder:
            files = {name: Path(folder) / name for name in ("stdin", "stdout", "stderr")}
            files["stdin"].write_text(stdin or "", encoding="utf-8")
            for name in ("stdout", "stderr"):
                files[name].touch()
            request = {"args": list(args), "env": dict(env), "cwd": str(cwd), **{k: str(v) for k, v in files.items()}}
            with self._lock:
                os.write(self._requests, (json.dumps(request) + "\n").encode())
                pid = int(self._lines.readline())
                expired = threading.Event()
                timer = threading.Timer(timeout, lambda: (expired.set(), _kill_group(pid)))
                timer.start()
                try:
                    code = int(self._lines.readline())
                finally:
                    timer.cancel()
            if expired.is_set():
                raise subprocess.TimeoutExpired(["kairox", *args], timeout)
            out = files["stdout"].read_text(encoding="utf-8", errors="replace")
            err = files["stderr"].read_text(encoding="utf-8", errors="replace")
        return Run(code, out, err)

    def close(self) -> None:
        os.close(self._requests)
        self.process.wait(timeout=10)


def _kill_group(pid: int) -> None:
    try:
        os.killpg(pid, signal.SIGKILL)
    except OSError:
        pass


_forks: _CliForks | None = None


def cli_forks() -> _CliForks:
    global _forks
    if _forks is None or _forks.process.poll() is not None:
        _forks = _CliForks()
        atexit.register(_forks.close)
    return _forks


def forks_pid() -> int | None:
    """The pid of this test process's fork server (not a process a test left behind), when one runs."""
    return _forks.process.pid if _forks is not None and _forks.process.poll() is None else None


SPAWN = os.environ.get("KAIROX_TESTS_SPAWN") == "1"
"""Run every command as ``python -m kairox`` instead (read at import: the tests clear ``KAIROX_`` variables)."""


def kairox(
    *args: str | Path,
    cwd: Path | None = None,
    env: dict[str, str] | None = None,
    timeout: float = 120,
    stdin: str | None = None,
) -> Run:
    """``kairox ARGS`` as a process of its own, with the test's environment plus ``env``."""
    full_env = {**os.environ, **(env or {})}
    if SPAWN:
        proc = subprocess.run(
            [sys.executable, "-m", "kairox", *map(str, args)],
            cwd=cwd,
            env=full_env,
            capture_output=True,
            text=True,
            timeout=timeout,
            input=stdin,
            stdin=None if stdin is not None else subprocess.DEVNULL,
        )
        return Run(proc.returncode, proc.stdout, proc.stderr)
    return cli_forks().run([str(a) for a in args], env=full_env, cwd=cwd or Path.cwd(), stdin=stdin, timeout=timeout)


NOBODY = 65534
"""The unprivileged user the sandbox tests run commands as (with ``setpriv``) when the suite runs as root."""


def as_user(user: str) -> list[str]:
    """The command prefix that runs a command as ``user`` (``root`` or ``unprivileged``, the ``user`` fixture):
    ``setpriv`` to ``NOBODY`` when the suite runs as root, else nothing."""
    return (
        ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups"]
        if user == "unprivileged" and os.geteuid() == 0
        else []
    )


def give_to(user: str, tree: Path) -> None:
    """Make every file and folder under ``tree`` ``NOBODY``'s when ``user`` is ``unprivileged`` and the suite runs as
    root, so a command run through :func:`as_user` can work in it; nothing otherwise."""
    if user != "unprivileged" or os.geteuid() != 0:
        return
    for folder, dirs, files in os.walk(tree):
        for name in (".", *dirs, *files):
            os.chown(Path(folder) / name, NOBODY, NOBODY, follow_symlinks=False)


GIT_ENV = {
    "GIT_AUTHOR_NAME": "t",
    "GIT_AUTHOR_EMAIL": "t@example.invalid",
    "GIT_COMMITTER_NAME": "t",
    "GIT_COMMITTER_EMAIL": "t@example.invalid",
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_CONFIG_GLOBAL": "/dev/null",
}
"""A git that reads no configuration of this machine and commits as a fixed author."""


def git(where: Path, *args: str) -> str:
    """Run git in ``where`` with :data:`GIT_ENV`; its output, stripped (a failure raises)."""
    run = subprocess.run(
        ["git", *args], cwd=where, env={**os.environ, **GIT_ENV}, capture_output=True, text=True, timeout=60, check=True
    )
    return run.stdout.strip()
