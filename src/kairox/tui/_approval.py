"""The approval modal: the call in full, why it asks, and the answers, each on one key. It answers with the
shared shapes of ``kairox.policy``, as the command line's prompt does."""

import asyncio
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from textual import events
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Input, Static

from kairox.policy import ApprovalAnswer, ApprovalRequest, RuleLayer
from kairox.runtime import link_notes
from kairox.tui._diff import diff_text, edit_diff
from kairox.tui._servers import compact_json

if TYPE_CHECKING:
    from textual.app import App

    from kairox.runtime import ApprovalChoice


_ALWAYS_KEYS = "abcefghijkl"
"""Keys of the always answers (d and m deny, o and s allow once and for the session)."""


def keyed_choices(request: ApprovalRequest) -> list[tuple[str, "ApprovalChoice"]]:
    """The runtime's choices of ``request``, each on its key: o, s (or 1-9 for several grants), a (b, c ... for
    several rules to save), d, m."""
    from kairox.runtime import ApprovalScope, approval_choices

    found = approval_choices(request)
    sessions = [c for c in found if c.scope is ApprovalScope.SESSION][:9]
    always = [c for c in found if c.scope is ApprovalScope.ALWAYS][: len(_ALWAYS_KEYS)]
    keyed: list[tuple[str, ApprovalChoice]] = []
    for choice in found:
        if choice.scope is ApprovalScope.ONCE:
            keyed.append(("o", choice))
        elif choice in sessions:
            keyed.append(("s" if len(sessions) == 1 else str(sessions.index(choice) + 1), choice))
        elif choice in always:
            keyed.append((_ALWAYS_KEYS[always.index(choice)], choice))
        elif choice.scope is ApprovalScope.DENY:
            keyed.append(("m" if choice.with_message else "d", choice))
    return keyed


class ApprovalScreen(ModalScreen[ApprovalAnswer]):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "deny", "deny", show=False),
        Binding("q", "nothing", show=False),  # not the app's quit: the dialog waits for an answer
    ]

    def __init__(self, request: ApprovalRequest, workspace: Path | None = None) -> None:
        super().__init__(classes="approval")
        self.request = request
        self.diff = edit_diff(request.tool, request.arguments, workspace) if workspace is not None else None
        """What an ``fs.write`` / ``fs.edit`` would change: shown as a diff, answered with y (accept) or n (reject)."""

    def compose(self) -> ComposeResult:
        request = self.request
        diff = self.diff
        with Vertical(id="approval-box"):
            title = (
                f"Approve {request.tool}?"
                if diff is None
                else f"Accept this edit of {diff.path} ({diff.stats})?  {request.tool}"
            )
            yield Static(title, id="approval-title", markup=False)
            why = f"why: {request.reason}" + (f" (rule {request.rule})" if request.rule else "")
            if request.asked_by:
                why += f"\nasked by: {request.asked_by}"
            why += "".join(f"\n{note}" for note in link_notes(request))
            yield Static(why, markup=False)
            with VerticalScroll(id="approval-call"):
                if diff is not None:
                    yield Static(diff_text(diff), id="approval-diff")
                else:
                    shown = (
                        f"$ {request.command}"
                        if request.command is not None
                        else compact_json(request.arguments, limit=20000)
                    )
                    yield Static(shown, markup=False, id="approval-arguments")
            lines = [f"[{key}] {choice.label}" for key, choice in keyed_choices(request)]
            if diff is not None:
                lines.insert(0, "[y] accept the edit (once)   [n] reject it")
            yield Static("\n".join(lines), markup=False, id="approval-choices")
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
        if self.diff is not None and key in ("y", "n"):
            key = "o" if key == "y" else "d"  # accept / reject an edit: allow once / deny
        for choice_key, choice in keyed_choices(self.request):
            if choice_key == key and not choice.with_message:
                # an always answer saves to the user layer from here; the command line and the GUI offer the others
                return choice.answer(
                    layer=RuleLayer.USER if RuleLayer.USER in choice.layers else None,
                    message="denied in the approval dialog",
                )
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

    def __init__(self, app: "App[Any]", workspace: Path | None = None) -> None:
        self.app = app
        self.workspace = workspace
        """The files an edit's diff is computed against."""

    async def request_approval(self, request: ApprovalRequest) -> ApprovalAnswer:
        answer: asyncio.Future[ApprovalAnswer] = asyncio.get_running_loop().create_future()

        def done(result: ApprovalAnswer | None) -> None:
            if not answer.done():
                answer.set_result(result or ApprovalAnswer.deny("the approval dialog was closed"))

        # pushed from the app's own loop: Textual hands the answer back through the message pump that pushed the
        # dialog, and a panel asking from its key handler keeps its own pump busy awaiting this very answer
        self.app.call_later(self.app.push_screen, ApprovalScreen(request, self.workspace), done)
        return await answer
