"""The dap.* tools with the real debugpy adapter: launch, attach, stepping, inspection, and no process left."""

import os
import signal
import sys
from pathlib import Path

import anyio
import pytest
from tests._rpc._procs import host_pid, process_gone
from tests.dap._fixtures import debugpy_config, free_port, wait_for_listener

from kairox._rpc._process import ChildProcess
from kairox._rpc._status import ServerStatus
from kairox.dap import (
    DapProgramStopped,
    DapServerFailed,
    DapServerRunning,
    DapServerStarting,
    DapServerStopped,
    DapToolProvider,
)
from kairox.errors import ToolCallError
from kairox.events import RecordingSink
from kairox.tools import Access, CallContext, ToolResult, ToolSource

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(60)]


class Debugger:
    def __init__(self, provider: DapToolProvider, workspace: Path) -> None:
        self.provider = provider
        self.context = CallContext(call_id="t", workspace=workspace)

    async def __call__(self, tool: str, **arguments: object) -> ToolResult:
        return await self.provider.call_tool(tool, dict(arguments), self.context)


def adapter_pid(provider: DapToolProvider, session: str = "s1") -> int:
    client = provider.sessions[session].lifecycle.client
    assert client is not None and client.pid is not None
    return client.pid


async def debuggee_pid(debug: Debugger, adapter: int, **session: str) -> int:
    """The debuggee's pid on the host (it runs in the sandbox's own pid namespace)."""
    said = await debug("dap.evaluate", expression="__import__('os').getpid()", **session)
    return host_pid(int(said.text_content().split()[0]), adapter)


async def test_dap_tools_are_execute_tools_of_source_dap(workspace: Path) -> None:
    async with DapToolProvider({"debugpy": debugpy_config()}, workspace=workspace) as provider:
        specs = await provider.list_tools()
    assert [s.name for s in specs] == [
        "dap.launch",
        "dap.attach",
        "dap.set_breakpoints",
        "dap.continue",
        "dap.next",
        "dap.step_in",
        "dap.step_out",
        "dap.pause",
        "dap.threads",
        "dap.stack_trace",
        "dap.scopes",
        "dap.variables",
        "dap.evaluate",
        "dap.disconnect",
    ]
    assert {(s.source, s.permission.access, s.origin) for s in specs} == {(ToolSource.DAP, Access.EXECUTE, "dap")}


async def test_launch_stop_inspect_step_and_run_to_the_end_leaves_no_process(workspace: Path) -> None:
    sink = RecordingSink()
    async with DapToolProvider({"debugpy": debugpy_config()}, workspace=workspace, events=sink) as provider:
        debug = Debugger(provider, workspace)
        launched = await debug("dap.launch", program="program.py", breakpoints=[{"path": "program.py", "line": 6}])
        adapter = adapter_pid(provider)
        debuggee = await debuggee_pid(debug, adapter)
        trace = await debug("dap.stack_trace")
        variables = await debug("dap.variables")
        evaluated = await debug("dap.evaluate", expression="x * 2")
        stepped = await debug("dap.next")
        ended = await debug("dap.continue")
        status = provider.status()
    assert launched.text_content().splitlines() == [
        "Debug session s1 (debugpy): program.py",
        "breakpoint program.py:6 set",
        "Stopped (breakpoint) at program.py:6 in compute, thread 1.",
        "    6 | y = x + n",
    ]
    assert launched.structured is not None
    assert launched.structured["frame"]["path"] == "program.py"
    assert (launched.structured["reason"], launched.structured["frame"]["line"]) == ("breakpoint", 6)
    assert [line.split(" [frame")[0] for line in trace.text_content().splitlines()] == [
        "#0 compute at program.py:6",
        "#1 main at program.py:12",
        "#2 <module> at program.py:17",
    ]
    assert variables.text_content().splitlines() == ["n = 1 (int)", "x = 42 (int)"]
    assert evaluated.text_content() == "84 (int)"
    assert stepped.text_content().splitlines() == [
        "Stopped (step) at program.py:7 in compute, thread 1.",
        "    7 | return y",
    ]
    assert ended.text_content().splitlines() == [
        "The program ended with exit code 0; debug session s1 is closed.",
        "Program output:",
        "total 43",
    ]
    assert status[0]["state"] == "ended"
    assert process_gone(adapter) and process_gone(debuggee)
    assert sink.events == [
        DapServerStarting(server="debugpy", session="s1"),
        DapServerRunning(server="debugpy", session="s1", pid=adapter),
        DapProgramStopped(session="s1", reason="breakpoint", path="program.py", line=6),
        DapProgramStopped(session="s1", reason="step", path="program.py", line=7),
        DapServerStopped(server="debugpy", session="s1"),
    ]


