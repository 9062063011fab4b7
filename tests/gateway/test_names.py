"""Served tool names fit what the hosts show: ``mcp__<server>__<tool>`` (Claude Code, Codex) and
``mcp_<server>_<tool>`` (Gemini CLI) within 64 characters, for upstream tools with long names too."""

import json
import subprocess
import sys
from pathlib import Path

import pytest
from tests.gateway.conftest import SERVERS, in_process

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(180)]

LONG = (
    "summarise_the_quarterly_revenue_figures_for_every_region_no",
    "summarise_the_quarterly_revenue_figures_for_every_region_so",
)


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    (ws / ".git").mkdir(parents=True)
    (ws / "kairox.toml").write_text(
        f"[mcp_servers.basic]\ncommand = {json.dumps(sys.executable)}\n"
        f'args = [{json.dumps(str(SERVERS / "basic_server.py"))}, "--long-names"]\n'
        '[policy.rules]\nallow = ["mcp__basic__*"]\n'
    )
    done = subprocess.run(
        [sys.executable, "-m", "kairox", "trust"], cwd=ws, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    return ws


async def served_names(workspace: Path, **options: str) -> dict[str, str]:
    """Served name -> registry name."""
    async with in_process(workspace, workspace.parent / "audit.jsonl", **options) as client:
        tools = (await client.list_tools()).tools
        names = {tool.name: str((tool.meta or {})["kairox/name"]) for tool in tools}
        for tool in tools:
            if "summarise" in tool.name:  # a cut name still reaches its tool
                result = await client.call_tool(tool.name, {})
                assert not result.is_error and result.content[0].text.startswith("summary of "), result  # type: ignore[union-attr]
    return names


@pytest.mark.parametrize("server", ["kairox", "kairox-workspace-gateway"])
async def test_long_upstream_names_fit_every_hosts_limit_with_a_stable_hash(workspace: Path, server: str) -> None:
    first = await served_names(workspace, name=server)
    again = await served_names(workspace, name=server)
    assert first == again  # the same names on every start
    assert all(len(f"mcp__{server}__{name}") <= 64 and len(f"mcp_{server}_{name}") <= 64 for name in first)
    long = {name: registry for name, registry in first.items() if "summarise" in name}
    assert len(long) == 2 and len(set(long.values())) == 2  # two tools alike in their first 57 characters stay two
    kept = 64 - len(f"mcp__{server}__") - 9  # the rest of the budget is "_" and the hash
    assert all(name.startswith(f"mcp__basic__{LONG[0]}"[:kept]) for name in long)
    assert all(len(f"mcp__{server}__{name}") == 64 for name in long)  # cut to the limit, not further
    assert {"fs_read", "mcp__basic__echo"} <= set(first)  # short names are left as they are
