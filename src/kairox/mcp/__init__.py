"""kairox.mcp."""
