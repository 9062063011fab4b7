"""How a configured server command becomes a child process, the same for language servers and debug adapters:
``${VAR}`` expanded from the host, a relative command with a ``/`` taken from the folder of the file that
configured it, the allow-listed environment plus the server's own ``env``, started under the guard."""

import os
import signal
from collections.abc import Mapping, Sequence
from pathlib import Path

from kairox._rpc._process import ChildProcess, Scrubber, child_environment
from kairox._util._expand import expand_vars


def command_path(command: str, base_dir: Path) -> str:
    """A relative command with a ``/`` (``./bin/server``) is relative to the file that configured it."""
    if "/" in command and not Path(command).expanduser().is_absolute():
        return str((base_dir / command).resolve())
    return str(Path(command).expanduser()) if command.startswith("~") else command


def resolved_command(command: str, base_dir: Path, host_env: Mapping[str, str] | None = None) -> str:
    """The program a server command names, as :func:`server_process` runs it."""
    host = os.environ if host_env is None else host_env
    return command_path(expand_vars(command, host).value, base_dir)


def server_process(
    command: str,
    args: Sequence[str],
    env: Mapping[str, str],
    *,
    cwd: Path,
    base_dir: Path,
    host_env: Mapping[str, str] | None = None,
    stderr_log: Path | None = None,
    stop_timeout: float = 3.0,
    scrub_stderr: Scrubber | None = None,
) -> ChildProcess:
    """The (not yet started) child of a configured server."""
    host = dict(os.environ if host_env is None else host_env)
    argv = [resolved_command(command, base_dir, host), *(expand_vars(part, host).value for part in args)]
    environment = child_environment(host, extra={k: expand_vars(v, host).value for k, v in env.items()})
    # guarded: a wrapper (a shell script, npx, uvx) may start helpers the parent-death signal would not reach
    return ChildProcess(
        argv,
        env=environment,
        cwd=cwd,
        stderr_log=stderr_log,
        stop_timeout=stop_timeout,
        guarded=True,
        scrub_stderr=scrub_stderr,
    )


_EXIT_WAIT = 0.5
"""Seconds to wait for a server's exit code once its output ended, for the reason of the failure."""


async def closed_reason(child: ChildProcess, what: str) -> str:
    """Why the connection to ``child`` ended, for an error: ``what`` closed its output, its exit code (when
    known yet), the end of its stderr (where a sandbox's own error also lands) or that it wrote none, and where its
    log is. Unless it exited cleanly, the same words are appended to that log, so a later look says how it ended."""
    await child.wait(_EXIT_WAIT)  # the output usually ends as the process does: give its exit code
    await child.stderr_read(_EXIT_WAIT)  # and what it wrote last, which a busy machine may not have read yet
    code = child.returncode if child.started else None
    tail = child.stderr.text(600).strip()
    text = f"{what} closed its output"
    if code is not None:
        text += f" and was killed by {_signal_name(-code)}" if code < 0 else f" and exited with code {code}"
    text += f"; stderr ends with: {tail}" if tail else "; it wrote nothing on stderr"
    log = child.stderr.log_path
    if code != 0:  # not the end of an orderly exit
        child.stderr.note(f"kairox: {text}")
    return text + (f" (log: {log})" if log is not None else "")


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"
