"""Prints text that is not JSON-RPC on stdout. With ``--then-serve`` it then runs a real server;
``--lines N`` prints N more garbage lines first."""

import sys

print("Welcome to the garbage server v1.0", flush=True)
print("{not json at all", flush=True)
if "--lines" in sys.argv:
    for index in range(int(sys.argv[sys.argv.index("--lines") + 1])):
        print(f"log line {index}", flush=True)
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
