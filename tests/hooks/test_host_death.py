"""Commands run outside bubblewrap (danger_full_access) die with a host that is SIGKILLed, grandchildren too."""

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

HOST = """
import anyio, sys
from pathlib import Path
from kairox.config import SandboxPolicy
from kairox.hooks import HookEvent, HookRegistry
from kairox.hooks._model import HookSpec
from kairox.tools import ToolCall, ToolSpec, ToolSource, PermissionProfile, Access
from kairox.sandbox import SandboxSettings

workspace = Path(sys.argv[1])
hook = HookSpec(event=HookEvent.PRE_TOOL_USE, command=sys.argv[2], name="config:pre_tool_use.0", timeout_sec=300)
hooks = HookRegistry([hook], workspace=workspace, sandbox=SandboxSettings(mode=SandboxPolicy.DANGER_FULL_ACCESS))
spec = ToolSpec(name="fs.read", description="", input_schema={"type": "object"}, source=ToolSource.BUILTIN,
                permission=PermissionProfile(access=Access.READ))
anyio.run(hooks.pre_tool_use, ToolCall(name="fs.read", arguments={}), spec)
"""


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # a zombie waiting for its (dead) parent's reaper is gone for our purpose
    stat = Path(f"/proc/{pid}/stat")
    return stat.exists() and stat.read_text().split()[2] != "Z"


@pytest.mark.timeout(60)
def test_unsandboxed_hook_and_its_background_child_die_with_a_killed_host(tmp_path: Path) -> None:
    pidfile = tmp_path / "sleeper.pid"
    command = f"sleep 300 & echo $! > {pidfile}; wait"
    host = subprocess.Popen(
        [sys.executable, "-c", HOST, str(tmp_path), command], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    try:
        deadline = time.monotonic() + 30
        while not (pidfile.exists() and pidfile.read_text().strip()) and time.monotonic() < deadline:
            assert host.poll() is None, host.stderr.read().decode() if host.stderr else ""
            time.sleep(0.05)
        sleeper = int(pidfile.read_text())
        assert alive(sleeper)
    finally:
        host.send_signal(signal.SIGKILL)
        host.wait()
    deadline = time.monotonic() + 10
    while alive(sleeper) and time.monotonic() < deadline:
        time.sleep(0.05)
    still = alive(sleeper)
    if still:
        os.kill(sleeper, signal.SIGKILL)  # a process this test started; do not leave it behind
    assert not still, "the hook's background child outlived the host"
