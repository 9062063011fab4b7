"""The one session opener every front end uses: the workspace's extension context, plus an agent session when a
model is configured (or asked for). The CLI's ``run`` asks for a session, the TUI and the GUI take one when a
model is there and show the context alone otherwise, ``kairox serve`` never talks to a model; embedders call
:func:`open_workspace` the same way."""

import contextlib
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from kairox.agent._client import ModelClient
from kairox.agent._provider import ModelSettings, ModelSetupError, model_settings
from kairox.agent._session import AgentSession, open_session
from kairox.config import ResolvedConfig, resolve_config
from kairox.events import EventSink, FanoutSink
from kairox.policy import Approver
from kairox.runtime import ExtensionContext, RuntimeOptions, build_extension_context


@dataclass(frozen=True, kw_only=True, slots=True)
class OpenedWorkspace:
    """What :func:`open_workspace` opened: the context always, the session when there is a model."""

    context: ExtensionContext
    session: AgentSession | None
    settings: ModelSettings | None
    """Kairox's own model client's settings (None with a caller's client, or without a session)."""
    setup_problem: str | None
    """Why there is no session (no model configured, its API key unset ...); None when there is one, or when
    none was asked for."""


@contextlib.asynccontextmanager
async def open_workspace(
    workspace: Path | None = None,
    cli: RuntimeOptions | None = None,
    *,
    session: bool | None = None,
    approver: Approver | None = None,
    events: Sequence[EventSink] = (),
    model: str | None = None,
    provider: str | None = None,
    client: ModelClient | None = None,
    resume: str | None = None,
    continue_last: bool = False,
    resolved: ResolvedConfig | None = None,
) -> AsyncIterator[OpenedWorkspace]:
    """The context, and an agent session over it: ``session=None`` opens one when a model is configured (or
    ``client`` is given) and the context alone otherwise, saying why in ``setup_problem``; ``True`` requires one
    (a :class:`ModelSetupError` says what is missing); ``False`` opens the context alone. Leaving stops
    everything that was started."""
    options = cli or RuntimeOptions()
    if resolved is None:
        resolved = resolve_config(
            workspace or options.workspace, cli_overrides=options.overrides, profile=options.profile, cwd=options.cwd
        )
    settings: ModelSettings | None = None
    problem: str | None = None
    if session is not False and client is None:
        try:
            settings = model_settings(resolved, model=model, provider=provider)
            settings.api_key()  # an unset key is a setup problem, found before any server starts
        except ModelSetupError as exc:
            if session:
                raise
            settings, problem = None, str(exc)
    if session is False or (settings is None and client is None):
        sink = events[0] if len(events) == 1 else FanoutSink(list(events)) if events else None
        async with build_extension_context(cli=options, approver=approver, events=sink, resolved=resolved) as context:
            yield OpenedWorkspace(context=context, session=None, settings=None, setup_problem=problem)
        return
    async with open_session(
        cli=options,
        resolved=resolved,
        approver=approver,
        events=events,
        model=model,
        provider=provider,
        client=client,
        resume=resume,
        continue_last=continue_last,
    ) as opened:
        yield OpenedWorkspace(context=opened.context, session=opened, settings=settings, setup_problem=None)
