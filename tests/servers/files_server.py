"""An MCP server with one path-taking tool, for the tests of the path checks: ``read_file(path)`` returns the file's
text, opened by the server itself (relative to its working folder), as a third-party file server would."""

from pathlib import Path

from mcp.server.mcpserver import MCPServer

app = MCPServer("files")


@app.tool()
def read_file(path: str) -> str:
    """The text of the file at ``path``."""
    return Path(path).read_text(encoding="utf-8")


app.run("stdio")
