"""Tool lists from the cache, servers started on first use (M4): hits, misses, invalidation, lazy starts, background
starts (bounded, held until asked for, overtaken by a call), a tool that is gone, required servers, failures, and the
protocol era remembered, with real stdio servers."""

import sys
from pathlib import Path

import anyio
import pytest
from tests._rpc._procs import process_gone

from kairox._rpc._status import ServerStatus
from kairox.config import McpServerConfig
from kairox.mcp import McpServerManager
from kairox.mcp._tool_cache import ToolListCache
from kairox.tools import CallContext

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(60)]

LEAN = Path(__file__).resolve().parents[1] / "servers" / "lean_server.py"


def lean(tmp_path: Path, *args: str, **settings: object) -> McpServerConfig:
    tools = tmp_path / "tools.txt"
    if not tools.exists():
        tools.write_text("alpha\nbeta\n", encoding="utf-8")
    argv = [str(LEAN), "--tools-file", str(tools), "--methods-log", str(tmp_path / "methods.log"), *args]
    return McpServerConfig(command=sys.executable, args=argv, **settings)  # type: ignore[arg-type]


def methods(tmp_path: Path) -> list[str]:
    log = tmp_path / "methods.log"
    return log.read_text(encoding="utf-8").split() if log.exists() else []


async def _names(manager: McpServerManager, server: str = "lean") -> list[str]:
    return [spec.name for spec in await manager.adapters[server].list_tools()]


async def _call(manager: McpServerManager, tool: str, **arguments: object) -> tuple[bool, str]:
    result = await manager.adapters["lean"].call_tool(
        f"mcp__lean__{tool}", dict(arguments), CallContext(call_id="c1", workspace=manager.workspace)
    )
    return result.is_error, result.text_content()


async def test_a_cold_start_waits_and_fills_the_cache_then_a_warm_one_lists_at_once(
    tmp_path: Path, isolated_home: Path
) -> None:
    config = lean(tmp_path)
    async with McpServerManager({"lean": config}, workspace=tmp_path, home=isolated_home) as cold:
        assert cold.clients["lean"].status is ServerStatus.READY and not cold.clients["lean"].from_cache
    cached = ToolListCache(isolated_home).load("lean", config)
    assert cached is not None and [t.name for t in cached.tools] == ["echo", "alpha", "beta", "retool"]
    assert cached.server_info == {"name": "lean", "version": "1"}

    slow = lean(tmp_path, "--delay-init-ms", "4000")  # another configuration: a miss, started and waited for as today
    assert ToolListCache(isolated_home).load("lean", slow) is None
    async with McpServerManager({"lean": slow}, workspace=tmp_path, home=isolated_home):
        pass
    async with McpServerManager({"lean": slow}, workspace=tmp_path, home=isolated_home) as warm:
        client = warm.clients["lean"]
        # entered while the server still delays its handshake: the tools are the cached ones
        assert client.from_cache and client.status in (ServerStatus.STOPPED, ServerStatus.STARTING)
        assert await _names(warm) == ["mcp__lean__echo", "mcp__lean__alpha", "mcp__lean__beta", "mcp__lean__retool"]
        assert await _call(warm, "echo", message="hi") == (False, "hi")  # waits for its server
        assert not client.from_cache and client.status is ServerStatus.READY


async def test_list_changed_and_a_new_server_version_replace_the_cached_lists(
    tmp_path: Path, isolated_home: Path
) -> None:
    config = lean(tmp_path)
    async with McpServerManager({"lean": config}, workspace=tmp_path, home=isolated_home) as manager:
        assert await _call(manager, "retool", names=["gamma"]) == (False, "retooled")
        client = manager.clients["lean"]
        with anyio.fail_after(10):  # the re-listing after list_changed
            while [t.name for t in client.tools] != ["echo", "gamma", "retool"]:
                await anyio.sleep(0.05)
    cached = ToolListCache(isolated_home).load("lean", config)
    assert cached is not None and [t.name for t in cached.tools] == ["echo", "gamma", "retool"]

    # the same configuration, but the server now reports version 2 and lists other tools: the entry follows it
    (tmp_path / "tools.txt").write_text("delta\n", encoding="utf-8")
    upgraded = lean(tmp_path)
    upgraded = upgraded.model_copy(update={"args": [*upgraded.args, "--server-version", "2"]})
    async with McpServerManager({"lean": upgraded}, workspace=tmp_path, home=isolated_home) as manager:
        await manager.clients["lean"].wait_for(lambda status: status is ServerStatus.READY)
    again = ToolListCache(isolated_home).load("lean", upgraded)
    assert again is not None and again.server_info == {"name": "lean", "version": "2"}
    assert [t.name for t in again.tools] == ["echo", "delta", "retool"]
    assert not list((isolated_home / "cache" / "mcp-tools").glob("lean-*.tmp"))


