"""The terminal front end (U2): a Textual app over an AgentSession, with the trace panel (every server's status,
live), approvals as a modal, and panels for the extensions. Only this package imports textual; ``kairox tui``
loads it lazily."""

from kairox.tui._app import run_app

__all__ = ["run_app"]
