"""``shell.exec``: one command line under the OS sandbox, with a timeout, bounded output and a scrubbed environment."""

import asyncio
import contextlib
import os
import signal
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kairox.errors import ToolCallError
from kairox.sandbox import (
    SETUP_ATTEMPTS,
    ConfigurationWatch,
    check_sandbox,
    created_note,
    protected_roots,
    sandboxed_argv,
    vanished_before_start,
)
from kairox.tools._model import CallContext, ToolResult

SECRET_MARKERS = ("KEY", "SECRET", "TOKEN", "PASSWORD", "PASSWD", "CREDENTIAL")
_CHUNK = 65536
_POLL_SEC = 0.05
_GRACE_SEC = 0.5
"""How long output is still read after the command ended (a background process may hold the pipes open)."""


@dataclass(frozen=True, kw_only=True, slots=True)
class HostCommand:
    """A confined command line that a front end runs itself (an editor's terminal), exactly as Kairox would run it."""

    call_id: str
    argv: list[str]
    cwd: Path
    env: dict[str, str]
    timeout: float
    output_limit: int


RunHosted = Callable[[HostCommand], Awaitable[tuple[int, str, int] | None]]
"""Runs a :class:`HostCommand`: its exit code, the output kept and how many bytes there were in all; None when it
timed out (and was killed)."""


def scrubbed_environment(env: Mapping[str, str], passthrough: Iterable[str] = ()) -> dict[str, str]:
    """``env`` without variables whose names look like secrets, except those listed in ``passthrough``."""
    keep = set(passthrough)
    return {k: v for k, v in env.items() if k in keep or not any(m in k.upper() for m in SECRET_MARKERS)}


class _Capture:
    """One output stream: the first ``limit`` bytes kept, the rest counted."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.kept = bytearray()
        self.total = 0

    async def drain(self, stream: asyncio.StreamReader) -> None:
        while chunk := await stream.read(_CHUNK):
            self.total += len(chunk)
            if len(self.kept) < self.limit:
                self.kept += chunk[: self.limit - len(self.kept)]


async def _ended(proc: asyncio.subprocess.Process, readers: set["asyncio.Task[None]"]) -> int:
    """The command's exit code once it has ended and its output is read.

    A process the command left running in the background (a server started with ``setsid``) may keep the pipes
    open: once the command itself has ended, its output gets a short grace and is then not waited for. The
    exit status is polled because ``Process.wait`` also waits for the pipes on some Python versions.
    """
    while proc.returncode is None:
        pending = {task for task in readers if not task.done()}
        if not pending:
            return await proc.wait()
        await asyncio.wait(pending, timeout=_POLL_SEC, return_when=asyncio.FIRST_COMPLETED)
    await asyncio.wait(readers, timeout=_GRACE_SEC)
    return proc.returncode


async def _reaped(proc: asyncio.subprocess.Process, timeout: float) -> None:
    """Wait (bounded) until the killed command's exit status is in."""
    with contextlib.suppress(TimeoutError):
        async with asyncio.timeout(timeout):
            while proc.returncode is None:
                await asyncio.sleep(_POLL_SEC)


def _kill_group(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)


async def _run_once(
    argv: list[str], *, cwd: Path, env: dict[str, str], timeout: float, output_limit: int
) -> "tuple[int, _Capture, _Capture] | None":
    """Run ``argv`` once: its exit code and what it printed, or None when it timed out (and was killed)."""
    proc = await asyncio.create_subprocess_exec(
        *argv,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        cwd=cwd,
        env=env,
        start_new_session=True,
    )
    assert proc.stdout is not None and proc.stderr is not None
    out, errs = _Capture(output_limit), _Capture(output_limit)
    readers = {asyncio.ensure_future(out.drain(proc.stdout)), asyncio.ensure_future(errs.drain(proc.stderr))}
    try:
        try:
            code = await asyncio.wait_for(_ended(proc, readers), timeout)
        except TimeoutError:
            _kill_group(proc.pid)
            await _reaped(proc, 5)
            return None
    finally:
        if proc.returncode is None:  # cancelled from outside (the registry's timeout): leave nothing running
            _kill_group(proc.pid)
            with contextlib.suppress(BaseException):
                await asyncio.shield(_reaped(proc, 5))
        for reader in readers:
            reader.cancel()
    return code, out, errs


