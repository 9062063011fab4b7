"""What ``kairox gui`` passes to the application and its backend: ``WebOptions``, in a module of its own so that
the backend and the application both read it without importing each other."""

import secrets
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from kairox.runtime import RuntimeOptions

STATIC = Path(__file__).parent / "static"


@dataclass(frozen=True, kw_only=True, slots=True)
class WebOptions:
    """What ``kairox gui`` passes: the global options of the command line, the port and the run's token."""

    workspace: Path | None = None
    profile: str | None = None
    overrides: tuple[str, ...] = ()
    """``-c KEY=VALUE`` overrides of the command line."""
    port: int = 0
    """The port the server listens on (the guard accepts only this Host); pick it before creating the app."""
    token: str = field(default_factory=lambda: secrets.token_urlsafe(32))
    static_dir: Path = STATIC
    model: str | None = None
    provider: str | None = None

    def runtime(self) -> "RuntimeOptions":
        """The runtime's options (kairox.runtime is imported here, not when the server starts). A ``required``
        server that fails does not stop the session: the page shows it red, with its stderr, to be fixed there."""
        from kairox.runtime import RuntimeOptions

        return RuntimeOptions(
            workspace=self.workspace, profile=self.profile, overrides=self.overrides, raise_on_required=False
        )
