"""The approval modal: the call in full, why it asks, and the answers, each on one key. It answers with the
shared shapes of ``kairox.policy``, as the command line's prompt does."""

import asyncio
from typing import TYPE_CHECKING, Any, ClassVar

from textual import events
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Input, Static

from kairox.policy import ApprovalAnswer, ApprovalRequest, RuleLayer
from kairox.tui._servers import compact_json

if TYPE_CHECKING:
    from textual.app import App


def choices(request: ApprovalRequest) -> list[tuple[str, str]]:
    """``(key, label)`` of every answer the request offers, in the order shown."""
    options = [("o", "allow once")]
    for index, grant in enumerate(request.grants[:9], start=1):
        suffix = "" if grant.exact else f"  (rule {grant.rule})"
        options.append((str(index) if len(request.grants) > 1 else "s", f"allow for this session: {grant.covers}{suffix}"))
    if request.always_allowed:
        for grant in request.grants:
            if grant.persistable:
                options.append(("a", f"allow always: save allow rule {grant.rule} to the user configuration"))
                break
    options += [("d", "deny"), ("m", "deny with a message to the model")]
    return options


class ApprovalScreen(ModalScreen[ApprovalAnswer]):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "deny", "deny", show=False),
        Binding("q", "nothing", show=False),  # not the app's quit: the dialog waits for an answer
    ]

    def __init__(self, request: ApprovalRequest) -> None:
        super().__init__(classes="approval")
        self.request = request

    def compose(self) -> ComposeResult:
        request = self.request
        with Vertical(id="approval-box"):
            yield Static(f"Approve {request.tool}?", id="approval-title", markup=False)
            why = f"why: {request.reason}" + (f" (rule {request.rule})" if request.rule else "")
            if request.asked_by:
                why += f"\nasked by: {request.asked_by}"
            yield Static(why, markup=False)
            with VerticalScroll(id="approval-call"):
                shown = f"$ {request.command}" if request.command is not None else compact_json(request.arguments, limit=20000)
                yield Static(shown, markup=False, id="approval-arguments")
            yield Static("\n".join(f"[{key}] {label}" for key, label in choices(request)), markup=False, id="approval-choices")
            yield Input(placeholder="message to the model, then Enter", id="approval-message", classes="hidden")

    def on_key(self, event: events.Key) -> None:
        key = event.key
        message = self.query_one("#approval-message", Input)
        if not message.has_class("hidden"):
            return
        answer = self._answer_for(key)
        if answer is not None:
            event.stop()
            self.dismiss(answer)
        elif key == "m":
            event.stop()
            message.remove_class("hidden")
            message.focus()

    def _answer_for(self, key: str) -> ApprovalAnswer | None:
        grants = self.request.grants
        if key == "o":
            return ApprovalAnswer.allow_once()
        if key == "s" and len(grants) == 1:
            return ApprovalAnswer.allow_session(grants[0].rule)
        if key.isdigit() and 1 <= int(key) <= len(grants) and len(grants) > 1:
            return ApprovalAnswer.allow_session(grants[int(key) - 1].rule)
        if key == "a" and self.request.always_allowed:
            grant = next(g for g in grants if g.persistable)
            return ApprovalAnswer.allow_always(grant.rule, layer=RuleLayer.USER)
        if key == "d":
            return ApprovalAnswer.deny("denied in the approval dialog")
        return None

    def on_input_submitted(self, event: Input.Submitted) -> None:
        text = event.value.strip()
        self.dismiss(ApprovalAnswer.deny(text or "denied in the approval dialog"))

    def action_nothing(self) -> None:
        pass

    def action_deny(self) -> None:
        self.dismiss(ApprovalAnswer.deny("denied in the approval dialog"))


class TuiApprover:
    """The session's approver: each request opens the modal and waits for its answer. Any part of the app may
    ask: the session's worker about a tool call, a panel about a configuration write from its key handler."""

    def __init__(self, app: "App[Any]") -> None:
        self.app = app

    async def request_approval(self, request: ApprovalRequest) -> ApprovalAnswer:
        answer: asyncio.Future[ApprovalAnswer] = asyncio.get_running_loop().create_future()

        def done(result: ApprovalAnswer | None) -> None:
            if not answer.done():
                answer.set_result(result or ApprovalAnswer.deny("the approval dialog was closed"))

        # pushed from the app's own loop: Textual hands the answer back through the message pump that pushed the
        # dialog, and a panel asking from its key handler keeps its own pump busy awaiting this very answer
        self.app.call_later(self.app.push_screen, ApprovalScreen(request), done)
        return await answer
