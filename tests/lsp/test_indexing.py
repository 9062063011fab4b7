"""A workspace query right after start waits for the server's indexing, says when it is still indexing, and
never shows the model a server's stack trace."""

import sys
from pathlib import Path

import pytest
from tests.lsp._fixtures import HERE, SERVERS

from kairox.config import LspServerConfig
from kairox.errors import ToolCallError
from kairox.lsp import LspToolProvider
from kairox.tools import CallContext, ToolResult

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(60)]


def indexing_server(index_sec: float, **changes: object) -> LspServerConfig:
    fields: dict[str, object] = {
        "args": [str(HERE / "servers" / "busy_server.py"), "--index-sec", str(index_sec)],
        "file_patterns": ["*.py"],
        **changes,
    }
    return LspServerConfig(command=sys.executable, **fields)  # type: ignore[arg-type]


async def first_call(project: Path, config: LspServerConfig, query: str, name: str = "busy") -> ToolResult:
    async with LspToolProvider({name: config}, workspace=project) as provider:
        return await provider.call_tool(
            "lsp.workspace_symbols", {"query": query}, CallContext(call_id="t", workspace=project)
        )


async def test_the_first_workspace_query_waits_for_the_indexing_to_end(project: Path) -> None:
    result = await first_call(project, indexing_server(1.5), "Greeter")
    assert result.text_content() == "class Greeter  pkg/greeting.py:4:7"


async def test_a_query_while_the_indexing_outlasts_the_bound_says_it_is_still_indexing(project: Path) -> None:
    result = await first_call(project, indexing_server(60, request_timeout_sec=1), "Greeter")
    # its error while loading is not "no symbols match": it could not search yet
    assert result.text_content() == (
        "busy could not search the workspace yet: busy had not finished loading the project (Indexing) "
        "(it answered: Error processing request. No Project. Error: No Project.); ask again shortly."
    )
    assert result.structured == {
        "server": "busy",
        "symbols": [],
        "complete": False,
        "incomplete_reason": "busy had not finished loading the project (Indexing)",
        "indexing": ["Indexing"],
        "message": result.text_content(),
    }


async def test_a_servers_stack_trace_does_not_reach_the_model(project: Path) -> None:
    with pytest.raises(ToolCallError) as caught:
        await first_call(project, indexing_server(0.2), "crash")
    assert caught.value.reason == (
        "language server 'busy' answered workspace/symbol with error -32603: "
        "Error processing request. No Project. Error: No Project."
    )


@pytest.mark.parametrize("server", sorted(SERVERS))
async def test_a_workspace_query_as_the_first_call_of_a_real_server(project: Path, server: str) -> None:
    result = await first_call(project, SERVERS[server](), "Greeter", server)
    if server == "jedi":
        assert result.text_content() == "class pkg.greeting.Greeter  pkg/greeting.py:4:7"
    else:  # pylsp has no workspace/symbol: it says so instead of an empty list
        assert result.structured == {"server": "pylsp", "supported": False, "message": result.text_content()}
