"""Fixtures of the DAP tests."""

from tests.dap._fixtures import workspace

__all__ = ["workspace"]
