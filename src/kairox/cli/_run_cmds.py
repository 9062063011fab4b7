"""``kairox run PROMPT`` (the headless front end of an AgentSession) and ``kairox sessions list``."""

import json
import sys
import time
from typing import TYPE_CHECKING, Annotated, Any

import typer

from kairox.cli._common import (
    CliState,
    ExitCode,
    ModelOption,
    ProviderOption,
    ResumeOption,
    err,
    exit_at_once,
    fail,
    out,
    out_json,
    state,
)

if TYPE_CHECKING:
    from kairox.agent import AgentSession, TurnResult
    from kairox.events import Event

sessions_app = typer.Typer(help="Transcripts of earlier sessions.", no_args_is_help=True)

_APPROVALS = ("untrusted", "on_request", "on_failure", "never")
_SANDBOXES = ("read_only", "workspace_write", "danger_full_access")


class _TerminalView:
    """Assistant text on stdout as it streams; one line per tool call with its decision, and notices, on stderr."""

    def __init__(self) -> None:
        self._decisions: dict[str, Any] = {}
        self._at_line_start = True

    def end_line(self) -> None:
        """Finish streamed text with a newline before anything else is printed."""
        if not self._at_line_start:
            sys.stdout.write("\n")
            sys.stdout.flush()
            self._at_line_start = True

    def emit(self, event: "Event") -> None:
        from kairox.agent import (
            ApprovalRequested,
            AssistantTextDelta,
            CompactionFailed,
            CompactionStarted,
            ContextCompacted,
            ModelFailed,
            ModelRequestRetried,
            SubagentEvent,
            ToolDefinitionsLarge,
        )
        from kairox.registry import ToolCallDecided, ToolCallFinished, ToolCallRequested

        prefix = ""
        while isinstance(event, SubagentEvent):  # a subagent's call: its line names the agent, its text is its own
            prefix, event = prefix + f"{event.agent}: ", event.inner
            if isinstance(event, AssistantTextDelta):
                return
        if isinstance(event, AssistantTextDelta):
            sys.stdout.write(event.text)
            sys.stdout.flush()
            self._at_line_start = event.text.endswith("\n")
            return
        self.end_line()
        if isinstance(event, ToolCallRequested):
            self._decisions[event.call_id] = (event.tool, event.arguments, None)
        elif isinstance(event, ToolCallDecided) and event.call_id in self._decisions:
            tool, arguments, _ = self._decisions[event.call_id]
            self._decisions[event.call_id] = (tool, arguments, event)
        elif isinstance(event, ToolCallFinished):
            tool, arguments, decided = self._decisions.pop(event.call_id, (event.tool, {}, None))
            shown = json.dumps(arguments, ensure_ascii=False)
            shown = shown if len(shown) <= 120 else shown[:119] + "…"
            verdict = _verdict(decided) if decided is not None else "not decided"
            tail = f", error: {(event.error or '').splitlines()[0][:160]}" if event.is_error and event.error else ""
            err(f"  {prefix}tool {tool} {shown} -> {verdict}, {event.duration_ms:.0f} ms{tail}")
        elif isinstance(event, ApprovalRequested) and event.headless:
            err(
                f"  approval needed for {event.tool} ({event.reason}); no "
                "one can approve here, so the model is told it was denied"
            )
        elif isinstance(event, ModelRequestRetried):
            err(f"  model request failed ({event.reason}); retry {event.attempt} in {event.delay_sec:g}s")
        elif isinstance(event, ModelFailed):
            err(f"kairox: model provider {event.provider!r}: {event.message}")
        elif isinstance(event, ToolDefinitionsLarge):
            err(f"kairox: warning: {event.message}")
        elif isinstance(event, CompactionStarted):
            how = "near the context window (agent.compact_threshold)" if event.trigger == "auto" else "as asked"
            err(
                f"kairox: compacting the conversation {how}: {event.used_tokens} "
                f"tokens used; the model summarises {event.messages} older messages"
            )
        elif isinstance(event, ContextCompacted):
            err(
                f"kairox: compacted: {event.replaced_messages} messages "
                f"replaced by their summary, {event.kept_messages} kept; "
                f"about {event.tokens_before} -> {event.tokens_after} tokens"
            )
        elif isinstance(event, CompactionFailed):
            err(f"kairox: the conversation was not compacted: {event.message}")


