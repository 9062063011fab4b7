"""The command line's approvers, built on the shared approval shapes: a terminal prompt, ``--yes``, and a
refusal that says how to allow when there is nobody to ask."""

import json
import sys
from typing import TYPE_CHECKING

import anyio

from kairox.policy import (
    ApprovalAnswer,
    ApprovalRequest,
    Approver,
    NonInteractiveApprover,
    RuleLayer,
    UnattendedApprover,
)

if TYPE_CHECKING:
    from kairox.runtime import ApprovalChoice

_YES_HINT = "run the command again with --yes to approve it once"


class CliApprover:
    """Prompts on the terminal (stderr), showing the exact call, why it asks, and what each grant covers."""

    async def request_approval(self, request: ApprovalRequest) -> ApprovalAnswer:
        sys.stderr.write(render_request(request))
        sys.stderr.flush()
        answer = (await anyio.to_thread.run_sync(sys.stdin.readline)).strip()
        return parse_answer(request, answer)


def render_request(request: ApprovalRequest) -> str:
    # loaded already: every command that prompts builds on the runtime
    from kairox.runtime import CONFIG_WRITE_TOOL, link_notes

    if request.tool == CONFIG_WRITE_TOOL:
        # one write, asked about once: yes or no, and no is what Enter answers
        return (
            f"\nkairox: {request.reason}\n  change: {request.arguments.get('change')}"
            f"\n  write it to {request.arguments.get('path')}? [y/N] "
        )
    lines = [f"\nkairox: {request.tool} needs approval: {request.reason}"]
    if request.asked_by:
        lines.append(f"  asked by: {request.asked_by}")
    lines += [f"  {note}" for note in link_notes(request)]
    if request.command is not None:
        lines.append(f"  command: {request.command}")
    else:
        arguments = json.dumps(request.arguments, ensure_ascii=False)
        lines.append(f"  arguments: {arguments if len(arguments) <= 2000 else arguments[:2000] + '…'}")
    for key, choice in _keyed(request):
        if choice.scope == "always" and len(choice.layers) > 1:
            others = " or ".join(f"{key}:{layer}" for layer in choice.layers[1:])
            lines.append(f"  [{key}] {choice.label}; answer {others} to save it there")
        elif choice.with_message:
            lines.append(f"  [d MESSAGE] {choice.label}")
        else:
            lines.append(f"  [{key}] {choice.label}")
    lines.append("  answer: ")
    return "\n".join(lines)


def _keyed(request: ApprovalRequest) -> "list[tuple[str, ApprovalChoice]]":
    """The runtime's choices on the prompt's keys: o, s1 s2 ..., a1 a2 ... (numbered by grant), d."""
    from kairox.runtime import approval_choices

    keyed = []
    for choice in approval_choices(request):
        if choice.grant is not None:
            key = "w" if choice.whole_session else choice.scope.value[0]  # w: for the whole session (a subagent's)
            keyed.append((f"{key}{request.grants.index(choice.grant) + 1}", choice))
        else:
            keyed.append(("o" if choice.scope == "once" else "d", choice))
    return keyed


def parse_answer(request: ApprovalRequest, text: str) -> ApprovalAnswer:
    """``o``, ``s``/``s2``, ``a``/``a1:project``, ``d`` or ``d MESSAGE``; anything else denies."""
    word, _, rest = text.partition(" ")
    key = word.lower()
    if key in ("once", "y", "yes"):
        key = "o"
    if key in ("deny", "n", "no"):
        key = "d"
    if key.startswith("session"):
        key = "s1"
    key, _, where = key.partition(":")
    if key in ("s", "a", "w"):
        key += "1"
    keyed = dict(_keyed(request))
    if key == "d":
        return ApprovalAnswer.deny(rest.strip() or "denied at the prompt")
    choice = keyed.get(key)
    if choice is None:
        if key.startswith("a") and any(k == "s" + key[1:] for k in keyed):
            return ApprovalAnswer.deny("denied at the prompt ('always' is not offered for this call)")
        return ApprovalAnswer.deny(
            "denied at the prompt (no such choice)" if key[:1] in ("s", "a") else "denied at the prompt"
        )
    try:
        layer = RuleLayer(where) if where else None
    except ValueError:
        return ApprovalAnswer.deny(f"denied at the prompt (unknown layer {where!r})")
    return choice.answer(layer=layer)


class _ApproveOnce:
    async def request_approval(self, request: ApprovalRequest) -> ApprovalAnswer:
        return ApprovalAnswer(approved=True, reason="approved by --yes")


class YesApprover(UnattendedApprover):
    """``--yes``: what the policy asks about is approved once, within what an answer from no person may approve
    (``unattended_refusal``, the same limit an MCP client answering ``kairox serve`` has): a protected path, Kairox's
    own configuration, a write outside the writable roots and a command run again outside the sandbox
    (``on_failure``) still need a person at a prompt; deny rules still deny (they never reach an approver)."""

    def __init__(self) -> None:
        super().__init__(_ApproveOnce(), who="--yes")


def command_line_approver(yes: bool, *, hint: str = _YES_HINT) -> Approver:
    """The approver every CLI command that calls tools or writes configuration uses: ``--yes``, a prompt on a
    terminal, else a refusal that says how to allow (``hint``)."""
    if yes:
        return YesApprover()
    if sys.stdin.isatty() and sys.stderr.isatty():
        return CliApprover()
    return NonInteractiveApprover(hint=hint)
