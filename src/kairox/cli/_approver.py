"""The command line's approvers, built on the shared approval shapes: a terminal prompt, ``--yes``, and a
refusal that says how to allow when there is nobody to ask."""

import json
import sys

import anyio

from kairox.policy import (
    ApprovalAnswer,
    ApprovalRequest,
    Approver,
    NonInteractiveApprover,
    RuleLayer,
    UnattendedApprover,
)

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
    from kairox.runtime import CONFIG_WRITE_TOOL

    if request.tool == CONFIG_WRITE_TOOL:
        # one write, asked about once: yes or no, and no is what Enter answers
        return f"\nkairox: {request.reason}\n  change: {request.arguments.get('change')}\n  write it to {request.arguments.get('path')}? [y/N] "
    lines = [f"\nkairox: {request.tool} needs approval: {request.reason}"]
    if request.asked_by:
        lines.append(f"  asked by: {request.asked_by}")
    if request.command is not None:
        lines.append(f"  command: {request.command}")
    else:
        arguments = json.dumps(request.arguments, ensure_ascii=False)
        lines.append(f"  arguments: {arguments if len(arguments) <= 2000 else arguments[:2000] + '…'}")
    lines.append("  [o] allow once")
    for index, grant in enumerate(request.grants, start=1):
        lines.append(f"  [s{index}] allow for this session: {grant.covers}" + ("" if grant.exact else f" (rule {grant.rule!r})"))
    if request.always_allowed:
        # only the layers offered: an untrusted workspace's project and local files are not written
        others = " or ".join(f":{layer}" for layer in request.layers if layer is not RuleLayer.USER)
        where = f" (add {others} to save it there)" if others else " in the user configuration"
        for index, grant in enumerate(request.grants, start=1):
            if grant.persistable:
                lines.append(f"  [a{index}] allow always: save allow rule {grant.rule!r}{where}")
    lines.append("  [d] deny   [d MESSAGE] deny and tell the model why")
    lines.append("  answer: ")
    return "\n".join(lines)


def parse_answer(request: ApprovalRequest, text: str) -> ApprovalAnswer:
    """``o``, ``s``/``s2``, ``a``/``a1:project``, ``d`` or ``d MESSAGE``; anything else denies."""
    word, _, rest = text.partition(" ")
    key = word.lower()
    if key in ("o", "once", "y", "yes"):
        return ApprovalAnswer.allow_once()
    if key[:1] in ("s", "a") and key not in ("d", "deny"):
        choice, _, where = key[1:].partition(":")
        index = int(choice) - 1 if choice.isdigit() else 0
        if key.startswith("session"):
            index = 0
        if not 0 <= index < len(request.grants):
            return ApprovalAnswer.deny("denied at the prompt (no such choice)")
        grant = request.grants[index]
        if key[0] == "s":
            return ApprovalAnswer.allow_session(grant.rule)
        if not request.always_allowed or not grant.persistable:
            return ApprovalAnswer.deny("denied at the prompt ('always' is not offered for this call)")
        try:
            layer = RuleLayer(where) if where else RuleLayer.USER
        except ValueError:
            return ApprovalAnswer.deny(f"denied at the prompt (unknown layer {where!r})")
        return ApprovalAnswer.allow_always(grant.rule, layer=layer)
    if key in ("d", "deny", "n", "no") and rest.strip():
        return ApprovalAnswer.deny(rest.strip())
    return ApprovalAnswer.deny("denied at the prompt")


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


__all__ = ["CliApprover", "NonInteractiveApprover", "YesApprover", "command_line_approver", "parse_answer", "render_request"]