def _verdict(decided: Any) -> str:
    """``allow (rule fs.read(./**))``, ``deny by approver (rule fs.write)``, ``allow by mode``."""
    if decided.source == "rule":
        return f"{decided.decision} (rule {decided.rule})"
    return f"{decided.decision} by {decided.source}" + (f" (rule {decided.rule})" if decided.rule else "")


class _JsonView:
    def emit(self, event: "Event") -> None:
        from kairox.events import event_to_json

        sys.stdout.write(
            json.dumps({"ts": round(time.time(), 6), **event_to_json(event)}, ensure_ascii=False, default=str) + "\n"
        )
        sys.stdout.flush()


def _exit_code(result: "TurnResult") -> ExitCode:
    from kairox.agent import TurnEndReason

    return {
        TurnEndReason.COMPLETED: ExitCode.OK,
        TurnEndReason.BLOCKED: ExitCode.DENIED,
        TurnEndReason.ERROR: ExitCode.FAILURE,
        TurnEndReason.CANCELLED: ExitCode.CANCELLED,
    }.get(result.reason, ExitCode.LIMIT)


def run(
    ctx: typer.Context,
    prompt: Annotated[str, typer.Argument(help="What to ask the model.")],
    as_json: Annotated[
        bool, typer.Option("--json", help="Print every event of the session as a JSON line on stdout.")
    ] = False,
    approval: Annotated[
        str | None, typer.Option("--approval", help="Approval policy for this run: " + ", ".join(_APPROVALS) + ".")
    ] = None,
    sandbox: Annotated[
        str | None, typer.Option("--sandbox", help="Sandbox policy for this run: " + ", ".join(_SANDBOXES) + ".")
    ] = None,
    model: ModelOption = None,
    model_provider: ProviderOption = None,
    resume: ResumeOption = None,
    continue_last: Annotated[
        bool, typer.Option("--continue", help="Continue the latest session of this workspace.")
    ] = False,
) -> None:
    """Run one prompt headless: the model's answer streams to stdout, each tool call's decision to stderr."""

    cli: CliState = state(ctx)
    if approval is not None and approval not in _APPROVALS:
        fail(f"--approval must be one of {', '.join(_APPROVALS)}, not {approval!r}", ExitCode.USAGE)
    if sandbox is not None and sandbox not in _SANDBOXES:
        fail(f"--sandbox must be one of {', '.join(_SANDBOXES)}, not {sandbox!r}", ExitCode.USAGE)
    if resume is not None and continue_last:
        fail("use --resume ID or --continue, not both", ExitCode.USAGE)
    cli.overrides += [f"policy.approval_policy={approval}"] * (approval is not None) + [
        f"policy.sandbox_policy={sandbox}"
    ] * (sandbox is not None)
    resolved = cli.resolve()
    import anyio

    from kairox.agent import ModelSetupError, SessionNotFoundError, open_workspace
    from kairox.cli._approver import CliApprover

    options = cli.runtime_options()
    view = _JsonView() if as_json else _TerminalView()
    interactive = not as_json and sys.stdin.isatty() and sys.stderr.isatty()

    async def main() -> "TurnResult":
        async with open_workspace(
            cli=options,
            session=True,
            resolved=resolved,
            approver=CliApprover() if interactive else None,
            events=[view, cli.events()],
            model=model,
            provider=model_provider,
            resume=resume,
            continue_last=continue_last,
        ) as opened:
            session = opened.session
            assert session is not None  # session=True: a session, or ModelSetupError
            if not as_json:
                err(f"kairox: session {session.session_id} ({session.provider}, {session.client.model})")
            return await _turn_with_interrupt(session, prompt)

    try:
        result = anyio.run(main)
    except ModelSetupError as exc:
        fail(str(exc), ExitCode.CONFIG)
    except SessionNotFoundError as exc:
        fail(str(exc), ExitCode.NOT_FOUND)
    if isinstance(view, _TerminalView):
        view.end_line()
        if result.message:
            err(f"kairox: {result.reason}: {result.message}")
    exit_at_once()  # the session is closed: its servers stopped, its transcript written
    raise typer.Exit(int(_exit_code(result)))


