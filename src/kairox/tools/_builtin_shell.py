"""``shell.exec``: one command line under the OS sandbox, with a timeout, bounded output and a scrubbed environment."""

import asyncio
import contextlib
import os
import signal
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from kairox.errors import ToolCallError
from kairox.tools._model import CallContext, ToolResult
from kairox.tools._sandbox import check_sandbox, sandboxed_argv

SECRET_MARKERS = ("KEY", "SECRET", "TOKEN", "PASSWORD", "PASSWD", "CREDENTIAL")
_CHUNK = 65536


def scrubbed_environment(env: Mapping[str, str], passthrough: Iterable[str] = ()) -> dict[str, str]:
    """``env`` without variables whose names look like secrets, except those listed in ``passthrough``."""
    keep = set(passthrough)
    return {k: v for k, v in env.items() if k in keep or not any(m in k.upper() for m in SECRET_MARKERS)}


async def _drain(stream: asyncio.StreamReader, limit: int) -> tuple[bytes, int]:
    kept = bytearray()
    total = 0
    while chunk := await stream.read(_CHUNK):
        total += len(chunk)
        if len(kept) < limit:
            kept += chunk[: limit - len(kept)]
    return bytes(kept), total


def _kill_group(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)


async def run_shell(
    args: dict[str, Any],
    context: CallContext,
    *,
    default_timeout: float,
    output_limit: int,
    passthrough: Iterable[str],
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
    argv = sandboxed_argv(["bash", "-c", command], context.sandbox, workspace, cwd=cwd, bwrap=bwrap)
    env = scrubbed_environment(os.environ, passthrough)
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
    timed_out = False
    try:
        reading = asyncio.gather(_drain(proc.stdout, output_limit), _drain(proc.stderr, output_limit), proc.wait())
        try:
            (out, out_total), (errs, err_total), code = await asyncio.wait_for(reading, timeout)
        except TimeoutError:
            timed_out = True
            _kill_group(proc.pid)
            await proc.wait()
            return ToolResult.error(f"shell.exec: `{command}` timed out after {timeout:g}s and was killed")
    finally:
        if proc.returncode is None:  # cancelled from outside (the registry's timeout): leave nothing running
            _kill_group(proc.pid)
            with contextlib.suppress(Exception):
                await asyncio.wait_for(proc.wait(), 5)
    parts = [f"exit code: {code}"]
    stdout = out.decode("utf-8", errors="replace")
    stderr = errs.decode("utf-8", errors="replace")
    if stdout:
        parts.append(stdout.rstrip("\n"))
    if out_total > len(out):
        parts.append(f"[stdout: {out_total - len(out)} more bytes not kept]")
    if stderr:
        parts += ["[stderr]", stderr.rstrip("\n")]
    if err_total > len(errs):
        parts.append(f"[stderr: {err_total - len(errs)} more bytes not kept]")
    structured = {"exit_code": code, "timed_out": timed_out, "sandbox": str(context.sandbox.mode)}
    result = ToolResult.text("\n".join(parts), structured=structured)
    if code != 0:
        return ToolResult(content=result.content, structured=structured, is_error=True)
    return result
