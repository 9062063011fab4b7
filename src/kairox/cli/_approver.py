"""The terminal approver: asks once / for this session / always / deny on stderr and reads the answer."""

import json
import sys

import anyio

from kairox.policy import ApprovalAnswer, ApprovalRequest, ApprovalScope


class CliApprover:
    """Prompts on the terminal. ``always`` persists the request's rule through the registry."""

    async def request_approval(self, request: ApprovalRequest) -> ApprovalAnswer:
        arguments = json.dumps(request.arguments, ensure_ascii=False)
        if len(arguments) > 400:
            arguments = arguments[:400] + "…"
        lines = [f"\nkairox: {request.tool} needs approval: {request.reason}", f"  arguments: {arguments}"]
        choices = "[o]nce, [s]ession, " + (f"[a]lways (saves allow rule {request.rule!r}), " if request.rule else "") + "[d]eny"
        lines.append(f"  allow? {choices}: ")
        sys.stderr.write("\n".join(lines))
        sys.stderr.flush()
        answer = (await anyio.to_thread.run_sync(sys.stdin.readline)).strip().lower()
        if answer in ("o", "once", "y", "yes"):
            return ApprovalAnswer(approved=True, scope=ApprovalScope.ONCE)
        if answer in ("s", "session"):
            return ApprovalAnswer(approved=True, scope=ApprovalScope.SESSION)
        if request.rule and answer in ("a", "always"):
            return ApprovalAnswer(approved=True, scope=ApprovalScope.ALWAYS)
        return ApprovalAnswer.deny("denied at the prompt")


class YesApprover:
    """``--yes``: every ask is approved once (deny rules still deny)."""

    async def request_approval(self, request: ApprovalRequest) -> ApprovalAnswer:
        return ApprovalAnswer(approved=True, scope=ApprovalScope.ONCE, reason="approved by --yes")
