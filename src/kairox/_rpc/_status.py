"""The states a supervised server (LSP server, debug adapter) moves through."""

import enum
from collections.abc import Collection


class ServerStatus(enum.StrEnum):
    """``Stopped -> Starting -> Running``; ``Failed`` after a start that did not finish or a crash, from which the
    next use starts it again (``Failed -> Starting -> Running``)."""

    STOPPED = "stopped"
    STARTING = "starting"
    RUNNING = "running"
    FAILED = "failed"


def is_pending(section: str, name: str, pending: Collection[str]) -> bool:
    """Whether server ``name`` of ``section`` waits for trust: ``pending`` holds server names or config keys
    (``lsp_servers.jedi``, or ``lsp_servers`` for the whole table), as ``ResolvedConfig.pending_trust`` does."""
    key = f"{section}.{name}"
    return name in pending or any(key == p or key.startswith(p + ".") for p in pending)
