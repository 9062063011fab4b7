"""Approvals for ``kairox serve``: an ``ask`` becomes a question to the client that made the call.

The question goes out as a form elicitation on the call's own request, so the person in front of that client
answers it (once, or for the rest of their session). A client that cannot answer (no elicitation capability,
or a stateless request without a back-channel) gets the call refused with a message that names the rule that
asked and how to allow the call instead. "Always" is never offered: a client must not write the user's config.

The client is the party being gated (often an agent itself), not necessarily a person (Y12): its answer approves
at most what ``--yes`` may (``unattended_refusal``). An ask about a protected path, Kairox's own configuration, a
write outside the writable roots or a run outside the sandbox is refused without a question, saying what the
user can do instead.
"""

import contextvars
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import anyio
import mcp_types as types
from mcp.server.context import ServerRequestContext

from kairox.policy import ApprovalAnswer, ApprovalRequest, refusal_text, unattended_refusal
from kairox.runtime import link_notes

current_request: contextvars.ContextVar["ServerRequestContext[Any, Any] | None"] = contextvars.ContextVar(
    "kairox_gateway_request", default=None
)
"""The MCP request a tool call runs for; set by the call handler, read by the approver in the same task."""

ONCE, SESSION, DENY = "allow once", "allow for this session", "deny"
CLIENT = "an MCP client's answer to kairox serve"
NO_ELICITATION = (
    "this MCP client cannot answer approval questions (it does not support elicitation); add an allow rule to "
    "policy.rules.allow, or use a client that supports elicitation"
)
NO_BACK_CHANNEL = (
    "this request cannot carry a question back to the client (a stateless request of the 2026 revision); "
    "connect with the initialize handshake to be asked, or add an allow rule to policy.rules.allow"
)


@dataclass(frozen=True, slots=True)
class AskOutcome:
    """How one ``ask`` was answered, for the audit log."""

    approved: bool
    how: str
    """``elicited``, ``declined``, ``cancelled``, ``unanswerable``, ``refused`` (beyond what a client may approve)
    or ``failed``."""


def why_not_elicit(ctx: "ServerRequestContext[Any, Any] | None") -> str | None:
    """Why this request's client cannot be asked, or None when it can."""
    caps = ctx.session.client_capabilities if ctx is not None else None
    elicitation = caps.elicitation if caps is not None else None
    if (
        ctx is None or elicitation is None or (elicitation.form is None and elicitation.url is not None)
    ):  # `{}` means form
        return NO_ELICITATION
    return None if ctx.session.can_send_request else NO_BACK_CHANNEL


def question(request: ApprovalRequest) -> tuple[str, dict[str, Any]]:
    """The elicitation's message and schema for one approval request."""
    lines = [f"Allow {request.tool}?", f"Why it asks: {request.reason}"]
    if request.asked_by and request.asked_by not in request.reason:
        lines.append(f"Asked by: {request.asked_by}")
    lines += link_notes(request)
    if request.command:
        lines.append(f"Command: {request.command}")
    elif request.arguments:
        lines.append(f"Arguments: {request.arguments}")
    choices = [ONCE, *([SESSION] if request.session_allowed else []), DENY]
    schema = {
        "type": "object",
        "properties": {"decision": {"type": "string", "title": "Decision", "enum": choices, "default": ONCE}},
        "required": ["decision"],
    }
    return "\n".join(lines), schema


Asker = Callable[["ServerRequestContext[Any, Any]", str, str, dict[str, Any]], Awaitable["types.ElicitResult"]]


class ElicitingApprover:
    """The Approver of one client session of the gateway."""

    def __init__(self, client: str, *, timeout_sec: float = 300.0, ask: "Asker | None" = None) -> None:
        self.client = client
        self.timeout_sec = timeout_sec
        self.ask = ask
        """How the question goes out (a team gateway's, answered on any replica); the session's own by default."""
        self.outcomes: dict[str, AskOutcome] = {}
        """By call id: how the asks of recent calls were answered (the gateway pops them for the audit)."""

    async def request_approval(self, request: ApprovalRequest) -> ApprovalAnswer:
        beyond = unattended_refusal(request, who=CLIENT)
        if beyond is not None:  # not asked at all: whatever the client answered would be the gated party's own say
            self.outcomes[request.call_id] = AskOutcome(approved=False, how="refused")
            return ApprovalAnswer.deny(beyond)
        ctx = current_request.get()
        unanswerable = why_not_elicit(ctx)
        if ctx is None or unanswerable is not None:
            self.outcomes[request.call_id] = AskOutcome(approved=False, how="unanswerable")
            return ApprovalAnswer.deny(refusal_text(request, unanswerable))
        message, schema = question(request)
        try:
            with anyio.fail_after(self.timeout_sec):
                if self.ask is not None:
                    result = await self.ask(ctx, request.tool, message, schema)
                else:
                    result = await ctx.session.elicit_form(message, schema, related_request_id=ctx.request_id)
        except TimeoutError:
            self.outcomes[request.call_id] = AskOutcome(approved=False, how="failed")
            return ApprovalAnswer.deny(
                f"approval for {request.tool} was not answered within "
                f"{self.timeout_sec:g}s; call it again to be asked again"
            )
        except Exception as exc:  # the client went away or answered with an error: nobody approved the call
            self.outcomes[request.call_id] = AskOutcome(approved=False, how="failed")
            return ApprovalAnswer.deny(f"approval for {request.tool} could not be asked: {exc}")
        return self.answered(request, result)

    def answered(
        self, request: ApprovalRequest, result: types.ElicitResult, *, name_choice: bool = False
    ) -> ApprovalAnswer:
        """The approval a client's answer to ``question(request)`` gives, noted for the audit; ``name_choice``: a
        refusal names a choice that was not offered."""
        choice = (result.content or {}).get("decision") if result.action == "accept" else None
        if choice == SESSION and request.session_allowed:
            self.outcomes[request.call_id] = AskOutcome(approved=True, how="elicited")
            return ApprovalAnswer.allow_session()
        if choice == ONCE:
            self.outcomes[request.call_id] = AskOutcome(approved=True, how="elicited")
            return ApprovalAnswer.allow_once()
        how = "cancelled" if result.action == "cancel" else "declined"
        self.outcomes[request.call_id] = AskOutcome(approved=False, how=how)
        said = f" ({choice})" if name_choice and choice not in (None, DENY) else ""
        return ApprovalAnswer.deny(f"{request.tool} was {how} by the user of {self.client}{said}: {request.reason}")