async def test_attach_to_a_program_listening_on_localhost(workspace: Path) -> None:
    port = free_port()
    argv = [
        sys.executable,
        "-m",
        "debugpy",
        "--listen",
        f"127.0.0.1:{port}",
        "--wait-for-client",
        "program.py",
    ]
    async with ChildProcess(argv, cwd=workspace) as program:
        await wait_for_listener(port)  # attaching does not wait long for a listener (ATTACH_CONNECT_WAIT)
        async with DapToolProvider({"debugpy": debugpy_config()}, workspace=workspace) as provider:
            debug = Debugger(provider, workspace)
            attached = await debug("dap.attach", port=port, breakpoints=[{"path": "program.py", "line": 6}])
            evaluated = await debug("dap.evaluate", expression="x * 2")
            ended = await debug("dap.continue")
        code = await program.wait(10)
    assert attached.text_content().splitlines() == [
        f"Debug session s1 (debugpy): attached to 127.0.0.1:{port}",
        "breakpoint program.py:6 set",
        "Stopped (breakpoint) at program.py:6 in compute, thread 1.",
        "    6 | y = x + n",
    ]
    assert evaluated.text_content() == "84 (int)"
    assert ended.text_content() == "The program ended; debug session s1 is closed."
    assert code == 0
    assert process_gone(program.pid)


async def test_structured_values_are_short_first_and_expand_on_request(workspace: Path) -> None:
    async with DapToolProvider({"debugpy": debugpy_config()}, workspace=workspace) as provider:
        debug = Debugger(provider, workspace)
        await debug("dap.launch", program="program.py", breakpoints=[{"path": "program.py", "line": 12}])
        listed = await debug("dap.variables")
        assert listed.structured is not None
        (data,) = listed.structured["variables"]
        expanded = await debug("dap.variables", variables_reference=data["variables_reference"])
        await debug("dap.disconnect")
    assert (data["name"], data["value"], data["type"]) == ("data", "{'a': [1, 2], 'b': 'text'}", "dict")
    assert data["variables_reference"] > 0
    lines = expanded.text_content().splitlines()
    assert lines[0].startswith("'a' = [1, 2] (list) [ref ")
    assert lines[1] == "'b' = 'text' (str)"


async def test_step_in_and_step_out_move_between_frames(workspace: Path) -> None:
    async with DapToolProvider({"debugpy": debugpy_config()}, workspace=workspace) as provider:
        debug = Debugger(provider, workspace)
        await debug("dap.launch", program="program.py", breakpoints=[{"path": "program.py", "line": 12}])
        stepped_in = await debug("dap.step_in")
        stepped_out = await debug("dap.step_out")
        await debug("dap.disconnect")
    assert stepped_in.text_content().splitlines()[0] == "Stopped (step) at program.py:5 in compute, thread 1."
    assert stepped_out.structured is not None
    assert (stepped_out.structured["frame"]["name"], stepped_out.structured["frame"]["line"]) == ("main", 12)


async def test_breakpoints_set_later_are_hit_by_continue(workspace: Path) -> None:
    async with DapToolProvider({"debugpy": debugpy_config()}, workspace=workspace) as provider:
        debug = Debugger(provider, workspace)
        await debug("dap.launch", program="program.py", breakpoints=[{"path": "program.py", "line": 11}])
        placed = await debug("dap.set_breakpoints", breakpoints=[{"path": "program.py", "line": 13}])
        hit = await debug("dap.continue")
        await debug("dap.disconnect")
    assert placed.text_content() == "program.py:13 set"
    assert hit.structured is not None and hit.structured["frame"]["line"] == 13


async def test_pause_stops_a_running_program_and_disconnect_ends_it(workspace: Path) -> None:
    async with DapToolProvider({"debugpy": debugpy_config()}, workspace=workspace) as provider:
        debug = Debugger(provider, workspace)
        running = await debug("dap.launch", program="loop.py", wait_sec=0.5)
        paused = await debug("dap.pause")
        adapter = adapter_pid(provider)
        pid = await debuggee_pid(debug, adapter)
        closed = await debug("dap.disconnect")
        with anyio.fail_after(10):
            while not process_gone(pid):
                await anyio.sleep(0.05)
    assert running.text_content().splitlines()[-1] == "The program is running (nothing stopped it within 0.5s)."
    assert paused.structured is not None and paused.structured["reason"] == "pause"
    assert closed.text_content() == "Debug session s1 is closed."
    assert process_gone(adapter)


async def test_leaving_the_provider_ends_live_sessions_and_their_programs(workspace: Path) -> None:
    async with DapToolProvider({"debugpy": debugpy_config()}, workspace=workspace) as provider:
        debug = Debugger(provider, workspace)
        await debug("dap.launch", program="program.py", breakpoints=[{"path": "program.py", "line": 6}])
        await debug("dap.launch", program="loop.py", wait_sec=0)
        adapters = [adapter_pid(provider, "s1"), adapter_pid(provider, "s2")]
        debuggee = await debuggee_pid(debug, adapters[0], session="s1")
    assert [process_gone(pid) for pid in [*adapters, debuggee]] == [True, True, True]


