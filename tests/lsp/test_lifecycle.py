"""Server lifecycles: lazy start, one start for concurrent first uses, crash -> Failed -> restart, stopping within
the kill timeout with no process left, answers to the server's own requests, indexing progress."""

import os
import signal
import sys
from pathlib import Path

import anyio
import pytest
from tests._rpc._procs import children_of, process_gone
from tests.lsp._fixtures import HERE, SERVERS

from kairox._rpc._status import ServerStatus
from kairox.config import LspServerConfig
from kairox.errors import ToolCallError
from kairox.events import RecordingSink
from kairox.lsp import (
    LspServerFailed,
    LspServerLifecycle,
    LspServerRunning,
    LspServerStarting,
    LspServerStopped,
    LspStartupError,
    LspToolProvider,
)
from kairox.tools import CallContext

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(60)]


def busy_config(*args: str, **changes: object) -> LspServerConfig:
    fields: dict[str, object] = {
        "args": [str(HERE / "servers" / "busy_server.py"), *args],
        "file_patterns": ["*.py"],
        "settings": {"busy": {"mode": "fast"}},
        **changes,
    }
    return LspServerConfig(command=sys.executable, **fields)  # type: ignore[arg-type]


async def test_the_servers_own_requests_are_answered(project: Path) -> None:
    async with LspServerLifecycle("busy", busy_config(), workspace=project) as server:
        client = await server.ensure_running()
        replies: dict[str, object] = {}
        with anyio.fail_after(10):
            while len(replies) < 5:
                replies = await client.request("test/replies")
                await anyio.sleep(0.02)
    assert replies == {
        "window/workDoneProgress/create": None,
        "workspace/configuration": ["fast", None],
        "client/registerCapability": None,
        "workspace/applyEdit": {
            "applied": False,
            "failureReason": "Kairox shows edits as a preview; apply them with fs.edit",
        },
        "custom/unknown": {"code": -32601, "message": "method not found: custom/unknown"},
    }


async def test_results_say_the_server_is_still_indexing_instead_of_looking_empty(project: Path) -> None:
    context = CallContext(call_id="t", workspace=project)
    async with LspToolProvider({"busy": busy_config()}, workspace=project) as provider:
        client = await provider.servers["busy"].ensure_running()
        with anyio.fail_after(10):
            while not client.progress:
                await anyio.sleep(0.02)
        during = await provider.call_tool("lsp.definition", {"path": "pkg/main.py", "line": 1}, context)
        await client.request("test/endIndexing")
        after = await provider.call_tool("lsp.definition", {"path": "pkg/main.py", "line": 1}, context)
    assert during.text_content() == (
        "No definition found at pkg/main.py:1:1, but busy is still working (Indexing): try again shortly."
    )
    assert during.structured == {
        "server": "busy",
        "locations": [],
        "indexing": ["Indexing"],
        "message": during.text_content(),
    }
    assert after.text_content() == "No definition found at pkg/main.py:1:1."


async def test_diagnostics_are_pulled_from_a_server_that_offers_it(project: Path) -> None:
    context = CallContext(call_id="t", workspace=project)
    async with LspToolProvider({"busy": busy_config()}, workspace=project) as provider:
        result = await provider.call_tool("lsp.diagnostics", {"path": "pkg/main.py"}, context)
    assert result.text_content() == "pkg/main.py:1:6: warning: pulled, not pushed [busy/B1]"
    assert result.structured is not None and result.structured["mode"] == "pulled"


async def test_implementation_and_call_hierarchy_render_where_a_server_offers_them(project: Path) -> None:
    context = CallContext(call_id="t", workspace=project)
    where = {"path": "pkg/main.py", "line": 3, "column": 1}
    async with LspToolProvider({"busy": busy_config()}, workspace=project) as provider:
        # the indexing it reports ended: the answers across files are complete
        await (await provider.servers["busy"].ensure_running()).request("test/endIndexing")
        implementation = await provider.call_tool("lsp.implementation", where, context)
        incoming = await provider.call_tool("lsp.call_hierarchy", where, context)
        outgoing = await provider.call_tool("lsp.call_hierarchy", {**where, "direction": "outgoing"}, context)
    line = 'g = Greeter("wörld 🎉"); print(g.greet())'
    assert implementation.text_content() == f"pkg/main.py:3:5: {line}"
    # the server counts UTF-16 units (it negotiates nothing): "greet" is at unit 33 but character index 32,
    # since the emoji before it takes two units; the model's 1-based column is 33
    assert incoming.text_content() == f"caller  pkg/main.py:3:33: {line}"
    assert outgoing.text_content() == f"callee  pkg/main.py:3:33: {line}"
    assert outgoing.structured is not None and outgoing.structured["direction"] == "outgoing"