async def test_lazy_server_starts_on_its_first_call_with_initialize_first(tmp_path: Path, isolated_home: Path) -> None:
    config = lean(tmp_path, startup="lazy")
    async with McpServerManager({"lean": config}, workspace=tmp_path, home=isolated_home) as manager:  # cold: as today
        assert manager.clients["lean"].status is ServerStatus.READY
    assert methods(tmp_path)[:2] == ["server/discover", "initialize"]  # the first start probes the era
    (tmp_path / "methods.log").unlink()

    async with McpServerManager({"lean": config}, workspace=tmp_path, home=isolated_home) as manager:
        client = manager.clients["lean"]
        assert client.status is ServerStatus.STOPPED and client.pid is None
        assert methods(tmp_path) == []  # nothing started
        assert "mcp__lean__alpha" in await _names(manager)
        assert await _call(manager, "echo", message="first") == (False, "first")
        assert client.status is ServerStatus.READY
    # known to be handshake-era: `initialize` first, no probe
    assert methods(tmp_path)[:3] == ["initialize", "tools/list", "tools/call"]


async def test_a_tool_gone_since_it_was_cached_is_an_error_the_model_can_read_and_the_cache_is_corrected(
    tmp_path: Path, isolated_home: Path
) -> None:
    config = lean(tmp_path, startup="lazy")
    async with McpServerManager({"lean": config}, workspace=tmp_path, home=isolated_home):
        pass
    (tmp_path / "tools.txt").write_text("beta\n", encoding="utf-8")  # the server dropped alpha since
    async with McpServerManager({"lean": config}, workspace=tmp_path, home=isolated_home) as manager:
        assert "mcp__lean__alpha" in await _names(manager)
        is_error, text = await _call(manager, "alpha", message="x")
        assert is_error and "mcp__lean__alpha is no longer a tool of MCP server 'lean'" in text
        assert "mcp__lean__alpha" not in await _names(manager)
    cached = ToolListCache(isolated_home).load("lean", config)
    assert cached is not None and [t.name for t in cached.tools] == ["echo", "beta", "retool"]


async def test_required_servers_are_waited_for_even_with_a_warm_cache(tmp_path: Path, isolated_home: Path) -> None:
    config = lean(tmp_path, "--delay-init-ms", "1500", required=True, startup="lazy")
    for _ in range(2):
        async with McpServerManager({"lean": config}, workspace=tmp_path, home=isolated_home) as manager:
            assert manager.clients["lean"].from_cache is False  # listed by the server itself before entering
            assert manager.clients["lean"].status is ServerStatus.READY


async def test_a_server_failing_behind_its_cached_tools_is_reported_with_its_stderr_and_its_tools_leave(
    tmp_path: Path, isolated_home: Path
) -> None:
    config = lean(tmp_path, "--fail-if-missing")
    async with McpServerManager({"lean": config}, workspace=tmp_path, home=isolated_home):
        pass
    (tmp_path / "tools.txt").unlink()
    async with McpServerManager({"lean": config}, workspace=tmp_path, home=isolated_home) as manager:
        client = manager.clients["lean"]
        assert client.from_cache
        await client.settled.wait()
        assert client.status is ServerStatus.FAILED
        assert "tools.txt is missing" in client.stderr_tail
        assert await _names(manager) == []


async def test_an_eager_start_fills_the_cache_a_lazy_start_then_reads_and_filters_apply_on_reading(
    tmp_path: Path, isolated_home: Path
) -> None:
    eager = lean(tmp_path)
    async with McpServerManager({"lean": eager}, workspace=tmp_path, home=isolated_home):
        pass
    # how Kairox uses the lists (when it starts, which tools it offers) is not what the server lists: still a hit
    lazy = lean(tmp_path, startup="lazy", disabled_tools=["beta"], tool_timeout_sec=5)
    async with McpServerManager({"lean": lazy}, workspace=tmp_path, home=isolated_home) as warm:
        client = warm.clients["lean"]
        assert client.from_cache and client.lazy_start is not None and client.status is ServerStatus.STOPPED
        assert await _names(warm) == ["mcp__lean__echo", "mcp__lean__alpha", "mcp__lean__retool"]
    # what decides the lists (the command line) is a miss
    assert ToolListCache(isolated_home).load("lean", lean(tmp_path, "--delay-init-ms", "1")) is None


