"""An MCP server whose one tool is not idempotent: ``record`` appends its tag to a ledger file (argv[1]), so a test
can count how often each call really ran."""

import sys
import time

from mcp.server.mcpserver import MCPServer

app = MCPServer("ledger")
LEDGER = sys.argv[1]


@app.tool()
def record(tag: str, sleep: float = 0.0) -> str:
    """Append the tag to the ledger, then wait ``sleep`` seconds (a call that takes time)."""
    with open(LEDGER, "a", encoding="utf-8") as ledger:
        ledger.write(tag + "\n")
    time.sleep(min(sleep, 10.0))
    return f"recorded {tag}"


app.run("stdio")
