"""Prints text that is not JSON-RPC on stdout. With ``--then-serve`` it then runs a real server."""

import sys

print("Welcome to the garbage server v1.0", flush=True)
print("{not json at all", flush=True)
if "--then-serve" in sys.argv:
    from mcp.server.mcpserver import MCPServer

    app = MCPServer("garbage")

    @app.tool()
    def echo(message: str) -> str:
        print("stray print from a tool", flush=True)
        return message

    app.run("stdio")
else:
    for line in sys.stdin:
        print(f"garbage: I do not understand {len(line)} bytes", flush=True)
