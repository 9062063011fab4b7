"""The policy gate for installs (S8): writing a skill is judged as an ``fs.write`` of its target folder.

The policy engine decides, on the settings every other gate uses (``kairox.registry.registry_settings``: the
writable roots, the rules, and Kairox's own home as a protected folder); ``deny`` refuses, ``allow`` proceeds,
and ``ask`` goes to the ``Approver`` the front end supplies (a terminal prompt, a dialog, or the non-interactive
approver that denies). So a target outside the writable roots, inside a protected ``.kairox`` folder or inside
``$KAIROX_HOME`` is asked about first, and the question says which part of the policy asked, so an answer from
no person (``--yes``) cannot approve what ``unattended_refusal`` keeps for a person.
"""

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from kairox.policy import ApprovalRequest, Approver, PolicyEngine, PolicySettings, Verdict
from kairox.tools import BUILTIN_SPECS

if TYPE_CHECKING:
    from collections.abc import Awaitable

Notify = Callable[[str], None]


def policy_authorizer(
    settings: PolicySettings, *, approver: Approver, notify: Notify | None = None
) -> "Callable[[Path], Awaitable[bool]]":
    """An ``authorize(path)`` for ``install_skill`` backed by the policy engine and ``approver``; ``settings``:
    ``registry_settings(resolved).policy``, as for every other gate."""
    engine = PolicyEngine(settings)
    spec = next(s for s in BUILTIN_SPECS if s.name == "fs.write")
    say = notify or (lambda message: None)

    async def authorize(target: Path) -> bool:
        arguments = {"path": str(target), "content": ""}
        decision = engine.decide(spec, arguments)
        if decision.verdict is Verdict.ALLOW:
            return True
        if decision.verdict is Verdict.DENY:
            say(f"the policy denies writing {target}: {decision.reason}")
            return False
        answer = await approver.request_approval(
            ApprovalRequest(
                tool=spec.name,
                arguments={"path": str(target)},
                reason=decision.reason,
                rule=decision.suggested_rule,
                source=str(decision.source),
                asked_by=None if decision.rule is None else str(decision.rule),
            )
        )
        if not answer.approved:
            say(answer.reason or f"writing {target} was not approved")
        return answer.approved

    return authorize
