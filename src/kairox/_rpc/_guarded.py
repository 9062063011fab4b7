"""Starting a command under the guard (``_guard.py``), so its whole process group dies with the host."""

import os
import sys
from collections.abc import Sequence
from pathlib import Path

GUARD_SCRIPT = Path(__file__).with_name("_guard.py")


def guarded_argv(argv: Sequence[str]) -> list[str]:
    """``argv`` run by the guard: isolated interpreter, standard library only, told the host's pid (``argv`` as it
    is when the guard already runs it)."""
    if str(GUARD_SCRIPT) in argv[2:3]:
        return list(argv)
    return [sys.executable, "-I", "-S", str(GUARD_SCRIPT), "--parent", str(os.getpid()), "--", *argv]