def _times(log: Path) -> dict[int, dict[str, float]]:
    """Per server process, when it booted and when it answered ``tools/list`` (``lean_server.py --times-log``)."""
    out: dict[int, dict[str, float]] = {}
    for line in log.read_text(encoding="utf-8").splitlines() if log.exists() else ():
        what, pid, at = line.split()
        out.setdefault(int(pid), {})[what] = float(at)
    return out


def _server(pid: int | None) -> int | None:
    """The server's own pid: a server started without a sandbox runs under a guard process, whose child it is."""
    if pid is None:
        return None
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as handle:
            guarded = b"_guard.py" in handle.read()
        with open(f"/proc/{pid}/task/{pid}/children", encoding="ascii") as handle:
            children = [int(child) for child in handle.read().split()]
    except OSError:
        return pid
    return children[0] if guarded and children else pid


def _most_at_once(spans: list[tuple[float, float]]) -> int:
    """The most spans that were open at one moment."""
    edges = sorted([(start, 1) for start, _ in spans] + [(end, -1) for _, end in spans], key=lambda e: (e[0], e[1]))
    running = most = 0
    for _, step in edges:
        running += step
        most = max(most, running)
    return most


def _timed(tmp_path: Path, name: str, *args: str, **settings: object) -> McpServerConfig:
    argv = [str(LEAN), "--times-log", str(tmp_path / "times.log"), "--server-version", name, *args]
    return McpServerConfig(command=sys.executable, args=argv, **settings)  # type: ignore[arg-type]


async def test_background_starts_run_at_most_background_starts_at_a_time(tmp_path: Path, isolated_home: Path) -> None:
    servers = {f"s{i}": _timed(tmp_path, f"s{i}", "--delay-init-ms", "300") for i in range(6)}
    async with McpServerManager(servers, workspace=tmp_path, home=isolated_home):
        pass  # cold: every server is started (all at once) and waited for; their lists are cached
    cold = _times(tmp_path / "times.log")
    assert _most_at_once([(t["boot"], t["listed"]) for t in cold.values()]) > 2  # nothing bounds the cold starts
    (tmp_path / "times.log").unlink()
    async with McpServerManager(servers, workspace=tmp_path, home=isolated_home, background_starts=2) as manager:
        assert all(client.from_cache for client in manager.clients.values())
        with anyio.fail_after(30):
            for client in manager.clients.values():
                await client.wait_for(lambda status: status is ServerStatus.READY)
    warm = _times(tmp_path / "times.log")
    assert len(warm) == 6 and all("listed" in t for t in warm.values())
    assert _most_at_once([(t["boot"], t["listed"]) for t in warm.values()]) <= 2


async def test_held_background_starts_wait_for_start_background_and_a_call_starts_its_server_at_once(
    tmp_path: Path, isolated_home: Path
) -> None:
    servers = {f"s{i}": _timed(tmp_path, f"s{i}", "--delay-init-ms", "500") for i in range(3)}
    servers["req"] = _timed(tmp_path, "req", "--delay-init-ms", "500", required=True)
    async with McpServerManager(servers, workspace=tmp_path, home=isolated_home):
        pass
    (tmp_path / "times.log").unlink()
    async with McpServerManager(servers, workspace=tmp_path, home=isolated_home, hold_background=True) as manager:
        clients = manager.clients
        # a required server is waited for, cached or not; the others are held back
        assert clients["req"].status is ServerStatus.READY
        booted = set(_times(tmp_path / "times.log"))
        assert booted == {_server(clients["req"].pid)}
        await anyio.sleep(0.5)  # let the loop run: a held start does not begin by itself
        assert [clients[f"s{i}"].status for i in range(3)] == [ServerStatus.STOPPED] * 3
        assert _times(tmp_path / "times.log").keys() == booted
        assert "mcp__s1__echo" in await _names(manager, "s1")  # listed from the cache meanwhile
        # a call of one of its tools starts its server at once and waits for it (the handshake takes 500 ms)
        result = await manager.adapters["s1"].call_tool(
            "mcp__s1__echo", {"message": "early"}, CallContext(call_id="c1", workspace=tmp_path)
        )
        assert (result.is_error, result.text_content()) == (False, "early")
        assert _times(tmp_path / "times.log").keys() == booted | {_server(clients["s1"].pid)}
        assert [clients[f"s{i}"].status for i in range(3)] == [
            ServerStatus.STOPPED,
            ServerStatus.READY,
            ServerStatus.STOPPED,
        ]
        manager.start_background()
        with anyio.fail_after(30):
            for client in clients.values():
                await client.wait_for(lambda status: status is ServerStatus.READY)
    assert len(_times(tmp_path / "times.log")) == 4  # the server a call started was not started twice


