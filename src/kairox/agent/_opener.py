"""The one session opener every front end uses: the workspace's extension context, plus an agent session when a
model is configured (or asked for). The CLI's ``run`` asks for a session, the TUI and the GUI take one when a
model is there and show the context alone otherwise, ``kairox serve`` never talks to a model; embedders call
:func:`open_workspace` the same way."""

import contextlib
import dataclasses
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import anyio

from kairox.agent._client import ModelClient
from kairox.agent._events import PlanUpdated, SessionStarted
from kairox.agent._http import preload
from kairox.agent._messages import Message
from kairox.agent._plan import PlanToolProvider, last_plan
from kairox.agent._provider import ModelSettings, ModelSetupError, model_settings
from kairox.agent._session import AgentSession, SessionApprover, client_for
from kairox.agent._transcript import Transcript, find_session, list_sessions, read_session
from kairox.config import ResolvedConfig, SecretScrubber, resolve_config
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


# --- opening a session -------------------------------------------------------------------------------------


@contextlib.asynccontextmanager
async def open_session(
    workspace: Path | None = None,
    cli: RuntimeOptions | None = None,
    *,
    approver: Approver | None = None,
    events: Sequence[EventSink] = (),
    model: str | None = None,
    provider: str | None = None,
    resume: str | None = None,
    continue_last: bool = False,
    resolved: ResolvedConfig | None = None,
    client: ModelClient | None = None,
) -> AsyncIterator[AgentSession]:
    """Start the extension context and a model client, fire ``session_start``; on leaving, ``session_end``,
    then everything stops. ``resume`` (an id) or ``continue_last`` (this workspace's latest) load a transcript.

    The model client is Kairox's own for the configured model (``model``/``provider`` override the configuration),
    or ``client``: the caller's own :class:`ModelClient`, which the caller also closes."""
    options = cli or RuntimeOptions()
    if resolved is None:
        resolved = resolve_config(
            workspace or options.workspace, cli_overrides=options.overrides, profile=options.profile, cwd=options.cwd
        )
    settings: ModelSettings | None = None
    api_key: str | None = None
    if client is None:
        settings = model_settings(resolved, model=model, provider=provider)
        api_key = settings.api_key()  # a missing key is reported before any server starts
        model_name, provider_name = settings.model, settings.provider
        hidden = tuple(v for v in (api_key, *settings.headers.values()) if v)  # never written to the transcript
    elif model is not None or provider is not None:
        raise ModelSetupError(
            "open_session was given a model client and a model or provider name",
            hint="pass one of them: a client names its own model (ModelClient.model)",
        )
    else:
        model_name, provider_name, hidden = client.model, type(client).__name__, ()
    history: list[Message] = []
    if continue_last and resume is None:
        found = list_sessions(resolved.home, workspace=resolved.workspace)
        if not found:
            from kairox.agent._transcript import SessionNotFoundError

            raise SessionNotFoundError(
                f"no earlier session in {resolved.workspace}", hint="start one with `kairox run PROMPT`"
            )
        resume = found[-1].id
    turn_base = 0
    if resume is not None:
        path = find_session(resolved.home, resume)
        info, history = read_session(path)
        turn_base = info.turns
        transcript = Transcript(path, hidden=hidden, scrubber=SecretScrubber.for_config(resolved))
    else:
        transcript = Transcript.create(
            resolved.home,
            workspace=resolved.workspace,
            model=model_name,
            provider=provider_name,
            hidden=hidden,
            scrubber=SecretScrubber.for_config(resolved),
        )
    sink = FanoutSink([transcript, *events])
    if settings is not None:
        preload()  # Kairox's own HTTP client loads while the servers start
    session_approver = SessionApprover(sink.emit)
    session_approver.front_end = approver
    # the servers listed from the cache start once the first request is out, not between the user and it
    options = dataclasses.replace(options, hold_mcp_background=True)
    try:
        async with build_extension_context(
            cli=options, approver=session_approver, events=sink, resolved=resolved
        ) as context:
            manager = context.mcp
            own = (
                None
                if settings is None
                else client_for(
                    settings,
                    events=sink,
                    api_key=api_key,
                    on_request_sent=None if manager is None else manager.start_background,
                )
            )
            if settings is not None:
                from kairox.agent._embeddings import semantic_ranker

                semantic = semantic_ranker(resolved, settings)
            active: ModelClient | None = own or client
            assert active is not None  # one of the two branches above chose it
            context.hooks.session_id = transcript.session_id
            session = AgentSession(
                context,
                active,
                approver=session_approver,
                events=sink,
                transcript=transcript,
                limits=resolved.config.agent,
                history=history,
                provider=provider_name,
                window_tokens=settings.context_window if settings is not None else None,
            )
            session.owned_client = own
            session.turn_base = turn_base
            session.plan = PlanToolProvider(sink.emit, last_plan(transcript.path) if resume else ())
            await context.registry.add_providers([session.plan])
            if settings is not None:
                session.tool_search.semantic = semantic  # tools.semantic: embeddings blended into tool_search
            if resolved.config.agent.max_task_depth > 0:  # subagents: the ``task`` tool
                from kairox.agent._task import TaskHost, TaskTool

                host = TaskHost(
                    context=context,
                    events=sink,
                    limits=resolved.config.agent,
                    model=lambda: (session.client, session.provider),
                    transcript=transcript,
                    on_usage=session.add_usage,
                )
                await context.registry.add_provider(TaskTool(host))
            sink.emit(
                SessionStarted(
                    session_id=transcript.session_id,
                    model=model_name,
                    provider=provider_name,
                    workspace=str(resolved.workspace),
                    resumed=resume is not None,
                    transcript=str(transcript.path),
                )
            )
            if session.plan.entries:
                sink.emit(PlanUpdated(entries=session.plan.entries))
            try:
                await session.start("resume" if resume else "startup")
                yield session
            finally:
                with anyio.CancelScope(shield=True):
                    await session.end()
                    if session.owned_client is not None:  # a caller's client is the caller's to close
                        await session.owned_client.aclose()
    finally:
        transcript.close()
