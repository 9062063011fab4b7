"""Child processes, Content-Length framed connections (JSON-RPC and the DAP on top of one shared base) and the
supervision of a server behind one: shared by LSP, DAP, MCP stdio and hook commands.

A private package with no API of its own: importers name the module that defines what they use."""
