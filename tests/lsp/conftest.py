"""Fixtures of the LSP tests."""

from tests.lsp._fixtures import project, server_name

__all__ = ["project", "server_name"]
