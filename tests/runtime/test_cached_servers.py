"""With a warm tool-list cache the registry and the prompt context list a server's tools at once; a lazy server
is not started until a call of one of its tools goes through the gate."""

import json
import sys
from pathlib import Path

import pytest

from kairox._rpc._status import ServerStatus
from kairox.runtime import RuntimeOptions, ServerBoard, build_extension_context
from kairox.tools import ToolCall

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(120)]

LEAN = Path(__file__).resolve().parents[1] / "servers" / "lean_server.py"


async def test_warm_cache_lists_a_lazy_servers_tools_in_registry_and_prompt_and_the_first_call_starts_it(
    tmp_path: Path, isolated_home: Path
) -> None:
    workspace = tmp_path / "repo"
    (workspace / ".git").mkdir(parents=True)
    log = tmp_path / "methods.log"
    args = json.dumps([str(LEAN), "--extra-tools", "3", "--methods-log", str(log)])
    (isolated_home / "kairox.toml").write_text(
        f'[mcp_servers.lean]\ncommand = {json.dumps(sys.executable)}\nargs = {args}\nstartup = "lazy"\n\n'
        '[policy]\nsandbox_policy = "danger_full_access"\n[policy.rules]\nallow = ["mcp__lean__echo"]\n',
        encoding="utf-8",
    )
    options = RuntimeOptions(workspace=workspace)
    async with build_extension_context(cli=options) as cold:  # the first session lists the server itself
        cold_tools = sorted(s.name for s in cold.registry.visible_tools() if s.origin == "lean")
        cold_prompt = cold.prompt_context
    log.unlink()
    async with build_extension_context(cli=options) as warm:
        assert warm.mcp is not None and warm.mcp.clients["lean"].status is ServerStatus.STOPPED
        assert not log.exists()  # not started
        # every front end shows it idle (it starts on first use), not the grey "stopped" of a server that is down
        board = ServerBoard(warm.resolved)
        board.sync(warm)
        view = board.get("mcp", "lean")
        assert view is not None and (view.status, view.label) == (ServerStatus.IDLE, "idle")
        assert view.reason is not None and "starts on first use" in view.reason
        assert sorted(s.name for s in warm.registry.visible_tools() if s.origin == "lean") == cold_tools
        assert "- lean: 4 tool(s)" in warm.prompt_context and warm.prompt_context == cold_prompt
        result = await warm.registry.call(ToolCall(name="mcp__lean__echo", arguments={"message": "hi"}, call_id="c1"))
        assert (result.is_error, result.text_content()) == (False, "hi")
        assert warm.mcp.clients["lean"].status is ServerStatus.READY
    assert log.read_text(encoding="utf-8").split()[:3] == ["initialize", "tools/list", "tools/call"]
