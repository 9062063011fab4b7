"""``AgentSession``: the turn loop. A prompt goes through the turn hooks to the model; the tool calls it asks
for go through the registry's gate (reads of one message concurrently, writes and executions one at a time, in
order); their results go back until the model answers without tools or a limit stops the turn. Every step is an
event; front ends subscribe and never reach inside."""

import asyncio
import hashlib
import json
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import anyio

from kairox._util._json import JsonObject
from kairox.agent._client import ModelClient, collect
from kairox.agent._context import (
    SUMMARY_SYSTEM,
    cut_point,
    definitions_chars,
    estimate_tokens,
    message_chars,
    summary_instructions,
    summary_message,
)
from kairox.agent._events import (
    ApprovalRequested,
    AssistantMessageCompleted,
    AssistantTextDelta,
    AssistantThoughtDelta,
    CompactionFailed,
    CompactionStarted,
    ContextCompacted,
    ContextMeasured,
    ModelFailed,
    ModelRequestStarted,
    ModelSwitched,
    Rewound,
    SessionEnded,
    ToolDefinitionsLarge,
    TurnEnded,
    TurnEndReason,
    TurnHookOutcome,
    UsageReported,
    UserMessageSubmitted,
)
from kairox.agent._messages import ImagePart, Message, ModelRequest, Role, ToolCallPart, ToolResultPart, Usage
from kairox.agent._plan import PlanToolProvider, plan_text
from kairox.agent._provider import ModelProviderError, ModelSettings, context_window
from kairox.agent._rewind import Checkpoints, RewindPlan, conversation_cut
from kairox.agent._transcript import Transcript
from kairox.config import AgentConfig
from kairox.errors import KairoxError
from kairox.events import Event, EventSink, FanoutSink
from kairox.policy import ApprovalAnswer, ApprovalRequest, Approver, effective_profile, mcp_read_only, refusal_text
from kairox.registry import TOOL_SEARCH, ToolCallFinished, ToolSearch, search_threshold_tokens
from kairox.tools import Access, EmbeddedResource, ImageContent, ResourceLink, ToolResult

if TYPE_CHECKING:
    from kairox.agent._anthropic import AnthropicMessagesClient
    from kairox.agent._openai import OpenAiChatClient
    from kairox.hooks import HookOutcome
    from kairox.runtime import ExtensionContext

PREAMBLE = (
    "You are a coding agent working in the workspace {workspace}, with tools provided by Kairox. Read before you "
    "change anything; every tool call passes a permission gate, and a call that was not run says why, so adapt "
    "instead of retrying the same call. Load a listed skill with the `skill` tool when it fits the task. Be concise."
)


@dataclass(frozen=True, kw_only=True, slots=True)
class TurnResult:
    reason: TurnEndReason
    text: str
    """The model's last answer of the turn."""
    message: str | None = None
    """What stopped the turn, when it did not complete."""
    tool_calls: int = 0


_HEADLESS_HINT = (
    "no one can approve in this run: do something else, or tell the user how to allow it "
    "(run at a terminal, --approval, or an allow rule)"
)


class SessionApprover:
    """The Approver the gate and the hooks get: it announces the request and asks the front end's approver, one
    request at a time; with none (headless), every ask is a denial the model is told about."""

    def __init__(self, emit: Callable[[Event], None]) -> None:
        self.front_end: Approver | None = None
        self._emit = emit
        self._lock = anyio.Lock()

    async def request_approval(self, request: ApprovalRequest) -> ApprovalAnswer:
        approver = self.front_end
        self._emit(
            ApprovalRequested(
                call_id=request.call_id,
                tool=request.tool,
                reason=request.reason,
                arguments=dict(request.arguments),
                source=request.source,
                asked_by=request.asked_by,
                command=request.command,
                grants=tuple(grant.covers for grant in request.grants),
                headless=approver is None,
                agent=request.agent,
            )
        )
        if approver is None:
            return ApprovalAnswer.deny(refusal_text(request, _HEADLESS_HINT))
        async with self._lock:  # one dialog at a time
            return await approver.request_approval(request)


