"""Writes 1 MiB to stderr before answering anything. ``--exit`` then exits with code 4 instead of serving."""

import sys

line = "flood " * 170 + "\n"
written = 0
while written < 1024 * 1024:
    sys.stderr.write(line)
    written += len(line)
sys.stderr.write("stderr_flood: last line before answering\n")
sys.stderr.flush()
if "--exit" in sys.argv:
    sys.exit(4)
from mcp.server.mcpserver import MCPServer  # noqa: E402

app = MCPServer("flood")


@app.tool()
def echo(message: str) -> str:
    return message


app.run("stdio")
