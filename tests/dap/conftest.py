"""Fixtures of the DAP tests."""

from tests._rpc._procs import no_process_left
from tests.dap._fixtures import workspace

__all__ = ["no_process_left", "workspace"]
