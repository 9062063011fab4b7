"""Running the real ``kairox`` command in a subprocess, as a user would."""

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any


@dataclass
class Run:
    code: int
    stdout: str
    stderr: str

    def json(self) -> Any:
        return json.loads(self.stdout)


def kairox(
    *args: str | Path,
    cwd: Path | None = None,
    env: dict[str, str] | None = None,
    timeout: float = 120,
    stdin: str | None = None,
) -> Run:
    full_env = {**os.environ, **(env or {})}
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
