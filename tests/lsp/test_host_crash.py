"""When Kairox itself dies (SIGKILL, no chance to clean up), its language servers, debug adapters and the
programs they debug die with it."""

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import anyio
import pytest
from tests._rpc._procs import host_pid, process_gone
from tests.lsp._fixtures import HERE

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(60)]

HOST = textwrap.dedent(
    """
    import sys, anyio
    from pathlib import Path
    from kairox.config import DapServerConfig, LspServerConfig
    from kairox.dap import DapToolProvider
    from kairox.lsp import LspServerLifecycle
    from kairox.tools import CallContext

    async def main(workspace: Path, busy: str) -> None:
        lsp = LspServerConfig(command=sys.executable, args=[busy], file_patterns=["*.py"])
        dap = DapServerConfig(command=sys.executable, args=["-m", "debugpy.adapter"], languages=["python"])
        async with (
            LspServerLifecycle("busy", lsp, workspace=workspace) as server,
            DapToolProvider({"debugpy": dap}, workspace=workspace) as debugger,
        ):
            client = await server.ensure_running()
            context = CallContext(call_id="t", workspace=workspace)
            await debugger.call_tool(
                "dap.launch", {"program": "loop.py", "stop_on_entry": True}, context
            )
            pid = await debugger.call_tool(
                "dap.evaluate", {"expression": "__import__('os').getpid()"}, context
            )
            adapter = debugger.sessions["s1"].lifecycle.client.pid
            print(client.child.pid, adapter, pid.text_content().split()[0], flush=True)
            await anyio.sleep(60)

    anyio.run(main, Path(sys.argv[1]), sys.argv[2])
    """
)


async def test_servers_adapters_and_debuggees_die_with_a_killed_host(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "loop.py").write_text("import time\n\nwhile True:\n    time.sleep(0.01)\n")
    host = subprocess.Popen(
        [sys.executable, "-c", HOST, str(workspace), str(HERE / "servers" / "busy_server.py")],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert host.stdout is not None
        line = await anyio.to_thread.run_sync(host.stdout.readline)
        pids = [int(p) for p in line.split()]
        pids[2] = host_pid(pids[2], pids[1])  # the debuggee said its pid inside the sandbox
    finally:
        os.kill(host.pid, signal.SIGKILL)
        host.wait()
    assert len(pids) == 3
    with anyio.fail_after(15):
        while not all(process_gone(pid) for pid in pids):
            await anyio.sleep(0.05)
