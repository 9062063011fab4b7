"""The policy gate for installs (S8): writing a skill is judged as an ``fs.write`` of its target folder.

The policy engine decides; ``deny`` refuses, ``allow`` proceeds, and ``ask`` goes to the ``Approver`` the
front end supplies (a terminal prompt, a dialog, or the non-interactive approver that denies). So a target
outside the writable roots, or inside a protected ``.kairox`` folder, is asked about first.
"""

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from kairox.policy import ApprovalRequest, Approver, PolicyEngine, PolicySettings, Verdict
from kairox.tools import BUILTIN_SPECS

if TYPE_CHECKING:
    from collections.abc import Awaitable

    from kairox.config import ResolvedConfig

Notify = Callable[[str], None]


def policy_authorizer(
    resolved: "ResolvedConfig",
    *,
    approver: Approver,
    home: Path | None = None,
    notify: Notify | None = None,
) -> "Callable[[Path], Awaitable[bool]]":
    """An ``authorize(path)`` for ``install_skill`` backed by the policy engine and ``approver``."""
    settings = PolicySettings.from_config(
        resolved.config.policy,
        workspace=resolved.workspace,
        rules=resolved.rules,
        home=home or Path.home(),
        roots_base=resolved.base_dir("policy.writable_roots"),
    )
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
            ApprovalRequest(tool=spec.name, arguments={"path": str(target)}, reason=decision.reason, rule=decision.suggested_rule)
        )
        if not answer.approved:
            say(answer.reason or f"writing {target} was not approved")
        return answer.approved

    return authorize