async def _turn_with_interrupt(session: "AgentSession", prompt: str) -> "TurnResult":
    """The turn, with Ctrl-C (SIGINT) cancelling it instead of killing the process halfway."""
    import signal

    import anyio

    async def watch() -> None:
        with anyio.open_signal_receiver(signal.SIGINT) as signals:
            async for _ in signals:
                session.cancel()

    async with anyio.create_task_group() as group:
        group.start_soon(watch)
        result = await session.run_turn(prompt)
        group.cancel_scope.cancel()
    return result


@sessions_app.command("list")
def list_sessions_cmd(
    ctx: typer.Context,
    as_json: Annotated[bool, typer.Option("--json", help="Machine-readable output on stdout.")] = False,
    every: Annotated[bool, typer.Option("--all", help="Sessions of every workspace, not only this one.")] = False,
) -> None:
    """Earlier sessions (oldest first) with their ids, for `kairox run --resume ID`."""
    from kairox.agent import list_sessions

    resolved = state(ctx).resolve(strict=False)
    found = list_sessions(resolved.home, workspace=None if every else resolved.workspace)
    if as_json:
        out_json([s.to_json() for s in found])
        return
    if not found:
        err("no sessions yet; `kairox run PROMPT` starts one")
        return
    for info in found:
        when = time.strftime("%Y-%m-%d %H:%M", time.localtime(info.updated))
        prompt = info.first_prompt.replace("\n", " ")
        prompt = prompt if len(prompt) <= 60 else prompt[:59] + "…"
        out(f"{info.id}  {when}  {info.turns:>3} turn(s)  {info.provider}/{info.model}  {prompt}")


def rewind(
    ctx: typer.Context,
    session: Annotated[str | None, typer.Option("--session", help="The session's id (default: the latest).")] = None,
    turn: Annotated[
        int | None, typer.Option("--turn", help="Rewind to before this turn (default: the latest).")
    ] = None,
    conversation: Annotated[
        bool, typer.Option("--conversation", help="Cut the conversation back too (`--resume` goes on from there).")
    ] = False,
    yes: Annotated[bool, typer.Option("--yes", "-y", help="Do it without asking.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="What was done, as JSON on stdout.")] = False,
) -> None:
    """Put back the files a turn changed: by default the latest turn of this workspace's latest session."""
    from kairox.agent import rewind_transcript, session_checkpoints
    from kairox.errors import KairoxError

    resolved = state(ctx).resolve(strict=False)
    try:
        checkpoints, path = session_checkpoints(resolved.home, resolved.workspace, session)
        plan = checkpoints.plan(turn)
    except KairoxError as exc:
        fail(str(exc), ExitCode.NOT_FOUND)
    err(f"session {plan.session_id}, {plan.text()}")
    if not yes:
        if not sys.stdin.isatty():
            fail("nothing was changed: pass --yes to rewind without a terminal to ask at", ExitCode.USAGE)
        if not typer.confirm("Rewind?", default=False, err=True):
            raise typer.Exit(int(ExitCode.DENIED))
    try:
        keep = rewind_transcript(checkpoints, path, plan, conversation=conversation)
    except KairoxError as exc:
        fail(str(exc), ExitCode.FAILURE)
    done = {"session": plan.session_id, "turn": plan.turn, "restored": [p for p, _ in plan.restore]}
    done |= {"removed": list(plan.remove), "irreversible": list(plan.irreversible), "messages": keep}
    if as_json:
        out_json(done)
    else:
        err(
            f"rewound: {len(plan.restore)} file(s) put back, {len(plan.remove)} removed"
            + (
                f"; the conversation goes on from before turn {plan.turn} (`kairox run --resume {plan.session_id}`)"
                if keep is not None
                else ""
            )
        )


def register(app: typer.Typer) -> None:
    app.command("run")(run)
    app.command("rewind")(rewind)
    app.add_typer(sessions_app, name="sessions", help="Transcripts of earlier sessions.")