def client_for(
    settings: ModelSettings,
    *,
    events: EventSink,
    api_key: str | None,
    on_request_sent: Callable[[], None] | None = None,
) -> "OpenAiChatClient | AnthropicMessagesClient":
    """Kairox's own client for the configured provider (the SDK it needs loads with it); ``on_request_sent`` is
    called when a request has been written out."""
    if settings.wire_api == "anthropic":
        from kairox.agent._anthropic import AnthropicMessagesClient

        return AnthropicMessagesClient(settings, events=events, api_key=api_key, on_request_sent=on_request_sent)
    if settings.wire_api == "responses":
        from kairox.agent._responses import OpenAiResponsesClient

        return OpenAiResponsesClient(settings, events=events, api_key=api_key, on_request_sent=on_request_sent)
    from kairox.agent._openai import OpenAiChatClient

    return OpenAiChatClient(settings, events=events, api_key=api_key, on_request_sent=on_request_sent)


def _result_part(call: ToolCallPart, result: ToolResult) -> ToolResultPart:
    texts, images = [], []
    for content in result.content:
        if isinstance(content, ImageContent):
            images.append(ImagePart(data=content.data, mime_type=content.mime_type))
        elif isinstance(content, EmbeddedResource):
            texts.append(
                content.text
                if content.text is not None
                else f"[resource {content.uri} ({content.mime_type or 'binary'})]"
            )
        elif isinstance(content, ResourceLink):
            texts.append(f"[resource link {content.uri}: {content.name}]")
        elif content.type == "text":
            texts.append(content.text)
        else:
            texts.append(f"[{content.type} content, {content.mime_type}]")
    text = "\n".join(texts)
    if not text and result.structured is not None:
        text = json.dumps(result.structured, ensure_ascii=False)
    return ToolResultPart(
        call_id=call.id, name=call.name, text=text or "(no output)", is_error=result.is_error, images=tuple(images)
    )


