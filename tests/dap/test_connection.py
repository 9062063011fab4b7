"""The DAP connection against an adapter that stops reading: a request fails by its timeout, never hangs."""

import os
import signal
import sys
from pathlib import Path

import anyio
import pytest

from kairox._rpc._errors import RpcTimeoutError
from kairox._rpc._process import ChildProcess
from kairox.dap._connection import DapConnection

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(30)]
PEER = Path(__file__).parents[1] / "_rpc" / "peer.py"


async def test_an_adapter_that_stops_reading_fails_the_request_by_its_timeout() -> None:
    child = ChildProcess([sys.executable, str(PEER)])
    async with child, DapConnection(child.stdout, child.stdin, peer="adapter", timeout=0.3) as dap:
        os.kill(child.pid, signal.SIGSTOP)
        try:
            with anyio.fail_after(10), pytest.raises(RpcTimeoutError) as caught:
                await dap.request("evaluate", {"expression": "x" * 2_000_000})
        finally:
            os.kill(child.pid, signal.SIGCONT)
    assert caught.value.message == "adapter did not answer evaluate within 0.3s"
