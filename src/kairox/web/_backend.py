"""What the GUI runs: the session (or, with no model configured, the extension context alone) in one task that
enters and leaves it, the approvals the page answers, the turns, the catalog installs, and the servers' live
status. Every change goes through ``kairox.runtime`` and ``kairox.agent``; this module only wires them to HTTP."""

import itertools
import os
import secrets
from collections.abc import Callable, Coroutine
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import anyio
import anyio.abc

from kairox.config import ResolvedConfig, SecretScrubber, resolve_config
from kairox.errors import KairoxError
from kairox.web._hub import EventHub

if TYPE_CHECKING:
    from kairox.agent import AgentSession
    from kairox.events import Event
    from kairox.policy import ApprovalAnswer, ApprovalRequest
    from kairox.runtime import ExtensionContext, ServerBoard
    from kairox.web._options import WebOptions

ANSWERS = ("once", "session", "always", "deny")
CONTEXT_WAIT_SEC = 120.0


class ApprovalNotFoundError(KairoxError):
    pass


@dataclass(kw_only=True)
class PendingApproval:
    id: str
    request: "ApprovalRequest"
    answer: anyio.Event = field(default_factory=anyio.Event)
    result: "ApprovalAnswer | None" = None

    def to_json(self) -> dict[str, Any]:
        from kairox.runtime import approval_choices, link_notes

        request = self.request
        return {
            "choices": [choice.to_json() for choice in approval_choices(request)],
            "id": self.id,
            "tool": request.tool,
            "arguments": request.arguments,
            "command": request.command,
            "links": link_notes(request),
            "reason": request.reason,
            "asked_by": request.asked_by,
            "grants": [
                {"rule": g.rule, "covers": g.covers, "exact": g.exact, "persistable": g.persistable}
                for g in request.grants
            ],
            "layers": [str(layer) for layer in request.layers] if request.always_allowed else [],
        }


def answer_from_json(body: dict[str, Any]) -> "ApprovalAnswer":
    """The page's answer as the shared :class:`ApprovalAnswer`: "session" without a grant is the exact call, "always"
    without one saves the rule the request suggests into the user layer (the gate decides both, as for the TUI)."""
    from kairox.policy import ApprovalAnswer, RuleLayer

    answer = body.get("answer")
    grant = body.get("grant")
    if grant is not None and not isinstance(grant, str):
        raise ValueError("grant must be a rule from the request's grants, or null")
    if answer == "once":
        return ApprovalAnswer.allow_once()
    if answer == "session":
        return ApprovalAnswer.allow_session(grant, whole_session=body.get("whole_session") is True)
    if answer == "always":
        layer = body.get("layer") or "user"
        try:
            return ApprovalAnswer.allow_always(grant, layer=RuleLayer(layer))
        except ValueError:
            raise ValueError(f"layer must be user, project or local, not {layer!r}") from None
    if answer == "deny":
        message = body.get("message")
        return ApprovalAnswer.deny(str(message) if message else "denied in the Kairox GUI")
    raise ValueError(f"answer must be one of {', '.join(ANSWERS)}, not {answer!r}")


class WebApprover:
    """Each request becomes an ``approval.request`` event; the call waits until the page answers it (or the GUI
    stops, which denies it)."""

    def __init__(self, hub: EventHub) -> None:
        self.hub = hub
        self.pending: dict[str, PendingApproval] = {}
        self._ids = itertools.count(1)

    async def request_approval(self, request: "ApprovalRequest") -> "ApprovalAnswer":
        item = PendingApproval(id=f"a{next(self._ids)}-{secrets.token_hex(3)}", request=request)
        self.pending[item.id] = item
        self.hub.publish("approval.request", item.to_json())
        try:
            await item.answer.wait()
        finally:
            self.pending.pop(item.id, None)
        assert item.result is not None
        answer = "deny" if not item.result.approved else str(item.result.scope)
        self.hub.publish("approval.resolved", {"id": item.id, "answer": answer})
        return item.result

    def answer(self, approval_id: str, answer: "ApprovalAnswer") -> None:
        item = self.pending.get(approval_id)
        if item is None or item.answer.is_set():
            raise ApprovalNotFoundError(
                f"no pending approval {approval_id!r}", hint="it was answered already or its call ended"
            )
        item.result = answer
        item.answer.set()

    def deny_all(self, reason: str) -> None:
        from kairox.policy import ApprovalAnswer

        for item in list(self.pending.values()):
            if not item.answer.is_set():
                item.result = ApprovalAnswer.deny(reason)
                item.answer.set()


