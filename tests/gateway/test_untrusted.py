"""``kairox serve`` in a workspace the user has not trusted: it says what it holds back and how to trust, on
stderr, in the ``initialize`` instructions, and to a client that calls a held-back tool."""

from collections.abc import Iterator

import mcp_types as types
import pytest
from tests.gateway.conftest import EVERYTHING, Served, start_gateway, write_workspace
from tests.gateway.test_serve import connect, text

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(300)]


@pytest.fixture(scope="module")
def untrusted(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    if not EVERYTHING.exists():
        pytest.fail("tests/servers/node_modules is not installed (npm ci in tests/servers)")
    home = tmp_path_factory.mktemp("untrusted-home")
    workspace = write_workspace(tmp_path_factory.mktemp("untrusted-ws") / "ws")
    served = start_gateway(workspace, home)  # `kairox trust` never ran
    try:
        yield served
    finally:
        served.stop()


def trust_command(served: Served) -> str:
    return f"`kairox --workspace {served.workspace} trust`"


async def test_stderr_and_the_instructions_say_what_is_held_back_and_how_to_trust(untrusted: Served) -> None:
    notes = [line for line in untrusted.stderr if line.startswith("kairox serve: note: ")]
    assert len(notes) == 1
    notice = notes[0].removeprefix("kairox serve: note: ").strip()
    assert notice == (
        f"The workspace {untrusted.workspace} is not trusted, so "
        "kairox serve holds back its project MCP servers basic, "
        "everything; language servers jedi; skills greet-back; 2 other setting(s) (such as allow rules). Only the "
        "built-in tools and the user's own servers are served. To use them, review and trust the workspace with "
        f"{trust_command(untrusted)}, then restart the server."
    )
    async with connect(untrusted) as client:
        instructions = client.instructions
        tools = [tool.name for tool in (await client.list_tools()).tools]
    assert instructions is not None and instructions.endswith(notice)
    assert "fs_read" in tools and not [name for name in tools if name.startswith(("mcp__", "lsp_"))]


async def test_a_call_of_a_held_back_tool_is_an_error_result_with_the_notice(untrusted: Served) -> None:
    async with connect(untrusted) as client:
        echo = await client.call_tool("mcp__everything__echo", {"message": "hi"})
        symbols = await client.call_tool("lsp_document_symbols", {"path": "app.py"})
        skill = await client.call_tool("skill", {"name": "greet-back", "arguments": {"who": "Ann"}})
        with pytest.raises(Exception) as prompt:
            await client.get_prompt("greet-back", {"who": "Ann"})
    assert echo.is_error and text(echo).startswith(
        "mcp__everything__echo was not run: it comes from MCP server 'everything', which kairox serve holds back."
    )
    assert trust_command(untrusted) in text(echo)
    assert symbols.is_error and text(symbols).startswith("lsp_document_symbols was not run: its server is held back.")
    assert skill.is_error and text(skill).startswith("skill was not run: the workspace's skills are held back.")
    assert trust_command(untrusted) in str(prompt.value)
    assert isinstance(echo.content[0], types.TextContent)
