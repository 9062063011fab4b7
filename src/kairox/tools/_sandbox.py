"""Running commands under bubblewrap (Y6), for ``shell.exec``, hook commands and plugin command tools.

``read_only``: the whole file system read-only. ``workspace_write``: the writable roots bound read-write, with
``.git``, ``.kairox``, ``kairox.toml`` and ``.mcp.json`` inside each root bound back read-only. The network is
unshared unless ``network_access``. ``danger_full_access``: no sandbox. When bwrap is missing or cannot start, callers fail
closed with ``SandboxUnavailableError``.
"""

import os
import shutil
import subprocess
from collections.abc import Sequence
from pathlib import Path

from kairox._rpc import guarded_argv
from kairox.config import SandboxPolicy
from kairox.errors import SandboxUnavailableError
from kairox.tools._model import SandboxSettings

READ_ONLY_INSIDE_ROOTS = (".git", ".kairox", "kairox.toml", ".mcp.json")
"""Kept read-only inside each writable root: the repository and Kairox's project configuration, which a command
must not change to give later sessions more authority."""
_INSTALL_HINT = (
    "install bubblewrap (Debian/Ubuntu: apt-get install bubblewrap; Fedora: dnf install bubblewrap), "
    'or opt out of the sandbox with policy.sandbox_policy = "danger_full_access"'
)
_probe_cache: dict[tuple[str, bool], str | None] = {}


def find_bwrap() -> str | None:
    return shutil.which("bwrap")


def sandboxed_argv(
    argv: Sequence[str],
    settings: SandboxSettings,
    workspace: Path,
    *,
    cwd: Path | None = None,
    bwrap: str | None = None,
) -> list[str]:
    """``argv`` wrapped in a bwrap invocation for ``settings``; under ``danger_full_access``, in the guard.

    Does not check that bwrap works; call ``check_sandbox`` first (once) to fail closed.
    """
    if settings.mode is SandboxPolicy.DANGER_FULL_ACCESS:
        # no bwrap --die-with-parent out here: the guard takes the command's group down with the host
        return guarded_argv(argv)
    args = [bwrap or find_bwrap() or "bwrap", "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"]
    if settings.mode is SandboxPolicy.WORKSPACE_WRITE:
        roots = sorted({Path(os.path.realpath(r)) for r in (workspace, *settings.writable_roots)}, key=lambda p: len(p.parts))
        roots = [r for r in roots if r.exists()]
        for root in roots:
            args += ["--bind", str(root), str(root)]
        # bound after the roots so they stay read-only inside them
        for root in roots:
            for name in READ_ONLY_INSIDE_ROOTS:
                inner = root / name
                if inner.exists():
                    args += ["--ro-bind", str(inner), str(inner)]
    if not settings.network_access:
        args.append("--unshare-net")
    args += ["--unshare-pid", "--die-with-parent", "--new-session"]
    args += ["--chdir", str(cwd or workspace)]
    args.append("--")
    args += list(argv)
    return args


def check_sandbox(settings: SandboxSettings, *, bwrap: str | None = None) -> str | None:
    """The bwrap executable to use for ``settings`` (None when no sandbox is wanted).

    Raises ``SandboxUnavailableError`` when bwrap is missing or cannot create the sandbox here (for example
    inside a container without user namespaces). The probe runs once per process and network setting.
    """
    if settings.mode is SandboxPolicy.DANGER_FULL_ACCESS:
        return None
    path = bwrap or find_bwrap()
    if path is None:
        raise SandboxUnavailableError(
            f"the {settings.mode} sandbox needs bubblewrap (bwrap), which is not installed", hint=_INSTALL_HINT
        )
    key = (path, settings.network_access)
    if key not in _probe_cache:
        probe = [path, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--unshare-pid"]
        if not settings.network_access:
            probe.append("--unshare-net")
        probe += ["--", "true"]
        try:
            done = subprocess.run(probe, capture_output=True, text=True, timeout=20, check=False)
            _probe_cache[key] = None if done.returncode == 0 else (done.stderr.strip() or f"exit code {done.returncode}")
        except (OSError, subprocess.TimeoutExpired) as exc:
            _probe_cache[key] = str(exc)
    problem = _probe_cache[key]
    if problem is not None:
        raise SandboxUnavailableError(f"bubblewrap ({path}) cannot create the {settings.mode} sandbox: {problem}", hint=_INSTALL_HINT)
    return path
