"""MCP server of the release-tools plugin: today's date, for release notes."""

import datetime

from mcp.server.mcpserver import MCPServer

server = MCPServer("clock")


@server.tool()
def today() -> str:
    """Today's date in ISO format (YYYY-MM-DD)."""
    return datetime.date.today().isoformat()


if __name__ == "__main__":
    server.run("stdio")
