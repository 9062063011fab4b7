"""Listing what a server offers, following every page (with a cap, so a server that never ends cannot hang us)."""

from typing import Any

import mcp_types
from pydantic import ValidationError

from kairox.mcp._content import McpResource, McpTool, tool_from_mcp
from mcp import Client

PAGE_CAP = 1_000


async def list_tools(client: Client) -> tuple[McpTool, ...]:
    """Every tool of every page. A tool the SDK cannot read (a schema that is not an object, a missing field)
    comes back with its ``problem`` set instead of failing the whole listing."""
    tools: list[McpTool] = []
    cursor: str | None = None
    seen: set[str] = set()
    for _ in range(PAGE_CAP):
        try:
            page = await client.list_tools(cursor=cursor, cache_mode="bypass")
            tools.extend(tool_from_mcp(tool) for tool in page.tools)
            cursor = page.next_cursor
        except ValidationError:
            found, cursor = await _list_tools_one_by_one(client, cursor)
            tools.extend(found)
        if cursor is None or cursor in seen:
            break
        seen.add(cursor)
    return tuple(tools)


def tools_from_raw(raw: Any) -> tuple[list[McpTool], list[mcp_types.Tool], str | None]:
    """A raw ``tools/list`` result as tools (those the SDK cannot read carry a ``problem``), the SDK's valid
    tools, and the next cursor."""
    items = raw.get("tools") if isinstance(raw, dict) else None
    if not isinstance(items, list):
        raise ValueError("the server's tools/list result has no list of tools")
    found: list[McpTool] = []
    valid: list[mcp_types.Tool] = []
    for index, item in enumerate(items):
        try:
            tool = mcp_types.Tool.model_validate(item, by_name=False)
        except ValidationError as exc:
            name = item.get("name") if isinstance(item, dict) else None
            fields = ", ".join(sorted({".".join(str(p) for p in e["loc"]) or "(tool)" for e in exc.errors()}))
            label = name if isinstance(name, str) and name else f"#{index}"
            found.append(McpTool(name=label, problem=f"the server listed it with invalid fields: {fields}"))
            continue
        valid.append(tool)
        found.append(tool_from_mcp(tool))
    cursor = raw.get("nextCursor")
    return found, valid, cursor if isinstance(cursor, str) else None


async def _list_tools_one_by_one(client: Client, cursor: str | None) -> tuple[list[McpTool], str | None]:
    """One page read raw and each tool validated alone, for a page the SDK refused as a whole."""
    session = client.session
    request = mcp_types.ListToolsRequest(params=mcp_types.PaginatedRequestParams(cursor=cursor))
    data = request.model_dump(by_alias=True, mode="json", exclude_none=True)
    opts: Any = {}
    # the SDK validates a page as a whole; reading it raw is the only way to keep the good tools of a page
    # that holds one bad tool (the same stamp and dispatcher ``send_request`` uses)
    session._stamp(data, opts)
    raw = await session._dispatcher.send_raw_request("tools/list", data.get("params"), opts)
    found, valid, next_cursor = tools_from_raw(raw)
    result = mcp_types.ListToolsResult(tools=valid, next_cursor=next_cursor)
    # keep the session's per-tool state (output schema validators, header maps) as a normal listing would
    session._absorb_tool_listing(result, complete=cursor is None and next_cursor is None)
    return found, next_cursor


async def list_resources(client: Client) -> list[McpResource]:
    """Resources, then resource templates (``template=True``)."""
    found: list[McpResource] = []
    cursor: str | None = None
    for _ in range(PAGE_CAP):
        page = await client.list_resources(cursor=cursor, cache_mode="bypass")
        found.extend(
            McpResource(uri=str(r.uri), name=r.name, description=r.description, mime_type=r.mime_type)
            for r in page.resources
        )
        cursor = page.next_cursor
        if cursor is None:
            break
    cursor = None
    for _ in range(PAGE_CAP):
        templates = await client.list_resource_templates(cursor=cursor, cache_mode="bypass")
        found.extend(
            McpResource(uri=t.uri_template, name=t.name, description=t.description, mime_type=t.mime_type, template=True)
            for t in templates.resource_templates
        )
        cursor = templates.next_cursor
        if cursor is None:
            break
    return found


async def list_prompts(client: Client) -> tuple[str, ...]:
    names: list[str] = []
    cursor: str | None = None
    for _ in range(PAGE_CAP):
        page = await client.list_prompts(cursor=cursor, cache_mode="bypass")
        names.extend(p.name for p in page.prompts)
        cursor = page.next_cursor
        if cursor is None:
            break
    return tuple(names)