class AgentSession:
    """One conversation with one model over one ExtensionContext. Open it with :func:`open_session`."""

    def __init__(
        self,
        context: "ExtensionContext",
        client: ModelClient,
        *,
        approver: SessionApprover,
        events: FanoutSink,
        transcript: Transcript,
        limits: AgentConfig,
        history: Sequence[Message] = (),
        provider: str | None = None,
        window_tokens: int | None = None,
    ) -> None:
        self.context = context
        self.client = client
        self.provider = provider or type(client).__name__
        """Who serves the model: the ``[model_providers.NAME]`` name, or a caller's client's class name."""
        self.events = events
        self.transcript = transcript
        self.limits = limits
        self.messages: list[Message] = list(history)
        self.usage = Usage()
        self._approver = approver
        self._turn = 0
        self._scope: anyio.CancelScope | None = None
        self._streamed: list[str] = []
        self._pending: dict[str, ToolResultPart] = {}
        self._search_lock = anyio.Lock()
        """One ``tool_search`` at a time in its worker thread (its found set and index are the session's)."""
        self._known_tokens = 0
        self._known_upto = 0
        self.session_context: str | None = None
        """What ``session_start`` hooks printed as context; it goes into the system prompt."""
        self.preamble: str | None = None
        """The system prompt's opening in place of Kairox's own (a subagent's prompt)."""
        self.owned_client: OpenAiChatClient | AnthropicMessagesClient | None = None
        """The client the session opened itself (closed when it
        ends or the model is switched); a caller's is its own."""
        config = context.resolved.config
        self.window_tokens = window_tokens or context_window(context.resolved, client.model)
        """The model's context window (``model_providers.NAME.context_window``, the model's known window, or
        ``agent.context_window_tokens``)."""
        self.context_usage: ContextMeasured | None = None
        """The last measure of the context window (also sent as a ``ContextMeasured`` event)."""
        self.tools_warning: ToolDefinitionsLarge | None = None
        """The last warning that the tool definitions alone pass ``agent.tools_warning_share`` of the window."""
        self._auto_failed_upto = -1
        self._sent_order: dict[str, int] = {}
        self._cached = 0
        self.checkpoints = Checkpoints(context.resolved.home, context.resolved.workspace, transcript.session_id)
        """What each turn may change, recorded before it does (``rewind``)."""
        self.turn_base = 0
        """Turns of the transcript before this process took it up (a resume numbers on from them)."""
        self.plan: PlanToolProvider | None = None
        """``todo.write``: the model's plan (``open_session`` registers it)."""
        self.cache_key = "kairox-" + hashlib.sha256(str(context.resolved.workspace).encode()).hexdigest()[:16]
        """One per workspace: its sessions share the prompt prefix (``prompt_cache_key``)."""
        self.tool_search = ToolSearch(
            context.registry,
            threshold_tokens=search_threshold_tokens(config.tools.search_threshold, self.window_tokens),
        )
        """Defers the tool definitions behind ``tool_search`` when they pass ``tools.search_threshold``."""

    @property
    def session_id(self) -> str:
        return self.transcript.session_id

    @property
    def approver(self) -> Approver | None:
        """The front end's approver; ``None`` makes every ask a denial the model is told about."""
        return self._approver.front_end

    @approver.setter
    def approver(self, value: Approver | None) -> None:
        self._approver.front_end = value

    def add_usage(self, usage: Usage) -> None:
        """Tokens spent for this session elsewhere (its subagents)."""
        self.usage += usage

    def subscribe(self, sink: EventSink) -> None:
        self.events.add(sink)

    def emit(self, event: Event) -> None:
        self.events.emit(event)

    def _append(self, message: Message) -> None:
        self.messages.append(message)
        self.transcript.message(message)

    def system_prompt(self) -> str:
        opening = self.preamble or PREAMBLE.format(workspace=self.context.resolved.workspace)
        parts = [opening, self.context.prompt_context.strip()]
        if self.session_context:
            parts.append(f"<session-start-context>\n{self.session_context}\n</session-start-context>")
        if self.tool_search.deferred:
            parts.append(self.tool_search.prompt_index())
        return "\n\n".join(parts)

    async def start(self, source: str) -> None:
        """Fire the ``session_start`` hooks; their context joins the system prompt."""
        outcome = await self.context.hooks.session_start(source)
        self._hook_event("session_start", outcome)
        self.session_context = outcome.additional_context
        self.measure_context()
        # a caller that runs a turn at once starts it before this runs; one that waits for a prompt does not
        asyncio.get_running_loop().call_soon(self._at_hand_over)

    async def end(self) -> None:
        """Fire the ``session_end`` hooks and say that the session ended."""
        self._hook_event("session_end", await self.context.hooks.session_end("exit"))
        self.emit(SessionEnded(session_id=self.transcript.session_id, turns=self._turn))

    async def use_model(self, settings: ModelSettings) -> None:
        """Talk to the model of ``settings`` from the next turn on (the conversation so far goes with it): a new
        client replaces the current one, which is closed if the session opened it. ``ModelSetupError`` (a missing
        key) leaves the current model in place."""
        if self._scope is not None:
            raise KairoxError(
                "a turn is running in this session", hint="wait for it or cancel it, then switch the model"
            )
        api_key = settings.api_key()
        client = client_for(
            settings, events=self.events, api_key=api_key, on_request_sent=self._start_background_servers
        )
        self.transcript.hide(*(v for v in (api_key, *settings.headers.values()) if v))  # as the first model's key
        old, owned, before = self.client, self.owned_client, self.provider
        self.client, self.provider, self.owned_client = client, settings.provider, client
        self.emit(
            ModelSwitched(
                model=settings.model, provider=settings.provider, previous_model=old.model, previous_provider=before
            )
        )
        if owned is not None and old is owned:
            await owned.aclose()

    def _start_background_servers(self) -> None:
        """The MCP servers listed from the cache may start now: the first request is out (the model takes far
        longer to answer than they take to start), or the session waits for its first prompt."""
        if self.context.mcp is not None:
            self.context.mcp.start_background()

    def _at_hand_over(self) -> None:
        if self._turn == 0:  # the caller did not go straight to a turn: it waits for a prompt (the TUI, the GUI)
            self._start_background_servers()

    # --- the turn -------------------------------------------------------------------------------------------

    def cancel(self) -> None:
        """Stop the running turn: the model stream is closed and running tool calls are cancelled."""
        if self._scope is not None:
            self._scope.cancel()

    async def run_turn(self, text: str, *, images: Sequence[ImagePart] = ()) -> TurnResult:
        """One prompt (with ``images``, for a model that takes them) to the model's answer without tool calls."""
        if self._scope is not None:
            raise KairoxError("a turn is already running in this session", hint="wait for it or cancel() it first")
        self._turn += 1
        turn = self.turn_base + self._turn
        self._scope = scope = anyio.CancelScope()
        self._streamed, self._pending = [], {}
        outcome: tuple[TurnEndReason, str | None] = (TurnEndReason.CANCELLED, "cancelled")
        calls = [0]
        try:
            with scope:
                outcome = await self._turn_body(turn, text, calls, tuple(images))
        finally:
            self._scope = None
        if scope.cancelled_caught:
            self._close_cancelled()
            outcome = (TurnEndReason.CANCELLED, "the turn was cancelled")
        reason, message = outcome
        answer = self._last_answer()
        self.emit(TurnEnded(turn=turn, reason=reason, message=message, tool_calls=calls[0]))
        if reason is not TurnEndReason.BLOCKED:
            self._hook_event("post_turn", await self.context.hooks.post_turn(answer))
        return TurnResult(reason=reason, text=answer, message=message, tool_calls=calls[0])

    def _last_answer(self) -> str:
        for message in reversed(self.messages):
            if message.role is Role.ASSISTANT:
                return message.text
            if message.role is Role.USER:
                break
        return ""

    def _hook_event(self, name: str, outcome: "HookOutcome") -> None:
        if outcome.results:
            self.emit(
                TurnHookOutcome(
                    hook_event=name,
                    hooks=len(outcome.results),
                    blocked=outcome.blocked,
                    reason=outcome.reason,
                    added_context=bool(outcome.additional_context),
                )
            )

    async def _turn_body(
        self, turn: int, text: str, calls: list[int], images: tuple[ImagePart, ...] = ()
    ) -> tuple[TurnEndReason, str | None]:
        hooks = self.context.hooks
        self.emit(UserMessageSubmitted(turn=turn, text=text))
        added: list[str] = []
        for name, run in (("user_prompt_submit", hooks.user_prompt_submit), ("pre_turn", hooks.pre_turn)):
            outcome = await run(text)
            self._hook_event(name, outcome)
            if outcome.blocked:
                return TurnEndReason.BLOCKED, f"a {name} hook blocked the prompt: {outcome.reason or 'no reason given'}"
            if outcome.additional_context:
                added.append(outcome.additional_context)
        await anyio.to_thread.run_sync(self.checkpoints.begin, turn, len(self.messages), text)
        hooked = text + "".join(f"\n\n<hook-context>\n{c}\n</hook-context>" for c in added)
        self._append(Message(role=Role.USER, text=hooked, images=images))
        for step in range(1, self.limits.max_turns + 1):
            request = self._request()
            measured = self._measure(request)
            if self._compaction_due(measured):
                for keep in dict.fromkeys((self.limits.compact_keep_turns, min(1, self.limits.compact_keep_turns))):
                    if isinstance(await self._compact("auto", None, keep_turns=keep), CompactionFailed):
                        self._auto_failed_upto = len(self.messages)
                        break
                    request = self._request()
                    measured = self._measure(request)
                    if not self._compaction_due(measured):
                        break
            over = self._over_budget(request, measured)
            if over is not None:
                return TurnEndReason.CONTEXT_BUDGET, over
            self.emit(
                ModelRequestStarted(turn=turn, step=step, messages=len(request.messages), tools=len(request.tools))
            )
            self._streamed = []
            if self.client is not self.owned_client:
                self._start_background_servers()  # a caller's client does not say when its request is out
            try:
                response = await collect(
                    self.client, request, self._on_text, provider=self.provider, on_thought=self._on_thought
                )
            except KairoxError as exc:  # ModelProviderError from Kairox's clients; any KairoxError from a caller's
                failure = exc if isinstance(exc, ModelProviderError) else ModelProviderError(self.provider, str(exc))
                self.emit(ModelFailed(provider=failure.provider, message=failure.reason, status=failure.status))
                self._keep_streamed()
                return TurnEndReason.ERROR, str(failure)
            finally:
                self._start_background_servers()  # also when the request never went out
            self._streamed = []
            self._add_usage(response.usage)
            message = response.message
            self._append(message)
            self._known_tokens, self._known_upto = (
                response.usage.input_tokens + response.usage.output_tokens,
                len(self.messages),
            )
            if response.usage.input_tokens and not message.tool_calls:  # with calls, the next request is measured
                self._measure(request)
            self.emit(
                AssistantMessageCompleted(
                    turn=turn,
                    text=message.text,
                    stop_reason=response.stop_reason,
                    tool_calls=tuple(
                        {
                            "id": c.id,
                            "name": c.name,
                            "tool": self.context.registry.from_wire_name(c.name) or c.name,
                            "arguments": c.arguments,
                        }
                        for c in message.tool_calls
                    ),
                )
            )
            if not message.tool_calls:
                return TurnEndReason.COMPLETED, None
            allowed = max(0, self.limits.max_tool_calls_per_turn - calls[0])
            await self._run_tools(message.tool_calls[:allowed])
            calls[0] += min(allowed, len(message.tool_calls))
            for call in message.tool_calls[allowed:]:
                self._pending[call.id] = ToolResultPart(
                    call_id=call.id,
                    name=call.name,
                    is_error=True,
                    text=(
                        "not run: this turn reached agent.max_tool_calls_per_turn "
                        f"({self.limits.max_tool_calls_per_turn})"
                    ),
                )
            self._append(Message(role=Role.TOOL, tool_results=tuple(self._pending[c.id] for c in message.tool_calls)))
            self._pending = {}
            if allowed < len(message.tool_calls):
                return TurnEndReason.MAX_TOOL_CALLS, (
                    f"the turn stopped after {self.limits.max_tool_calls_per_turn}"
                    " tool calls (agent.max_tool_calls_per_turn)"
                )
        return (
            TurnEndReason.MAX_TURNS,
            f"the turn stopped after {self.limits.max_turns} model requests (agent.max_turns)",
        )

    def _add_usage(self, usage: Usage) -> None:
        self.usage += usage
        self._cached = usage.cache_read_tokens
        self.emit(
            UsageReported(
                input_tokens=usage.input_tokens,
                output_tokens=usage.output_tokens,
                session_input_tokens=self.usage.input_tokens,
                session_output_tokens=self.usage.output_tokens,
                cache_read_tokens=usage.cache_read_tokens,
                cache_write_tokens=usage.cache_write_tokens,
                session_cache_read_tokens=self.usage.cache_read_tokens,
            )
        )

    def _on_text(self, text: str) -> None:
        self._streamed.append(text)
        self.emit(AssistantTextDelta(text=text))

    def _on_thought(self, text: str) -> None:
        self.emit(AssistantThoughtDelta(text=text))

    def _keep_streamed(self) -> None:
        """Text that streamed before a failure or a cancel stays in the conversation, as the user saw it."""
        if self._streamed:
            self._append(Message(role=Role.ASSISTANT, text="".join(self._streamed)))
            self._streamed = []

    def _close_cancelled(self) -> None:
        """After a cancel: every tool call of the last message gets a result, so the conversation can go on."""
        self._keep_streamed()
        last = self.messages[-1] if self.messages else None
        if last is not None and last.role is Role.ASSISTANT and last.tool_calls:
            results = tuple(
                self._pending.get(c.id)
                or ToolResultPart(
                    call_id=c.id, name=c.name, text="cancelled by the user before it finished", is_error=True
                )
                for c in last.tool_calls
            )
            self._append(Message(role=Role.TOOL, tool_results=results))
        self._pending = {}

    def _over_budget(self, request: ModelRequest, measured: ContextMeasured) -> str | None:
        budget = self.limits.context_budget_tokens
        if budget is None:
            return None
        estimate = measured.used_tokens
        if estimate + request.max_output_tokens <= budget:
            return None
        return (
            f"the next request would take about {estimate} tokens plus "
            f"{request.max_output_tokens} for the answer, more than "
            f"agent.context_budget_tokens ({budget}); start a new session or raise the budget"
        )

    # --- the context window ---------------------------------------------------------------------------------

    def _request(self) -> ModelRequest:
        return ModelRequest(
            model=self.client.model,
            system=self.system_prompt(),
            messages=tuple(self.messages),
            tools=self._in_sent_order(self.tool_search.definitions(self.client.dialect)),
            max_output_tokens=self.limits.max_output_tokens,
            cache_key=self.cache_key,
        )

    def _in_sent_order(self, definitions: list[JsonObject]) -> tuple[JsonObject, ...]:
        """The definitions in the order the session first sent them: a tool that comes later (a server that
        started, a tool ``tool_search`` found) is appended, so the prefix the provider cached stays the same."""
        order = self._sent_order
        names = [str(d.get("name") or d.get("function", {}).get("name")) for d in definitions]
        for name in names:
            order.setdefault(name, len(order))
        return tuple(d for _, d in sorted(zip(names, definitions, strict=True), key=lambda p: order[p[0]]))

    def measure_context(self) -> ContextMeasured:
        """Measure what the next request would take now (and send it as a ``ContextMeasured`` event)."""
        return self._measure(self._request())

    def _measure(self, request: ModelRequest) -> ContextMeasured:
        tools_chars = definitions_chars(request.tools)
        if self._known_tokens and self._known_upto <= len(self.messages):
            used, source = (
                self._known_tokens + estimate_tokens(message_chars(self.messages[self._known_upto :])),
                "usage",
            )
        else:
            used, source = (
                estimate_tokens(len(request.system) + tools_chars + message_chars(request.messages)),
                "estimate",
            )
        window = self.window_tokens
        measured = ContextMeasured(
            used_tokens=used,
            window_tokens=window,
            tools_tokens=estimate_tokens(tools_chars),
            tools=len(request.tools),
            source=source,
            share=round(used / window, 3),
            cached_tokens=self._cached,
        )
        self.context_usage = measured
        self.emit(measured)
        self._check_tools(measured)
        return measured

    def _check_tools(self, measured: ContextMeasured) -> None:
        share = self.limits.tools_warning_share
        if share == "off" or measured.tools_tokens < share * measured.window_tokens:
            return
        if self.tools_warning is not None and self.tools_warning.tools == measured.tools:
            return  # once for each set of definitions
        self.tools_warning = warning = ToolDefinitionsLarge(
            tools_tokens=measured.tools_tokens,
            window_tokens=measured.window_tokens,
            tools=measured.tools,
            threshold=share,
            message=(
                f"the {measured.tools} tool definitions alone take about {measured.tools_tokens} tokens, "
                f"{measured.tools_tokens / measured.window_tokens:.0%} of "
                f"the model's {measured.window_tokens}-token context window "
                f"(agent.tools_warning_share = {share:g}); disable servers or tools this session does not need "
                "(tools.disabled), or let tool_search defer them (tools.search_threshold)"
            ),
        )
        self.emit(warning)

    def _compaction_due(self, measured: ContextMeasured) -> bool:
        threshold = self.limits.compact_threshold
        if threshold == "off" or len(self.messages) <= self._auto_failed_upto:
            return False
        return measured.used_tokens >= threshold * measured.window_tokens

    async def compact(self, instructions: str | None = None) -> ContextCompacted | CompactionFailed:
        """``/compact``: the older turns are replaced by the model's summary of them (``instructions`` say what the
        summary should keep); the last ``agent.compact_keep_turns`` prompts stay as they are. Between turns only."""
        if self._scope is not None:
            raise KairoxError("a turn is running in this session", hint="compact after it ends, or cancel() it first")
        self._scope = scope = anyio.CancelScope()
        result: ContextCompacted | CompactionFailed = CompactionFailed(
            trigger="manual", message="the compaction was cancelled"
        )
        try:
            with scope:
                result = await self._compact("manual", instructions, keep_turns=self.limits.compact_keep_turns)
        finally:
            self._scope = None
        if scope.cancelled_caught:
            self.emit(result)
        return result

    async def _compact(
        self, trigger: str, instructions: str | None, *, keep_turns: int
    ) -> ContextCompacted | CompactionFailed:
        def failed(message: str) -> CompactionFailed:
            event = CompactionFailed(trigger=trigger, message=message)
            self.emit(event)
            return event

        cut = cut_point(self.messages, keep_turns)
        if cut is None:
            return failed("there is nothing to compact yet: the conversation holds no earlier turn to summarise")
        before = (
            self.context_usage.used_tokens if self.context_usage is not None else self.measure_context().used_tokens
        )
        outcome = await self.context.hooks.pre_compact(trigger, instructions or "")
        self._hook_event("pre_compact", outcome)
        if outcome.blocked:
            return failed(f"a pre_compact hook kept the conversation as it is: {outcome.reason or 'no reason given'}")
        older, kept = self.messages[:cut], self.messages[cut:]
        self.emit(CompactionStarted(trigger=trigger, messages=len(older), used_tokens=before))
        request = ModelRequest(
            model=self.client.model,
            system=SUMMARY_SYSTEM,
            messages=(
                *older,
                Message.user(summary_instructions([instructions or "", outcome.additional_context or ""])),
            ),
            # the same definitions: a conversation with tool calls needs them (Anthropic), and the model knows the tools
            tools=self._in_sent_order(self.tool_search.definitions(self.client.dialect)),
            max_output_tokens=self.limits.max_output_tokens,
        )
        try:
            response = await collect(self.client, request, lambda _text: None, provider=self.provider)
        except KairoxError as exc:
            return failed(f"the summary request failed: {exc}")
        self._add_usage(response.usage)
        if not response.message.text.strip():
            return failed("the model answered the summary request without text; the conversation is kept as it was")
        plan = self.plan.entries if self.plan is not None else ()
        kept_plan = f"\n\nThe plan (todo.write) as it stands:\n{plan_text(plan)}" if plan else ""
        summary = summary_message(response.message.text + kept_plan)
        if message_chars([summary]) >= message_chars(older):  # nothing saved: a short conversation stays word for word
            return failed(
                f"the summary is no shorter than the {len(older)} messages it would replace; "
                "the conversation is kept as it was"
            )
        self.messages = [summary, *kept]
        self.transcript.compaction(summary, kept=len(kept))
        self._known_tokens, self._known_upto = 0, 0
        after = self.measure_context().used_tokens
        done = ContextCompacted(
            trigger=trigger,
            replaced_messages=len(older),
            kept_messages=len(kept),
            tokens_before=before,
            tokens_after=after,
            summary=response.message.text.strip(),
        )
        self.emit(done)
        return done

    # --- tools ----------------------------------------------------------------------------------------------

    def _concurrent(self, call: ToolCallPart) -> bool:
        """Reads run side by side; writes, executions and external tools (plugins, MCP tools unless their server's
        read-only annotations are trusted) one at a time."""
        name = self.context.registry.from_wire_name(call.name)
        spec = self.context.registry.get(name) if name else None
        return spec is None or effective_profile(spec).access is Access.READ or mcp_read_only(spec)

    async def _run_tools(self, calls: Sequence[ToolCallPart]) -> None:
        batches: list[list[ToolCallPart]] = []
        for call in calls:
            if call.invalid_arguments is not None:
                self._pending[call.id] = ToolResultPart(
                    call_id=call.id,
                    name=call.name,
                    text=f"{call.name} was not run: {call.invalid_arguments}",
                    is_error=True,
                )
                continue
            concurrent = self._concurrent(call)
            if concurrent and batches and len(batches[-1]) and self._concurrent(batches[-1][0]):
                batches[-1].append(call)
            else:
                batches.append([call])
        for batch in batches:
            if len(batch) == 1:
                await self._call(batch[0])
                continue
            async with anyio.create_task_group() as group:
                for call in batch:
                    group.start_soon(self._call, call)

    async def _call(self, call: ToolCallPart) -> None:
        registry = self.context.registry
        started = time.perf_counter()
        if self.tool_search.deferred and (
            call.name == TOOL_SEARCH or self.tool_search.is_deferred(registry.from_wire_name(call.name) or call.name)
        ):
            await self._search_call(call, started)
            return
        if not self._concurrent(call):  # it may change files: record them first
            await self._checkpoint(call)
        try:
            result = await registry.call_from_model(self.client.dialect, call.name, call.arguments, call_id=call.id)
        except anyio.get_cancelled_exc_class():
            # the gate reports calls that end; one cancelled halfway ends here, and front ends should see it end
            self.emit(
                ToolCallFinished(
                    call_id=call.id,
                    tool=registry.from_wire_name(call.name) or call.name,
                    is_error=True,
                    size_chars=0,
                    duration_ms=round((time.perf_counter() - started) * 1000, 3),
                    error="cancelled by the user",
                )
            )
            raise
        self._pending[call.id] = _result_part(call, result)

    async def _checkpoint(self, call: ToolCallPart) -> None:
        registry = self.context.registry
        spec = registry.get(registry.from_wire_name(call.name) or call.name)
        if spec is None:
            return
        access = effective_profile(spec).access
        paths = registry.policy.call_paths(spec, call.arguments) if access is Access.WRITE else ()
        note = None
        if access is Access.EXECUTE:
            what = registry.policy.command_line(spec, call.arguments) or spec.name
            note = f"`{what}` ({spec.name}): what it did outside the workspace (a push, a network call, other files)"
            note += "" if self.checkpoints.git else ", and inside it (not a git repository: no snapshot)"
        elif access is Access.EXTERNAL:
            note = f"{spec.name}: what it changed outside Kairox"
        await anyio.to_thread.run_sync(self.checkpoints.before_change, paths, note)

    def rewind_plan(self, turn: int | None = None) -> RewindPlan:
        """What :meth:`rewind` would do (default: the latest turn)."""
        return self.checkpoints.plan(turn)

    async def rewind(self, turn: int | None = None, *, conversation: bool = False) -> RewindPlan:
        """Put the files back as they were before ``turn`` (default: the latest) and, with ``conversation``, cut
        the conversation back to before it. Between turns only."""
        if self._scope is not None:
            raise KairoxError("a turn is running in this session", hint="rewind after it ends, or cancel() it first")
        plan = await anyio.to_thread.run_sync(self.checkpoints.plan, turn)
        keep = conversation_cut(self.messages, plan) if conversation else None
        await anyio.to_thread.run_sync(self.checkpoints.apply, plan)
        if keep is not None:
            self.messages = self.messages[:keep]
            self.transcript.rewind(keep)
            await anyio.to_thread.run_sync(self.checkpoints.rewound, plan.turn)
            self._known_tokens, self._known_upto = 0, 0
        self.emit(
            Rewound(
                turn=plan.turn,
                restored=tuple(p for p, _ in plan.restore),
                removed=plan.remove,
                irreversible=plan.irreversible,
                messages=keep,
            )
        )
        if keep is not None:
            self.measure_context()
        return plan

    async def _search_call(self, call: ToolCallPart, started: float) -> None:
        """``tool_search``, and a deferred tool called before it was found (the model has not seen its schema).
        With ``tools.semantic`` the search asks the embeddings endpoint (up to its timeout): it runs in a worker
        thread, so the session's loop goes on serving its servers, events and a cancel meanwhile."""
        if call.name == TOOL_SEARCH and self.tool_search.semantic is not None:
            async with self._search_lock:
                text, is_error = await anyio.to_thread.run_sync(
                    self.tool_search.search, call.arguments, self.client.dialect, abandon_on_cancel=True
                )
        elif call.name == TOOL_SEARCH:
            text, is_error = self.tool_search.search(call.arguments, self.client.dialect)  # lexical: in memory, quick
        else:
            text, is_error = (
                f"{call.name} is not loaded yet: call `tool_search` to find it, then call it from the next step",
                True,
            )
        self._pending[call.id] = ToolResultPart(call_id=call.id, name=call.name, text=text, is_error=is_error)
        self.emit(
            ToolCallFinished(
                call_id=call.id,
                tool=call.name,
                is_error=is_error,
                size_chars=len(text),
                duration_ms=round((time.perf_counter() - started) * 1000, 3),
                error=text if is_error else None,
            )
        )