async def test_an_unknown_session_is_a_tool_error_naming_the_sessions(workspace: Path) -> None:
    async with DapToolProvider({"debugpy": debugpy_config()}, workspace=workspace) as provider:
        with pytest.raises(ToolCallError) as caught:
            await Debugger(provider, workspace)("dap.threads", session="nope")
    assert caught.value.message == "dap.threads failed: no debug session 'nope'"
    assert caught.value.hint == "sessions: none"


async def test_an_adapter_that_cannot_start_fails_with_its_reason(workspace: Path) -> None:
    sink = RecordingSink()
    config = debugpy_config(command="/nonexistent/kairox-test-adapter")
    async with DapToolProvider({"ghost": config}, workspace=workspace, events=sink) as provider:
        with pytest.raises(ToolCallError) as caught:
            await Debugger(provider, workspace)("dap.launch", program="program.py")
    reason = "cannot run '/nonexistent/kairox-test-adapter': No such file or directory"
    assert caught.value.message == f"dap.launch failed: debug adapter 'ghost' did not start: {reason}"
    assert sink.events == [
        DapServerStarting(server="ghost", session="s1"),
        DapServerFailed(server="ghost", session="s1", reason=reason),
    ]


async def test_a_stop_that_came_while_nothing_waited_is_reported_by_the_next_tool(workspace: Path) -> None:
    async with DapToolProvider({"debugpy": debugpy_config()}, workspace=workspace) as provider:
        debug = Debugger(provider, workspace)
        launched = await debug("dap.launch", program="loop.py", stop_on_entry=True, wait_sec=5)
        left_running = await debug("dap.continue", wait_sec=0)
        await debug("dap.set_breakpoints", breakpoints=[{"path": "loop.py", "line": 4}])
        client = provider.sessions["s1"].lifecycle.client
        assert client is not None and client.dap is not None
        with anyio.fail_after(10):
            while not any(e.get("event") == "stopped" for e in client.dap.events[provider.sessions["s1"].cursor :]):
                await anyio.sleep(0.02)
        caught_up = await debug("dap.next")
        await debug("dap.disconnect")
    assert launched.structured is not None and launched.structured["reason"] == "entry"
    assert left_running.text_content() == "The program is running (nothing stopped it within 0s)."
    assert caught_up.text_content().splitlines() == [
        "The program changed while nothing waited for it:",
        "Stopped (breakpoint) at loop.py:4 in <module>, thread 1.",
        "    4 | time.sleep(0.01)",
    ]


async def test_an_uncaught_exception_stops_with_its_description(workspace: Path) -> None:
    (workspace / "crash.py").write_text("def divide(a, b):\n    return a / b\n\n\ndivide(1, 0)\n")
    async with DapToolProvider({"debugpy": debugpy_config()}, workspace=workspace) as provider:
        debug = Debugger(provider, workspace)
        stopped = await debug("dap.launch", program="crash.py", stop_on_exceptions=["uncaught"])
        await debug("dap.disconnect")
    assert stopped.structured is not None
    assert (stopped.structured["reason"], stopped.structured["frame"]["line"]) == ("exception", 2)
    assert stopped.structured["description"] == "ZeroDivisionError: division by zero"


async def test_an_adapter_killed_mid_session_fails_the_session_clearly_and_leaves_no_process(
    workspace: Path,
) -> None:
    sink = RecordingSink()
    async with DapToolProvider({"debugpy": debugpy_config()}, workspace=workspace, events=sink) as provider:
        debug = Debugger(provider, workspace)
        await debug("dap.launch", program="program.py", breakpoints=[{"path": "program.py", "line": 6}])
        adapter = adapter_pid(provider)
        debuggee = await debuggee_pid(debug, adapter)
        os.killpg(adapter, signal.SIGKILL)  # the guard and the adapter under it
        with anyio.fail_after(10):
            while provider.sessions["s1"].lifecycle.status is not ServerStatus.FAILED:
                await anyio.sleep(0.02)
        with pytest.raises(ToolCallError) as caught:
            await debug("dap.evaluate", expression="x")
        again = await debug("dap.launch", program="program.py", breakpoints=[{"path": "program.py", "line": 6}])
        await debug("dap.disconnect")
    failed = sink.of_type(DapServerFailed)
    assert caught.value.message == (
        f"dap.evaluate failed: the debug adapter of session 's1' failed: {failed[0].reason}"
    )
    assert again.text_content().splitlines()[0] == "Debug session s2 (debugpy): program.py"
    assert [e.session for e in failed] == ["s1"]
    assert failed[0].reason.startswith("the adapter closed its output and was killed by SIGKILL")
    assert process_gone(adapter)
    with anyio.fail_after(10):  # the debuggee notices that its adapter is gone
        while not process_gone(debuggee):
            await anyio.sleep(0.05)