class WebBackend:
    """Owns the session's lifetime. ``async with backend:`` starts it in a task group; leaving stops it."""

    def __init__(self, options: "WebOptions") -> None:
        self.options = options
        self.model, self.provider = options.model, options.provider
        self.redactor = SecretScrubber()
        self.redactor.add_environment()
        self.hub = EventHub(self.redactor)
        self.approver = WebApprover(self.hub)
        self.resolved: ResolvedConfig = self._resolve()
        from kairox.runtime import ServerBoard

        self.servers = ServerBoard(self.resolved, starting=True)
        """Every server as the page shows it; the hub applies each event to it."""
        self.hub.board = self.servers
        self.context: ExtensionContext | None = None
        self.session: AgentSession | None = None
        self.setup_problem: str | None = None
        self.model_checked = False
        """Whether the model's settings were checked (in the background, with the SDKs)."""
        self.start_problem: str | None = None
        self.turn_running = False
        self.compacting = False
        """A compaction (``POST /api/session/compact``) runs; prompts wait as during a turn."""
        self._turns = itertools.count(1)
        self._jobs = itertools.count(1)
        self._tasks: anyio.abc.TaskGroup | None = None
        self._ready: anyio.Event
        self._leave: anyio.Event
        self._left: anyio.Event
        self._resume: str | None = None
        self._restarting = False
        self._results_sent: set[str] = set()
        self.hub.listeners.append(self._on_event)

    def _resolve(self) -> ResolvedConfig:
        options = self.options
        resolved = resolve_config(options.workspace, cli_overrides=options.overrides, profile=options.profile)
        self.redactor.add_config(resolved)
        return resolved

    # --- lifetime -----------------------------------------------------------------------------------------------

    async def __aenter__(self) -> "WebBackend":
        # made here, not in __init__: the application may be created before the event loop runs
        self._ready, self._leave, self._left = anyio.Event(), anyio.Event(), anyio.Event()
        self.hub.bind()
        self._tasks = anyio.create_task_group()
        await self._tasks.__aenter__()
        self._tasks.start_soon(self._main)
        return self

    async def __aexit__(self, *exc: object) -> None:
        assert self._tasks is not None
        self.approver.deny_all("the Kairox GUI stopped")
        if self.session is not None:
            self.session.cancel()
        self._leave.set()
        with anyio.move_on_after(60):
            await self._left.wait()
        self._tasks.cancel_scope.cancel()
        await self._tasks.__aexit__(None, None, None)

    def start_soon(self, work: Callable[[], Coroutine[Any, Any, Any]]) -> None:
        assert self._tasks is not None, "the backend is not running"
        self._tasks.start_soon(work)

    async def _main(self) -> None:
        """Enter the session (or the context alone) in this task, wait until told to leave, leave here."""
        # the heavy imports (the MCP and model SDKs) in a worker thread: the page is served meanwhile
        await anyio.to_thread.run_sync(_load_runtime)
        from kairox.agent import open_workspace

        try:
            async with open_workspace(
                cli=self.options.runtime(),
                resolved=self.resolved,
                approver=self.approver,
                events=[self.hub],
                model=self.model,
                provider=self.provider,
                resume=self._resume,
            ) as opened:
                if opened.settings is not None:
                    self.redactor.add(opened.settings.api_key(), *opened.settings.headers.values())
                self.setup_problem, self.model_checked = opened.setup_problem, True
                self._entered(opened.context, opened.session)
                await self._leave.wait()
        except Exception as exc:  # shown on the page (state, trace), not a crash of the server
            self.start_problem = f"the session could not start: {exc}"
            self.hub.publish(
                "SessionStartFailed", {"message": self.start_problem}, summary=self.start_problem, send_as_trace=True
            )
        finally:
            self.context, self.session = None, None
            self._ready.set()
            self._left.set()

    def _entered(self, context: "ExtensionContext", session: "AgentSession | None") -> None:
        self.context, self.session = context, session
        if session is not None:  # a resumed conversation's results are in its history already
            self._results_sent.update(part.call_id for message in session.messages for part in message.tool_results)
        self.resolved = context.resolved
        self.redactor.add_config(context.resolved)
        self.servers.sync(context)
        self._ready.set()

    async def restart(self) -> None:
        """Leave the session and open it again with the configuration as it is now (after ``trust``: the project's
        servers start); the conversation continues (the transcript is resumed)."""
        if self.turn_running:
            raise KairoxError("a turn is running", hint="cancel it first (POST /api/session/cancel)")
        self._resume = self.session.session_id if self.session is not None else None
        self._restarting = True
        self._leave.set()
        with anyio.move_on_after(60):
            await self._left.wait()
        self._leave, self._left, self._ready = anyio.Event(), anyio.Event(), anyio.Event()
        self.resolved = self._resolve()
        self.servers.seed(self.resolved, starting=True)
        self.start_soon(self._main)
        self._restarting = False

    async def ready_context(self) -> "ExtensionContext":
        """The running context, once start-up is over (servers started or failed)."""
        with anyio.move_on_after(CONTEXT_WAIT_SEC):
            while True:
                await self._ready.wait()
                if self.context is not None or not self._restarting:
                    break
                await anyio.sleep(0.05)  # the session is opening again: wait for the new one
        if self.context is None:
            raise KairoxError(self.start_problem or "the session is still starting", hint="try again in a moment")
        return self.context

    # --- servers' live status -----------------------------------------------------------------------------------

    def server_views(self) -> "ServerBoard":
        """The board, brought up to date with the running context and the configuration as it is now."""
        if self.context is not None:
            self.servers.sync(self.context, self.resolved)
        return self.servers

    # --- turns --------------------------------------------------------------------------------------------------

    def submit(self, text: str) -> str:
        if self.session is None:
            if self.setup_problem is not None:
                raise KairoxError(
                    f"no model is configured: {self.setup_problem}", hint="set `model` and its provider in kairox.toml"
                )
            raise KairoxError(self.start_problem or "the session is still starting", hint="try again in a moment")
        if self.turn_running:
            raise TurnRunningError("a turn is running", hint="wait for agent.turn_ended, or POST /api/session/cancel")
        turn = f"t{next(self._turns)}"
        self.turn_running = True
        self.hub.turn = turn
        session = self.session

        async def run() -> None:
            try:
                await session.run_turn(text)
            except Exception as exc:
                self.hub.publish("agent.error", {"turn": turn, "message": str(exc)})
            finally:
                self.turn_running = False

        self.start_soon(run)
        return turn

    def compact(self, instructions: str | None) -> None:
        """``/compact``: the session summarises its older turns; ``agent.compaction`` events say how it went."""
        if self.session is None:
            raise KairoxError(
                self.start_problem or self.setup_problem or "the session is still starting",
                hint="try again in a moment",
            )
        if self.turn_running:
            raise TurnRunningError(
                "a turn is running", hint="compact after agent.turn_ended, or POST /api/session/cancel"
            )
        self.turn_running = self.compacting = True
        self.hub.turn = None
        session = self.session

        async def run() -> None:
            try:
                await session.compact(instructions)
            except Exception as exc:
                self.hub.publish("agent.error", {"turn": None, "message": str(exc)})
            finally:
                self.turn_running = self.compacting = False

        self.start_soon(run)

    def rewind(self, turn: int | None, *, conversation: bool) -> None:
        """``/rewind``: the files (and with ``conversation`` the conversation) back to before ``turn``; the
        ``agent.rewind`` event says what was put back."""
        session = self.session
        if session is None or self.turn_running:
            raise TurnRunningError("no session, or a turn is running", hint="rewind between turns")

        async def run() -> None:
            try:
                await session.rewind(turn, conversation=conversation)
            except Exception as exc:
                self.hub.publish("agent.error", {"turn": None, "message": f"rewind: {exc}"})

        self.start_soon(run)

    def cancel(self) -> bool:
        if self.session is None or not self.turn_running:
            return False
        self.approver.deny_all("the turn was cancelled")
        self.session.cancel()
        return True

    def _on_event(self, event: "Event") -> None:
        # the session records a step's tool results before the next model request (or the turn's end): each
        # result reaches the page then, as ``tool.result``, before the event that follows it
        if event.kind in ("model.request.started", "agent.turn.ended"):
            self._send_results()

    def _send_results(self) -> None:
        from kairox.web._hub import result_json

        if self.session is None:
            return
        for message in self.session.messages[-4:]:
            for part in message.tool_results:
                if part.call_id not in self._results_sent:
                    self._results_sent.add(part.call_id)
                    self.hub.publish("tool.result", result_json(part.call_id, part.text, part.is_error), keep=False)

    # --- installs -----------------------------------------------------------------------------------------------

    def new_job(self) -> str:
        return f"j{next(self._jobs)}"

    def host_environment(self, variables: dict[str, str], secret: set[str]) -> dict[str, str]:
        """The host's environment with the variables the page gave; secret ones become known secrets."""
        self.redactor.add(*(value for name, value in variables.items() if name in secret))
        return {**os.environ, **variables}

    def refresh(self) -> None:
        """Read the configuration again after a write (the session keeps what it started with)."""
        self.resolved = self._resolve()


class TurnRunningError(KairoxError):
    pass


def _load_runtime() -> None:
    import kairox.agent
    import kairox.mcp
    import kairox.runtime  # noqa: F401