async def _hosted(run: RunHosted, command: HostCommand) -> "tuple[int, _Capture, _Capture] | None":
    answer = await run(command)
    if answer is None:
        return None
    code, text, total = answer
    out = _Capture(command.output_limit)
    out.kept += text.encode("utf-8")[: command.output_limit]
    out.total = max(total, len(out.kept))
    return code, out, _Capture(command.output_limit)


async def run_shell(
    args: dict[str, Any],
    context: CallContext,
    *,
    default_timeout: float,
    output_limit: int,
    passthrough: Iterable[str],
    hosted: RunHosted | None = None,
) -> ToolResult:
    command = args.get("command")
    if not isinstance(command, str) or not command.strip():
        raise ToolCallError(tool="shell.exec", reason="`command` must be a non-empty string")
    workspace = Path(os.path.realpath(context.workspace))
    cwd_arg = args.get("cwd") or "."
    cwd = Path(os.path.realpath(workspace / os.path.expanduser(str(cwd_arg))))
    if cwd != workspace and workspace not in cwd.parents:
        raise ToolCallError(tool="shell.exec", reason=f"working directory {cwd} is outside the workspace {workspace}")
    if not cwd.is_dir():
        raise ToolCallError(tool="shell.exec", reason=f"working directory {cwd} does not exist")
    timeout = float(args.get("timeout_sec") or default_timeout)
    bwrap = await asyncio.to_thread(check_sandbox, context.sandbox)
    # project configuration a command creates cannot be refused; it is found and reported (trust pins keep it inert)
    watch = await ConfigurationWatch.start(protected_roots(context.sandbox, workspace))
    env = scrubbed_environment(os.environ, passthrough)
    for attempt in range(1, SETUP_ATTEMPTS + 1):
        sandbox_notes: list[str] = []
        argv = await asyncio.to_thread(
            sandboxed_argv,
            ["bash", "-c", command],
            context.sandbox,
            workspace,
            cwd=cwd,
            bwrap=bwrap,
            notes=sandbox_notes,
        )
        ran = await (
            _run_once(argv, cwd=cwd, env=env, timeout=timeout, output_limit=output_limit)
            if hosted is None
            else _hosted(
                hosted,
                HostCommand(
                    call_id=context.call_id, argv=argv, cwd=cwd, env=env, timeout=timeout, output_limit=output_limit
                ),
            )
        )
        if ran is None:
            return ToolResult.error(f"shell.exec: `{command}` timed out after {timeout:g}s and was killed")
        code, out, errs = ran
        if attempt == SETUP_ATTEMPTS or not vanished_before_start(argv, code, out.kept, errs.kept):
            break
    stdout = out.kept.decode("utf-8", errors="replace")
    stderr = errs.kept.decode("utf-8", errors="replace")
    stdout_cut = [f"[stdout: {out.total - len(out.kept)} more bytes not kept]"] if out.total > len(out.kept) else []
    notes = [f"[stderr: {errs.total - len(errs.kept)} more bytes not kept]"] if errs.total > len(errs.kept) else []
    created = await watch.created()
    if created:
        notes.append(created_note(created, "the command"))
    if sandbox_notes and (code != 0 or stderr):  # why a git command found no objects, or a file read empty
        notes += [f"[rules on reading: {note}]" for note in sandbox_notes]
    parts = [f"exit code: {code}"]
    if stdout:
        parts.append(stdout.rstrip("\n"))
    parts += stdout_cut
    if stderr:
        parts += ["[stderr]", stderr.rstrip("\n")]
    parts += notes
    notes = [*stdout_cut, *notes]
    # the output itself is in the structured form too: hosts that show only structuredContent show it
    structured: dict[str, Any] = {
        "exit_code": code,
        "stdout": stdout,
        "stderr": stderr,
        "timed_out": False,
        "sandbox": str(context.sandbox.mode),
    }
    if created:
        structured["created_configuration"] = [str(p) for p in created]
    if notes:
        structured["notes"] = notes
    result = ToolResult.text("\n".join(parts), structured=structured)
    if code != 0:
        return ToolResult(content=result.content, structured=structured, is_error=True)
    return result
