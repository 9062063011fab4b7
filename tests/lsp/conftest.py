"""Fixtures of the LSP tests."""

from tests._rpc._procs import no_process_left
from tests.lsp._fixtures import project, server_name

__all__ = ["no_process_left", "project", "server_name"]
