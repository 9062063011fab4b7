"""The states a supervised server (LSP server, debug adapter) moves through."""

import enum


class ServerStatus(enum.StrEnum):
    """``Stopped -> Starting -> Running``; ``Failed`` after a start that did not finish or a crash, from which the
    next use starts it again (``Failed -> Starting -> Running``)."""

    STOPPED = "stopped"
    STARTING = "starting"
    RUNNING = "running"
    FAILED = "failed"
