"""Asks for clients of the 2026-07-28 revision: a stateless request cannot carry a question back, so the call
ends in an ``input_required`` result holding the question, and the client's retry brings the answer.

The first round runs the call through the gate as usual; when the gate asks, this approver notes the question
(and refuses: nothing has run), and the gateway turns the refusal into ``input_required``. The retry carries the
answer and the sealed ``requestState`` (the SDK's boundary verifies it was minted here, for this request); the
call goes through the gate again and this approver answers the ask from the client's reply, by the same rules the
eliciting approver applies (``allow for this session`` only where the question offered it).
"""

import contextvars
import hashlib
import json
from dataclasses import dataclass
from typing import Any

import mcp_types as types
from mcp.server.context import ServerRequestContext

from kairox.gateway._approver import (
    CLIENT,
    NO_BACK_CHANNEL,
    ElicitingApprover,
    current_request,
    question,
    why_not_elicit,
)
from kairox.policy import ApprovalAnswer, ApprovalRequest, unattended_refusal

ANSWER_KEY = "kairox/approval"
"""The key of the one question in ``inputRequests`` / ``inputResponses``."""

given_answer: contextvars.ContextVar["types.ElicitResult | None"] = contextvars.ContextVar(
    "kairox_gateway_answer", default=None
)
"""The client's answer to the question of the previous round, while its retry runs through the gate."""


@dataclass(frozen=True, slots=True)
class Pending:
    """A question the gate asked during a round that could not carry it."""

    request: ApprovalRequest
    message: str
    schema: dict[str, Any]


class RoundTripApprover:
    """The approver of one client session: elicits where the request can carry a question (the inner approver),
    answers from the client's reply on a 2026 retry, and otherwise notes the question for ``input_required``."""

    def __init__(self, inner: ElicitingApprover, pending: dict[str, Pending]) -> None:
        self.inner = inner
        self.pending = pending
        """By call id: the question a round could not carry (the gateway's, shared by its sessions: a stateless
        request has a session of its own; the gateway pops it)."""

    async def request_approval(self, request: ApprovalRequest) -> ApprovalAnswer:
        if unattended_refusal(request, who=CLIENT) is not None:
            # beyond what the gated party may approve: the inner approver refuses it, and no round trip is offered
            return await self.inner.request_approval(request)
        answer = given_answer.get()
        if answer is not None:
            return self.inner.answered(request, answer, name_choice=True)
        # the inner approver refuses what it cannot ask; a 2026 round that could carry it as input_required is noted
        if why_not_elicit(current_request.get()) == NO_BACK_CHANNEL:
            message, schema = question(request)
            self.pending[request.call_id] = Pending(request, message, schema)
        return await self.inner.request_approval(request)


def call_digest(name: str, arguments: dict[str, Any]) -> str:
    text = json.dumps({"tool": name, "arguments": arguments}, sort_keys=True, default=str, ensure_ascii=False)
    return hashlib.sha256(text.encode()).hexdigest()


def input_required(pending: Pending, name: str, arguments: dict[str, Any]) -> types.InputRequiredResult:
    """The question as the 2026 revision carries it, with the state that binds the answer to this very call."""
    ask = types.ElicitRequest(
        params=types.ElicitRequestFormParams(message=pending.message, requested_schema=pending.schema)
    )  # type: ignore[arg-type]
    state = json.dumps({"v": 1, "call": call_digest(name, arguments)})
    return types.InputRequiredResult(input_requests={ANSWER_KEY: ask}, request_state=state)


def answer_of(ctx: "ServerRequestContext[Any, Any]", params: types.CallToolRequestParams) -> types.ElicitResult | None:
    """The client's answer to this call's question, when this request is the retry of a round that asked it (the
    state, verified by the SDK's boundary, names this call); None otherwise."""
    if not params.request_state or not params.input_responses:
        return None
    try:
        state = json.loads(params.request_state)
    except ValueError:
        return None
    if not isinstance(state, dict) or state.get("call") != call_digest(params.name, dict(params.arguments or {})):
        return None
    reply = params.input_responses.get(ANSWER_KEY)
    return reply if isinstance(reply, types.ElicitResult) else None
