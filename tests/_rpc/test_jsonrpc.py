"""The JSON-RPC endpoint against a real peer process."""

import os
import signal
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest

from kairox._rpc._errors import RpcConnectionClosedError, RpcResponseError, RpcTimeoutError
from kairox._rpc._jsonrpc import JsonRpcEndpoint
from kairox._rpc._process import ChildProcess
from kairox._rpc._replies import MethodError

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(30)]
PEER = Path(__file__).with_name("peer.py")


@asynccontextmanager
async def peer(**options: Any) -> AsyncIterator[tuple[ChildProcess, JsonRpcEndpoint]]:
    async with ChildProcess([sys.executable, str(PEER)]) as child:
        endpoint = JsonRpcEndpoint(child.stdout, child.stdin, peer="peer", **options)
        async with endpoint:
            yield child, endpoint


async def test_answers_are_matched_to_their_requests_even_out_of_order() -> None:
    results: dict[str, Any] = {}
    async with peer() as (_, rpc):

        async def hold(name: str) -> None:
            results[name] = await rpc.request("hold", {"name": name})

        async with anyio.create_task_group() as group:
            group.start_soon(hold, "first")
            await anyio.sleep(0.05)
            group.start_soon(hold, "second")
        assert await rpc.request("echo", ["wörld", 1]) == ["wörld", 1]
    assert results == {"first": {"name": "first"}, "second": {"name": "second"}}


async def test_an_error_answer_raises_with_code_message_and_data() -> None:
    async with peer() as (_, rpc):
        with pytest.raises(RpcResponseError) as caught:
            await rpc.request("fail")
    assert (caught.value.code, caught.value.reason, caught.value.data) == (7, "no such thing", [1])
    assert caught.value.message == "peer answered fail with error 7: no such thing"


async def test_a_late_answer_times_out_and_the_request_is_cancelled() -> None:
    notes: list[Any] = []
    async with peer(cancel_method="$/cancelRequest") as (_, rpc):
        rpc.on_notification("cancelled", lambda method, params: notes.append(params))
        with pytest.raises(RpcTimeoutError) as caught:
            await rpc.request("hold", {"never": "paired"}, timeout=0.2)
        assert await rpc.request("echo", 1) == 1
        with anyio.fail_after(5):
            while not notes:
                await anyio.sleep(0.01)
    assert caught.value.message == "peer did not answer hold within 0.2s"
    assert notes == [{"id": 1}]


async def test_an_error_answer_with_a_code_that_is_not_a_number_still_fails_the_request() -> None:
    async with peer(timeout=5) as (_, rpc):
        with pytest.raises(RpcResponseError) as caught:
            await rpc.request("odd_error")
        assert await rpc.request("echo", 2) == 2
    assert (caught.value.code, caught.value.reason) == (-32603, "odd")


async def test_the_peers_requests_reach_handlers_and_unknown_ones_get_method_not_found() -> None:
    async def configuration(params: Any) -> Any:
        return [params["section"], "value"]

    async def refuse(params: Any) -> Any:
        raise MethodError(-32000, "refused")

    async with peer() as (_, rpc):
        rpc.on_request("workspace/configuration", configuration)
        rpc.on_request("refuse", refuse)
        known = await rpc.request("ask", {"method": "workspace/configuration", "params": {"section": "a"}})
        unknown = await rpc.request("ask", {"method": "client/whatever"})
        refused = await rpc.request("ask", {"method": "refuse"})
    assert known == {"jsonrpc": "2.0", "id": "q1", "result": ["a", "value"]}
    assert unknown == {
        "jsonrpc": "2.0",
        "id": "q1",
        "error": {"code": -32601, "message": "method not found: client/whatever"},
    }
    assert refused == {"jsonrpc": "2.0", "id": "q1", "error": {"code": -32000, "message": "refused"}}


async def test_notifications_reach_their_handler() -> None:
    notes: list[tuple[str, Any]] = []
    async with peer() as (_, rpc):
        rpc.on_notification("note", lambda method, params: notes.append((method, params)))
        await rpc.request("notify_me", {"x": 1})
    assert notes == [("note", {"x": 1})]


async def test_an_unreadable_message_is_kept_as_a_problem_and_reading_goes_on() -> None:
    async with peer() as (_, rpc):
        assert await rpc.request("garbage") == "after garbage"
        assert [p.body for p in rpc.problems] == [b"{oops"]


async def test_a_peer_that_dies_fails_the_pending_request_and_later_ones() -> None:
    async with peer(closed_reason=lambda: "the peer exited") as (child, rpc):
        with pytest.raises(RpcConnectionClosedError) as caught:
            await rpc.request("die")
        with pytest.raises(RpcConnectionClosedError):
            await rpc.request("echo", 1)
        assert await child.wait(5) == 4
    assert caught.value.message == "peer closed the connection before answering die: the peer exited"
    assert rpc.closed


async def test_a_peer_that_stops_reading_fails_requests_and_notifications_by_their_timeout() -> None:
    big = "x" * 2_000_000  # more than the pipe and the writer's buffer take
    async with peer(timeout=0.3) as (child, rpc):
        os.kill(child.pid, signal.SIGSTOP)
        try:
            with anyio.fail_after(10):
                with pytest.raises(RpcTimeoutError) as request:
                    await rpc.request("echo", big)
                with pytest.raises(RpcTimeoutError) as notification:
                    await rpc.notify("note", big)
        finally:
            os.kill(child.pid, signal.SIGCONT)
    assert request.value.message == "peer did not answer echo within 0.3s"
    assert notification.value.message == "peer did not read note within 0.3s"


async def test_a_peer_writing_an_endless_line_closes_the_connection_with_a_reason() -> None:
    noise = "import sys, time; sys.stdout.write('x' * (2**24 + 10)); sys.stdout.flush(); time.sleep(30)"
    child = ChildProcess([sys.executable, "-c", noise])
    async with child, JsonRpcEndpoint(child.stdout, child.stdin, peer="noisy", timeout=20) as rpc:
        with anyio.fail_after(10):
            await rpc.wait_closed()
    assert rpc.close_reason.startswith("reading failed: ")


async def test_a_request_whose_write_fails_raises_once_and_leaves_no_unread_failure() -> None:
    """A server that stops reading its input but keeps its output open: the write fails, the caller gets the
    closed connection, and no failed future is left for asyncio to report later (which a test runner, or an
    event loop's handler, turns into a second error)."""
    import asyncio
    import gc

    reported: list[dict[str, Any]] = []
    asyncio.get_running_loop().set_exception_handler(lambda _, context: reported.append(context))
    deaf = "import os, sys, time; os.close(0); sys.stdout.write('ready\\n'); sys.stdout.flush(); time.sleep(20)"
    async with ChildProcess([sys.executable, "-c", deaf]) as child:
        assert await child.stdout.readline() == b"ready\n"  # its input is closed from here on
        async with JsonRpcEndpoint(child.stdout, child.stdin, peer="deaf") as rpc:
            with pytest.raises(RpcConnectionClosedError, match="writing failed"):
                await rpc.request("echo", ["x" * 200_000])
    gc.collect()
    await anyio.sleep(0)
    assert [c.get("message") for c in reported] == []
