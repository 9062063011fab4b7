"""The ``kairox`` command line (U1). Commands parse, call the runtime, render; no feature logic here."""

from kairox.cli._app import main

__all__ = ["main"]
