"""``kairox serve --http`` with the SDK's own client: what it serves, the gate, elicitation, list changes."""

import contextlib
import json
import os
import signal
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anyio
import httpx2
import mcp_types as types
import pytest
from mcp.client.streamable_http import streamable_http_client
from mcp_types.version import MODERN_PROTOCOL_VERSIONS
from tests.gateway.conftest import (
    EVERYTHING,
    TOKEN,
    Served,
    alive,
    descendants,
    kairox_env,
    start_gateway,
    trust,
    write_workspace,
)

from mcp import Client, StdioServerParameters

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(300)]


@contextlib.asynccontextmanager
async def connect(served: Served, token: str | None = TOKEN, **options: Any) -> AsyncIterator[Client]:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    mode = options.pop("mode", "legacy")
    async with (
        httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(60, read=300)) as http,
        Client(streamable_http_client(served.url, http_client=http), mode=mode, **options) as client,
    ):
        yield client


def answer(decision: str | None, seen: list[str]) -> Any:
    async def elicit(ctx: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        seen.append(params.message)
        if decision is None:
            return types.ElicitResult(action="decline")
        return types.ElicitResult(action="accept", content={"decision": decision})

    return elicit


def text(result: types.CallToolResult) -> str:
    return "\n".join(block.text for block in result.content if isinstance(block, types.TextContent))


async def test_serves_mcp_lsp_and_builtin_tools_with_valid_names_and_skills_as_prompts(gateway: Served) -> None:
    async with connect(gateway) as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
        prompts = (await client.list_prompts()).prompts
    assert {"mcp__everything__echo", "mcp__basic__echo", "lsp_document_symbols", "fs_read", "skill"} <= set(tools)
    assert not [name for name in tools if name.startswith("shell")]  # --hide shell.*
    assert all(len(name) <= 64 and all(c.isalnum() or c in "_-" for c in name) for name in tools)
    assert tools["mcp__basic__echo"].annotations == types.ToolAnnotations(read_only_hint=True, open_world_hint=False)
    assert (tools["lsp_document_symbols"].meta or {})["kairox/name"] == "lsp.document_symbols"
    assert [(p.name, p.description, [(a.name, a.required) for a in p.arguments or []]) for p in prompts] == [
        ("greet-back", "Greet someone back by name.", [("who", True)])
    ]


async def test_upstream_and_lsp_tools_and_a_skill_prompt_go_through_the_gate(gateway: Served) -> None:
    async with connect(gateway) as client:
        echo = await client.call_tool("mcp__everything__echo", {"message": "hi there"})
        symbols = await client.call_tool("lsp_document_symbols", {"path": "app.py"})
        prompt = await client.get_prompt("greet-back", {"who": "Ann"})
    assert (text(echo), echo.is_error) == ("Echo: hi there", False)
    assert not symbols.is_error and "greet" in text(symbols)
    assert isinstance(prompt.messages[0].content, types.TextContent)
    assert prompt.messages[0].content.text.startswith("Say hello to Ann, warmly.")
    records = [r for r in gateway.audit_records() if r["arguments"] == {"message": "hi there"}]
    assert [(r["client"], r["tool"], r["decision"], r["rule"], r["outcome"]) for r in records] == [
        ("mcp", "mcp__everything__echo", "allow", "mcp__everything__*", "ok")
    ]


async def test_a_denied_call_returns_the_rules_message(gateway: Served) -> None:
    async with connect(gateway) as client:
        denied = await client.call_tool("mcp__everything__echo", {"message": "the secret plan"})
    where = f"{gateway.workspace / 'kairox.toml'}:12"
    assert denied.is_error
    assert (
        text(denied)
        == f"mcp__everything__echo was not run: denied by deny rule 'mcp__everything__echo(*secret*)' ({where})"
    )
    record = [r for r in gateway.audit_records() if r["arguments"] == {"message": "the secret plan"}][-1]
    assert (record["decision"], record["rule"], record["outcome"]) == (
        "deny",
        "mcp__everything__echo(*secret*)",
        "refused",
    )


async def test_an_ask_becomes_an_elicitation_approved_or_declined(gateway: Served) -> None:
    approved_seen: list[str] = []
    declined_seen: list[str] = []
    async with connect(gateway, elicitation_callback=answer("allow once", approved_seen)) as client:
        approved = await client.call_tool("mcp__everything__echo", {"message": "ask first"})
    async with connect(gateway, elicitation_callback=answer(None, declined_seen)) as client:
        declined = await client.call_tool("mcp__everything__echo", {"message": "ask again"})
    assert (text(approved), approved.is_error) == ("Echo: ask first", False)
    assert approved_seen[0].startswith(
        "Allow mcp__everything__echo?\nWhy it asks: ask rule 'mcp__everything__echo(ask*)'"
    )
    assert declined.is_error and len(declined_seen) == 1
    assert text(declined).startswith(
        "mcp__everything__echo was not run: mcp__everything__echo was declined by the user of mcp"
    )
    by_message = {
        r["arguments"]["message"]: r
        for r in gateway.audit_records()
        if isinstance(r["arguments"], dict) and "message" in r["arguments"]
    }  # type: ignore[index]
    assert (by_message["ask first"]["decision"], by_message["ask first"]["outcome"]) == ("approved", "ok")
    assert (by_message["ask again"]["decision"], by_message["ask again"]["outcome"]) == ("declined", "refused")


async def test_the_audit_keeps_the_wait_for_an_answer_apart_from_the_calls_own_time(gateway: Served) -> None:
    answered = answer("allow once", [])

    async def slowly(ctx: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        await anyio.sleep(0.5)  # a person reading the question
        return await answered(ctx, params)

    async with connect(gateway, elicitation_callback=slowly) as client:
        approved = await client.call_tool("mcp__everything__echo", {"message": "ask, then wait"})
    assert not approved.is_error
    [record] = [r for r in gateway.audit_records() if r["arguments"] == {"message": "ask, then wait"}]
    assert record["decision"] == "approved"
    assert record["approval_wait_ms"] >= 500  # type: ignore[operator]
    # the echo itself is quick: with the wait counted in, the call's own time would be the longer of the two
    assert record["duration_ms"] < record["approval_wait_ms"]  # type: ignore[operator]


async def test_a_client_that_cannot_be_asked_is_told_which_rule_asked_and_how_to_allow(gateway: Served) -> None:
    async with connect(gateway) as client:  # no elicitation callback: no elicitation capability
        refused = await client.call_tool("mcp__everything__echo", {"message": "ask nobody"})
    assert refused.is_error
    message = text(refused)
    assert "approval required: ask rule 'mcp__everything__echo(ask*)'" in message
    assert (
        "this MCP client cannot answer approval questions (it does not support elicitation); add an allow rule"
        in message
    )


async def test_the_2026_stateless_revision_is_served_on_the_same_endpoint(gateway: Served) -> None:
    approved_seen: list[str] = []
    declined_seen: list[str] = []
    async with connect(gateway, mode="auto", elicitation_callback=answer("allow once", approved_seen)) as client:
        version = client.protocol_version
        echo = await client.call_tool("mcp__everything__echo", {"message": "modern"})
        asked = await client.call_tool("mcp__everything__echo", {"message": "ask modern"})
    async with connect(gateway, mode="auto", elicitation_callback=answer(None, declined_seen)) as client:
        declined = await client.call_tool("mcp__everything__echo", {"message": "ask modern, declined"})
    assert version in MODERN_PROTOCOL_VERSIONS
    assert (text(echo), echo.is_error) == ("Echo: modern", False)
    # a stateless request cannot carry a question back: it comes as input_required, and the retry brings the answer
    assert (text(asked), asked.is_error) == ("Echo: ask modern", False)
    assert approved_seen[0].startswith(
        "Allow mcp__everything__echo?\nWhy it asks: ask rule 'mcp__everything__echo(ask*)'"
    )
    assert declined.is_error and len(declined_seen) == 1
    assert text(declined).startswith(
        "mcp__everything__echo was not run: mcp__everything__echo was declined by the user of "
    )
    records = [
        r
        for r in gateway.audit_records()
        if isinstance(r["arguments"], dict) and str(r["arguments"].get("message")).startswith("ask modern")
    ]  # type: ignore[union-attr]
    assert [(r["arguments"]["message"], r["decision"], r["outcome"]) for r in records] == [  # type: ignore[index]
        ("ask modern", "input_required", "refused"),
        ("ask modern", "approved", "ok"),
        ("ask modern, declined", "input_required", "refused"),
        ("ask modern, declined", "declined", "refused"),
    ]


async def test_a_2026_client_without_elicitation_is_told_how_to_allow(gateway: Served) -> None:
    async with connect(gateway, mode="auto") as client:
        refused = await client.call_tool("mcp__everything__echo", {"message": "ask modern, nobody"})
    assert refused.is_error
    assert "this MCP client cannot answer approval questions (it does not support elicitation)" in text(refused)


async def test_an_upstream_list_changed_reaches_the_client(gateway: Served) -> None:
    changed = anyio.Event()

    async def on_message(message: Any) -> None:
        if isinstance(message, types.ToolListChangedNotification):
            changed.set()

    async with connect(gateway, message_handler=on_message) as client:
        before = {tool.name for tool in (await client.list_tools()).tools}
        burst = await client.call_tool("mcp__basic__burst", {"count": 2})
        assert not burst.is_error, text(burst)
        with anyio.fail_after(60):
            await changed.wait()
            after: set[str] = set()
            while "mcp__basic__extra_1" not in after:  # the notice may come before the re-listing settles
                after = {tool.name for tool in (await client.list_tools()).tools}
                await anyio.sleep(0.1)
    assert "mcp__basic__extra_1" not in before
    assert {"mcp__basic__extra_0", "mcp__basic__extra_1"} <= after


async def test_a_2026_client_hears_of_list_changes_on_its_listen_stream(gateway: Served) -> None:
    from mcp.client.subscriptions import ToolsListChanged

    async with connect(gateway, mode="auto") as client:
        assert client.protocol_version in MODERN_PROTOCOL_VERSIONS
        async with client.listen(tools_list_changed=True) as changes:
            burst = await client.call_tool("mcp__basic__burst", {"count": 1})
            assert not burst.is_error, text(burst)
            seen: list[object] = []
            with anyio.fail_after(60):
                async for event in changes:  # the first change that arrives
                    seen.append(event)
                    break
    assert [type(e) for e in seen] == [ToolsListChanged]


async def test_a_slow_call_does_not_hold_up_another_client(gateway: Served) -> None:
    order: list[str] = []

    async def slow() -> None:
        async with connect(gateway) as client:
            result = await client.call_tool("mcp__basic__slow", {"steps": 3, "delay": 3})
            order.append(f"slow: {text(result)}")

    async with anyio.create_task_group() as tasks:
        tasks.start_soon(slow)
        async with connect(gateway) as client:
            quick = await client.call_tool("mcp__basic__echo", {"message": "meanwhile"})
            order.append(f"quick: {text(quick)}")
    assert order == ["quick: meanwhile", "slow: done after 3 steps"]


async def test_upstream_resources_are_served_namespaced_and_read_through_the_gate(gateway: Served) -> None:
    async with connect(gateway) as client:
        resources = (await client.list_resources()).resources
        templates = (await client.list_resource_templates()).resource_templates
        note = await client.read_resource("kairox://mcp/basic/memo://note")
    assert "kairox://mcp/basic/memo://note" in [str(r.uri) for r in resources]
    # beside the upstreams' resources, the workspace skill's SKILL.md (the skills extension)
    assert [str(r.uri) for r in resources if not str(r.uri).startswith("kairox://mcp/")] == [
        "skill://greet-back/SKILL.md"
    ]
    assert all(t.uri_template.startswith("kairox://mcp/") for t in templates) and templates
    assert [getattr(c, "text", None) for c in note.contents] == ["note body"]
    assert [r["tool"] for r in gateway.audit_records()][-1] == "mcp__basic__read_resource"


async def test_no_token_is_401_and_a_foreign_origin_is_403(gateway: Served) -> None:
    body = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
    headers = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
    async with httpx2.AsyncClient(timeout=30) as http:
        missing = await http.post(gateway.url, json=body, headers=headers)
        wrong = await http.post(gateway.url, json=body, headers={**headers, "Authorization": "Bearer nope"})
        foreign = await http.post(
            gateway.url,
            json=body,
            headers={**headers, "Authorization": f"Bearer {TOKEN}", "Origin": "http://evil.example"},
        )
        rebound = await http.post(
            gateway.url, json=body, headers={**headers, "Authorization": f"Bearer {TOKEN}", "Host": "evil.example:80"}
        )
    assert (missing.status_code, wrong.status_code, foreign.status_code, rebound.status_code) == (401, 401, 403, 421)
    assert missing.headers["www-authenticate"].startswith("Bearer")


async def test_sigterm_lets_the_call_in_flight_finish_then_stops_every_upstream(tmp_path: Path) -> None:
    if not EVERYTHING.exists():
        pytest.skip("tests/servers/node_modules is not installed (npm ci)")
    home = tmp_path / "home"
    workspace = write_workspace(tmp_path / "ws", lsp=False)
    trust(workspace, home)
    served = start_gateway(workspace, home, "--drain-sec", "120")
    children = descendants(served.proc.pid)
    assert len(children) >= 2, served.stderr  # node (everything) and python (basic)
    refused: list[str] = []

    async def elicit(ctx: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        served.proc.send_signal(signal.SIGTERM)  # the call is in the gate right now: it must still finish
        async with connect(served, token=None) as other:
            with anyio.fail_after(60):  # once the signal is handled, new calls are refused
                while not refused:
                    late = await other.call_tool("mcp__everything__echo", {"message": "late"})
                    if late.is_error:
                        refused.append(text(late))
                    await anyio.sleep(0.1)
        return types.ElicitResult(action="accept", content={"decision": "allow once"})

    try:
        async with connect(served, token=None, elicitation_callback=elicit) as client:
            # listed first: the SDK lists the tools after a call of a tool it has not seen (to check its output
            # schema), and once the call drained no server is left to answer that
            await client.list_tools()
            result = await client.call_tool("mcp__everything__echo", {"message": "ask while stopping"})
        assert (text(result), result.is_error) == ("Echo: ask while stopping", False)
        assert refused == [
            "mcp__everything__echo was not run: kairox serve is stopping; call it again once the server is back"
        ]
        assert await anyio.to_thread.run_sync(lambda: served.proc.wait(90)) == 0, "".join(served.stderr)
    finally:
        served.stop()
    assert [pid for pid in children if alive(pid)] == []


def test_a_claude_desktop_style_mcp_servers_entry_launches_kairox_serve_over_stdio(tmp_path: Path) -> None:
    if not EVERYTHING.exists():
        pytest.skip("tests/servers/node_modules is not installed (npm ci)")
    home = tmp_path / "home"
    workspace = write_workspace(tmp_path / "ws", lsp=False)
    trust(workspace, home)
    desktop = {
        "mcpServers": {
            "kairox": {
                "command": sys.executable,
                "args": ["-m", "kairox", "--workspace", str(workspace), "serve"],
                "env": {k: v for k, v in kairox_env(home).items() if k.startswith("KAIROX_") or k == "PYTHONPATH"},
            }
        }
    }
    config = json.loads(json.dumps(desktop))["mcpServers"]["kairox"]  # as a host reads claude_desktop_config.json
    params = StdioServerParameters(command=config["command"], args=config["args"], env=config["env"], cwd=str(tmp_path))

    async def main() -> tuple[list[str], str]:
        async with Client(params, mode="legacy") as client:
            tools = [tool.name for tool in (await client.list_tools()).tools]
            echo = await client.call_tool("mcp__everything__echo", {"message": "from the desktop"})
            return tools, text(echo)

    tools, echoed = anyio.run(main)
    assert "mcp__everything__echo" in tools and "skill" in tools
    assert echoed == "Echo: from the desktop"
    assert os.path.exists(home / "logs" / "gateway.jsonl")


async def test_an_upstream_that_dies_mid_call_does_not_take_the_gateway_down(gateway: Served) -> None:
    async with connect(gateway) as client:
        died = await client.call_tool("mcp__basic__die", {})
        other = await client.call_tool("mcp__everything__echo", {"message": "still here"})
        with anyio.fail_after(120):  # the supervisor starts the upstream again; its tools come back
            while True:
                back = await client.call_tool("mcp__basic__echo", {"message": "back"})
                if not back.is_error:
                    break
                await anyio.sleep(0.5)
    assert died.is_error and "basic" in text(died)
    assert (text(other), other.is_error) == ("Echo: still here", False)
    assert text(back) == "back"