async def test_restart_starts_a_new_process(project: Path) -> None:
    sink = RecordingSink()
    async with LspServerLifecycle("busy", busy_config(), workspace=project, events=sink) as server:
        first = (await server.ensure_running()).child.pid
        second = (await server.restart()).child.pid
    assert first != second and process_gone(first) and process_gone(second)
    assert [type(e) for e in sink.events] == [
        LspServerStarting,
        LspServerRunning,
        LspServerStopped,
        LspServerStarting,
        LspServerRunning,
        LspServerStopped,
    ]


async def test_a_server_flooding_stderr_starts_and_its_stderr_tail_is_kept(project: Path) -> None:
    async with LspServerLifecycle("busy", busy_config("--flood", "2000000"), workspace=project) as server:
        client = await server.ensure_running()
        assert await client.request("textDocument/definition", {}) == []
        assert client.child.stderr.total_bytes >= 2_000_000
        assert client.child.stderr.text().endswith("x\n")


async def test_concurrent_first_uses_start_one_server(project: Path) -> None:
    sink = RecordingSink()
    async with LspServerLifecycle("jedi", SERVERS["jedi"](), workspace=project, events=sink) as server:
        clients = []

        async def use() -> None:
            clients.append(await server.ensure_running())

        async with anyio.create_task_group() as group:
            for _ in range(5):
                group.start_soon(use)
        pid = clients[0].child.pid
    assert len({id(c) for c in clients}) == 1
    assert sink.events == [
        LspServerStarting(server="jedi"),
        LspServerRunning(server="jedi", pid=pid, position_encoding="utf-32"),
        LspServerStopped(server="jedi"),
    ]
    assert process_gone(pid)


@pytest.mark.timeout(90)
async def test_a_server_killed_mid_request_fails_it_clearly_then_runs_again(project: Path) -> None:
    sink = RecordingSink()
    context = CallContext(call_id="t", workspace=project)
    where = {"path": "pkg/main.py", "line": 4, "column": 7}
    async with LspToolProvider({"jedi": SERVERS["jedi"]()}, workspace=project, events=sink) as provider:
        server = provider.servers["jedi"]
        first = await server.ensure_running()
        first_pid = first.child.pid
        await first.sync_document(project / "pkg" / "main.py")
        os.killpg(
            first_pid, signal.SIGSTOP
        )  # the server and its guard: the request below stays unanswered until the kill
        failure: list[BaseException] = []

        async def definition() -> None:
            try:
                await provider.call_tool("lsp.definition", where, context)
            except ToolCallError as exc:
                failure.append(exc)

        async with anyio.create_task_group() as group:
            group.start_soon(definition)
            assert first.rpc is not None
            with anyio.fail_after(10):
                while not first.rpc._pending:
                    await anyio.sleep(0.01)
            os.killpg(first_pid, signal.SIGKILL)
        with anyio.fail_after(10):  # the supervisor notices the crash on its own
            while server.status is not ServerStatus.FAILED:
                await anyio.sleep(0.01)
        again = await provider.call_tool("lsp.definition", where, context)
        second_pid = server.client.child.pid if server.client else 0
    assert len(failure) == 1
    message = str(failure[0])
    assert message.startswith(
        "lsp.definition failed: language server 'jedi' closed the connection before answering "
        "textDocument/definition: the server closed its output and was killed by SIGKILL"
    )
    assert again.text_content() == "pkg/greeting.py:15:5: def make(name: str) -> Greeter:"
    failed = sink.of_type(LspServerFailed)
    assert [type(e) for e in sink.events] == [
        LspServerStarting,
        LspServerRunning,
        LspServerFailed,
        LspServerStarting,
        LspServerRunning,
        LspServerStopped,
    ]
    assert sink.of_type(LspServerStarting) == [
        LspServerStarting(server="jedi"),
        LspServerStarting(server="jedi", restart=True),
    ]
    assert failed[0].reason.startswith("the server closed its output and was killed by SIGKILL")
    assert first_pid != second_pid
    assert process_gone(first_pid) and process_gone(second_pid)


@pytest.mark.timeout(30)
async def test_stopping_a_verbose_jedi_ends_within_the_kill_timeout_and_leaves_no_process(
    project: Path,
) -> None:
    config = SERVERS["jedi"](args=["-v"], shutdown_timeout_sec=2.0)
    sink = RecordingSink()
    async with LspServerLifecycle("jedi", config, workspace=project, events=sink) as server:
        client = await server.ensure_running()
        pid = client.child.pid
        for _ in range(3):
            await client.sync_document(project / "pkg" / "main.py")
            await client.request("textDocument/hover", {
                "textDocument": {"uri": (project / "pkg" / "main.py").as_uri()},
                "position": {"line": 3, "character": 7},
            })  # fmt: skip
        with anyio.fail_after(config.shutdown_timeout_sec + 1):
            await server.stop()
        assert server.status is ServerStatus.STOPPED
    assert client.child.stderr.total_bytes > 0
    assert process_gone(pid)
    assert children_of(pid) == []
    assert sink.events[-1] == LspServerStopped(server="jedi")


