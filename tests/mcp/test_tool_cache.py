"""Tool lists from the cache, servers started on first use (M4): hits, misses, invalidation, lazy starts, a tool
that is gone, required servers, failures, and the protocol era remembered, with real stdio servers."""

import sys
from pathlib import Path

import anyio
import pytest

from kairox.config import McpServerConfig
from kairox.mcp import McpServerManager, ServerStatus
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
        await manager.clients["lean"].lifecycle.wait_for(lambda status: status is ServerStatus.READY)
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
        await client.lifecycle.settled.wait()
        assert client.status is ServerStatus.FAILED
        assert "tools.txt is missing" in client.lifecycle.stderr_tail
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