async def test_untrusted_and_disabled_adapters_are_left_out(workspace: Path) -> None:
    configs = {"debugpy": debugpy_config(), "off": debugpy_config(enabled=False), "new": debugpy_config()}
    async with DapToolProvider(configs, workspace=workspace, pending={"dap_servers.new"}) as provider:
        assert list(provider.configs) == ["debugpy"]
    async with DapToolProvider(configs, workspace=workspace, pending={"dap_servers"}) as provider:
        assert list(provider.configs) == []
        assert await provider.list_tools() == []


async def test_a_breakpoint_the_adapter_cannot_place_says_why(workspace: Path) -> None:
    async with DapToolProvider({"debugpy": debugpy_config()}, workspace=workspace) as provider:
        debug = Debugger(provider, workspace)
        launched = await debug(
            "dap.launch",
            program="program.py",
            breakpoints=[{"path": "program.py", "line": 6}, {"path": "nope.py", "line": 2}],
        )
        placed = await debug("dap.set_breakpoints", breakpoints=[{"path": "nope.py", "line": 3}])
        await debug("dap.disconnect")
    assert launched.text_content().splitlines()[1:3] == [
        "breakpoint program.py:6 set",
        "breakpoint nope.py:2 not verified (Breakpoint in file that does not exist.)",
    ]
    assert placed.text_content() == "nope.py:3 not verified (Breakpoint in file that does not exist.)"
    assert placed.structured == {
        "session": "s1",
        "breakpoints": [
            {"path": "nope.py", "line": 3, "verified": False, "message": "Breakpoint in file that does not exist."}
        ],
        "text": placed.text_content(),
    }


async def test_the_stopped_line_is_shown_as_python_counts_lines_past_a_form_feed(workspace: Path) -> None:
    (workspace / "paged.py").write_text('SEP = "a\u2028b"\n\x0c\nx = 42\ny = x * 2\n', encoding="utf-8")
    async with DapToolProvider({"debugpy": debugpy_config()}, workspace=workspace) as provider:
        debug = Debugger(provider, workspace)
        stopped = await debug("dap.launch", program="paged.py", breakpoints=[{"path": "paged.py", "line": 4}])
        await debug("dap.disconnect")
    assert stopped.text_content().splitlines()[-2:] == [
        "Stopped (breakpoint) at paged.py:4 in <module>, thread 1.",
        "    4 | y = x * 2",
    ]


async def test_a_session_whose_adapter_did_not_start_is_ended_and_its_id_free(workspace: Path) -> None:
    configs = {
        "ghost": debugpy_config(command="/nonexistent/kairox-test-adapter"),
        "debugpy": debugpy_config(),
    }
    async with DapToolProvider(configs, workspace=workspace) as provider:
        debug = Debugger(provider, workspace)
        with pytest.raises(ToolCallError):
            await debug("dap.launch", program="program.py", session="main", server="ghost")
        state = provider.status()[0]["state"]
        again = await debug("dap.launch", program="program.py", session="main", server="debugpy")
    assert state == "ended"
    assert again.text_content().splitlines()[0] == "Debug session main (debugpy): program.py"


async def test_a_session_id_cannot_lead_the_adapter_log_out_of_the_log_folder(workspace: Path) -> None:
    logs = workspace / "logs"
    async with DapToolProvider({"debugpy": debugpy_config()}, workspace=workspace, log_dir=logs) as provider:
        with pytest.raises(ToolCallError) as caught:
            await Debugger(provider, workspace)("dap.launch", program="program.py", session="x/../../escaped")
        sessions = dict(provider.sessions)
    assert caught.value.message == (
        "dap.launch failed: session id 'x/../../escaped' may only hold letters, digits, '-' and '_'"
    )
    assert sessions == {}
    assert not (workspace / "escaped.log").exists() and not logs.exists()


async def test_a_launch_the_adapter_refuses_fails_with_its_reason(workspace: Path) -> None:
    # debugpy answers such a launch at once, before any initialized event: that answer is the failure reported
    config = debugpy_config(launch={"python": ["/nonexistent/kairox-test-python"]})
    async with DapToolProvider({"debugpy": config}, workspace=workspace) as provider:
        with pytest.raises(ToolCallError) as caught:
            await Debugger(provider, workspace)("dap.launch", program="program.py")
        state = provider.status()[0]["state"]
    assert caught.value.message == (
        "dap.launch failed: debug adapter 'debugpy' could not launch: Failed to spawn launcher: "
        "[Errno 2] No such file or directory: '/nonexistent/kairox-test-python'"
    )
    assert state == "ended"