async def test_a_server_whose_command_is_missing_fails_with_the_reason(project: Path) -> None:
    sink = RecordingSink()
    config = LspServerConfig(command="/nonexistent/kairox-test-ls", file_patterns=["*.py"])
    async with LspServerLifecycle("ghost", config, workspace=project, events=sink) as server:
        with pytest.raises(LspStartupError) as caught:
            await server.ensure_running()
        status = server.status
    reason = "cannot run '/nonexistent/kairox-test-ls': No such file or directory"
    assert caught.value.message == f"language server 'ghost' did not start: {reason}"
    assert status is ServerStatus.FAILED
    assert sink.events == [LspServerStarting(server="ghost"), LspServerFailed(server="ghost", reason=reason)]


async def test_a_server_that_exits_before_initialize_answers_fails_with_its_stderr(project: Path) -> None:
    config = LspServerConfig(
        command=sys.executable, args=["-c", "import sys; sys.stderr.write('bad flag --x'); sys.exit(3)"]
    )
    async with LspServerLifecycle("quitter", config, workspace=project) as server:
        with pytest.raises(LspStartupError) as caught:
            await server.ensure_running()
    assert "closed the connection before answering initialize" in caught.value.message
    assert "bad flag --x" in caught.value.message + caught.value.stderr_tail


async def test_untrusted_and_disabled_servers_are_left_out(project: Path) -> None:
    configs = {"jedi": SERVERS["jedi"](), "off": SERVERS["pylsp"](enabled=False), "new": SERVERS["pylsp"]()}
    async with LspToolProvider(configs, workspace=project, pending={"lsp_servers.new"}) as provider:
        assert list(provider.servers) == ["jedi"]
    async with LspToolProvider(configs, workspace=project, pending={"lsp_servers"}) as provider:
        assert list(provider.servers) == []
    async with LspToolProvider({}, workspace=project) as empty:
        assert await empty.list_tools() == []


@pytest.mark.timeout(30)
async def test_a_server_that_stops_reading_fails_the_tool_by_its_timeout_and_still_stops_in_time(
    project: Path,
) -> None:
    (project / "pkg" / "big.py").write_text("x = 1\n" * 400_000)  # more than a pipe and a writer buffer hold
    config = busy_config(request_timeout_sec=0.5, shutdown_timeout_sec=1.0)
    context = CallContext(call_id="t", workspace=project)
    async with LspToolProvider({"busy": config}, workspace=project) as provider:
        server = provider.servers["busy"]
        pid = (await server.ensure_running()).child.pid
        os.killpg(pid, signal.SIGSTOP)
        with anyio.fail_after(10), pytest.raises(ToolCallError) as caught:
            await provider.call_tool("lsp.definition", {"path": "pkg/big.py", "line": 1}, context)
        with anyio.fail_after(config.shutdown_timeout_sec + 1):
            await server.stop()
    assert caught.value.message == (
        "lsp.definition failed: language server 'busy' did not read textDocument/didOpen within 0.5s"
    )
    assert server.status is ServerStatus.STOPPED
    assert process_gone(pid)


async def test_a_cancelled_provider_still_stops_its_servers(project: Path) -> None:
    sink = RecordingSink()
    with anyio.CancelScope() as scope:
        async with LspToolProvider({"busy": busy_config()}, workspace=project, events=sink) as provider:
            server = provider.servers["busy"]
            pid = (await server.ensure_running()).child.pid
            scope.cancel()
            await anyio.sleep(5)
    assert scope.cancelled_caught
    assert process_gone(pid)
    assert server.status is ServerStatus.STOPPED
    assert sink.events[-1] == LspServerStopped(server="busy")


async def test_a_relative_command_runs_from_the_folder_of_the_file_that_configured_it(
    project: Path, tmp_path: Path
) -> None:
    plugin = tmp_path / "plugin"
    (plugin / "bin").mkdir(parents=True)
    launcher = plugin / "bin" / "busy-ls"
    launcher.write_text(f'#!/bin/sh\nexec "{sys.executable}" "{HERE / "servers" / "busy_server.py"}"\n')
    launcher.chmod(0o755)
    config = LspServerConfig(command="./bin/busy-ls", file_patterns=["*.py"])
    async with LspServerLifecycle("busy", config, workspace=project, base_dir=plugin) as server:
        client = await server.ensure_running()
        info = client.server_info
    assert client.child.argv == [str(launcher)]
    assert info == {"name": "busy"}


async def test_a_server_name_cannot_lead_its_log_file_out_of_the_log_folder(project: Path, tmp_path: Path) -> None:
    logs = tmp_path / "logs"
    async with LspToolProvider({"../../escaped": busy_config()}, workspace=project, log_dir=logs) as provider:
        await provider.servers["../../escaped"].ensure_running()
    assert [p.name for p in logs.iterdir()] == ["lsp-.._.._escaped.log"]
    assert not (tmp_path / "escaped.log").exists()
