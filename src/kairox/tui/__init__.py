"""The terminal front end (U2): a Textual app over an AgentSession, with the trace panel (every server's status,
live), approvals as a modal, and panels for the extensions. Only this package imports textual; ``kairox tui``
loads it lazily."""

from kairox.tui._app import KairoxApp, run_app
from kairox.tui._approval import ApprovalScreen, TuiApprover, choices
from kairox.tui._panels import McpPanel, TextPanel
from kairox.tui._servers import MARKS, TraceEntry, describe

__all__ = [
    "MARKS",
    "ApprovalScreen",
    "KairoxApp",
    "McpPanel",
    "TextPanel",
    "TraceEntry",
    "TuiApprover",
    "choices",
    "describe",
    "run_app",
]
