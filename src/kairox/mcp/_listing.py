"""Listing what a server offers, following every page (with a cap, so a server that never ends cannot hang us)."""

from kairox.mcp._content import McpResource, McpTool, tool_from_mcp
from mcp import Client

PAGE_CAP = 1_000


async def list_tools(client: Client) -> tuple[McpTool, ...]:
    tools: list[McpTool] = []
    cursor: str | None = None
    seen: set[str] = set()
    for _ in range(PAGE_CAP):
        page = await client.list_tools(cursor=cursor, cache_mode="bypass")
        tools.extend(tool_from_mcp(tool) for tool in page.tools)
        cursor = page.next_cursor
        if cursor is None or cursor in seen:
            break
        seen.add(cursor)
    return tuple(tools)


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
