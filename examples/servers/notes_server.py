"""A small MCP server for the example workspace: team notes kept in memory for one session."""

from mcp.server.mcpserver import MCPServer

server = MCPServer("notes", instructions="Team notes: list, read, search and add short notes.")

NOTES: dict[str, str] = {
    "release": "Releases go out on Thursdays. Update CHANGELOG.md first, then tag vX.Y.Z.",
    "style": "Functions have docstrings; prices are integers in cents, never floats.",
}


@server.tool()
def list_notes() -> list[str]:
    """The titles of every note."""
    return sorted(NOTES)


@server.tool()
def read_note(title: str) -> str:
    """The text of one note."""
    if title not in NOTES:
        raise ValueError(f"no note titled {title!r}; list_notes shows the titles")
    return NOTES[title]


@server.tool()
def search_notes(query: str) -> list[str]:
    """Titles of the notes whose title or text contains ``query`` (case-insensitive)."""
    needle = query.lower()
    return sorted(t for t, text in NOTES.items() if needle in t.lower() or needle in text.lower())


@server.tool()
def add_note(title: str, text: str) -> str:
    """Add or replace a note."""
    NOTES[title] = text
    return f"saved note {title!r}"


if __name__ == "__main__":
    server.run("stdio")
