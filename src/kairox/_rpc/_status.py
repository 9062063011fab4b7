"""The states a supervised server (LSP server, debug adapter) moves through."""

import enum
from collections.abc import Collection, Mapping
from typing import Protocol, TypeVar


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


class _Switchable(Protocol):
    @property
    def enabled(self) -> bool: ...


S = TypeVar("S", bound=_Switchable)


def usable_servers(section: str, servers: Mapping[str, S], pending: Collection[str]) -> dict[str, S]:
    """The servers of ``section`` that may start: enabled, and not waiting for the workspace's trust."""
    return {
        name: config for name, config in servers.items() if config.enabled and not is_pending(section, name, pending)
    }
