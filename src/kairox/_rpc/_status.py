"""The one status of every server Kairox runs (MCP servers, language servers, debug adapters) and whether a
configured server may start."""

import enum
from collections.abc import Collection, Mapping
from typing import Protocol, TypeVar


class ServerStatus(enum.StrEnum):
    """``Stopped -> Starting -> Ready``; ``Failed`` after a start that did not finish or a crash. The other four are
    decided before any start: by the configuration, by trust, or because the server starts on first use."""

    READY = "ready"
    """Started and answering (an MCP server after its handshake; a language server or debug adapter running)."""
    STARTING = "starting"
    FAILED = "failed"
    STOPPED = "stopped"
    IDLE = "idle"
    """Starts on first use, and has not been needed yet."""
    DISABLED = "disabled"
    """``enabled = false`` in the configuration."""
    HELD_BACK = "held_back"
    """Declared by a project of an untrusted workspace: not started until ``kairox trust``."""
    PENDING_RETRUST = "pending_retrust"
    """The workspace is trusted, but this server was added or changed since: it waits for ``kairox trust`` again."""

    @property
    def label(self) -> str:
        """The words a person reads for it (the TUI's table, the CLI's lines)."""
        return _LABELS.get(self, self.value)

    @property
    def waits_for_trust(self) -> bool:
        return self in (ServerStatus.HELD_BACK, ServerStatus.PENDING_RETRUST)


_LABELS = {ServerStatus.HELD_BACK: "held back by trust", ServerStatus.PENDING_RETRUST: "pending re-trust"}


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