async def test_a_server_stopped_before_its_background_start_never_starts_and_its_calls_say_so(
    tmp_path: Path, isolated_home: Path
) -> None:
    servers = {name: _timed(tmp_path, name) for name in ("kept", "stopped")}
    async with McpServerManager(servers, workspace=tmp_path, home=isolated_home):
        pass
    (tmp_path / "times.log").unlink()
    async with McpServerManager(servers, workspace=tmp_path, home=isolated_home, hold_background=True) as manager:
        await manager.stop_one("stopped")
        manager.start_background()
        with anyio.fail_after(30):
            await manager.clients["kept"].wait_for(lambda status: status is ServerStatus.READY)
            await anyio.sleep(0.5)  # the queue went on past it: it had its turn
        result = await manager.adapters["stopped"].call_tool(
            "mcp__stopped__echo", {"message": "x"}, CallContext(call_id="c1", workspace=tmp_path)
        )
        assert manager.clients["stopped"].status is ServerStatus.STOPPED
        assert _times(tmp_path / "times.log").keys() == {_server(manager.clients["kept"].pid)}
        await manager.start_one("stopped")  # started by hand, it runs
        assert manager.clients["stopped"].status is ServerStatus.READY
    assert result.is_error and "stopped" in result.text_content(), result.text_content()


async def test_a_call_before_a_held_background_start_waits_under_the_servers_startup_timeout(
    tmp_path: Path, isolated_home: Path
) -> None:
    slow = _timed(tmp_path, "slow", "--delay-init-ms", "1500")
    async with McpServerManager({"slow": slow}, workspace=tmp_path, home=isolated_home):
        pass  # cold, with the default timeout: started, listed and cached
    # the timeout is not part of the cache key: a warm start whose handshake now takes longer than it allows
    hurried = slow.model_copy(update={"startup_timeout_sec": 0.5})
    async with McpServerManager({"slow": hurried}, workspace=tmp_path, home=isolated_home, hold_background=True) as m:
        assert m.clients["slow"].from_cache and m.clients["slow"].status is ServerStatus.STOPPED
        result = await m.adapters["slow"].call_tool(
            "mcp__slow__echo", {"message": "x"}, CallContext(call_id="c1", workspace=tmp_path)
        )
        assert result.is_error and "did not finish the MCP handshake within 0.5s" in result.text_content()
        assert m.clients["slow"].status is ServerStatus.FAILED


async def test_leaving_while_background_starts_are_under_way_stops_them_and_begins_no_other(
    tmp_path: Path, isolated_home: Path
) -> None:
    servers = {f"s{i}": _timed(tmp_path, f"s{i}", "--delay-init-ms", "2000") for i in range(5)}
    async with McpServerManager(servers, workspace=tmp_path, home=isolated_home):
        pass
    (tmp_path / "times.log").unlink()
    async with McpServerManager(servers, workspace=tmp_path, home=isolated_home, background_starts=2) as manager:
        with anyio.fail_after(30):  # two are spawned and shake hands (slowly): leave now
            while len(_times(tmp_path / "times.log")) < 2:
                await anyio.sleep(0.02)
        assert sum(c.status is ServerStatus.STARTING for c in manager.clients.values()) == 2
    booted = _times(tmp_path / "times.log")
    assert len(booted) == 2 and all("listed" not in t for t in booted.values())
    assert all(process_gone(pid) for pid in booted)
    assert {c.status for c in manager.clients.values()} == {ServerStatus.STOPPED}


async def test_a_start_that_lists_what_the_entry_holds_leaves_the_entry_file_and_a_change_rewrites_it(
    tmp_path: Path, isolated_home: Path
) -> None:
    config = lean(tmp_path)
    async with McpServerManager({"lean": config}, workspace=tmp_path, home=isolated_home):
        pass
    entry = ToolListCache(isolated_home).path("lean", config)
    before = entry.stat()
    async with McpServerManager({"lean": config}, workspace=tmp_path, home=isolated_home) as again:
        await _call(again, "echo", message="hi")  # started and listed: the same lists
    after = entry.stat()
    assert (after.st_ino, after.st_mtime_ns) == (before.st_ino, before.st_mtime_ns)
    (tmp_path / "tools.txt").write_text("alpha\ngamma\n", encoding="utf-8")
    async with McpServerManager({"lean": config}, workspace=tmp_path, home=isolated_home) as changed:
        await _call(changed, "echo", message="hi")
    cached = ToolListCache(isolated_home).load("lean", config)
    assert cached is not None and [t.name for t in cached.tools] == ["echo", "alpha", "gamma", "retool"]
    assert entry.stat().st_ino != before.st_ino
