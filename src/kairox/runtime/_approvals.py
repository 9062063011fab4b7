"""The answers an approval request offers, decided once for every front end: allow once; allow for this session,
one per grant the gate suggests; allow always, one per grant that may be saved, and only when the gate lets this
call save a rule (it names the layers); deny; deny with a message to the model. The TUI's modal, the GUI's dialog
and the command line's prompt list these in this order and only map keys or buttons onto them."""

import enum
from dataclasses import dataclass
from typing import Any

from kairox.policy import ApprovalAnswer, ApprovalRequest, GrantOption, RuleLayer


class ApprovalScope(enum.StrEnum):
    ONCE = "once"
    SESSION = "session"
    ALWAYS = "always"
    DENY = "deny"


@dataclass(frozen=True, kw_only=True, slots=True)
class ApprovalChoice:
    scope: ApprovalScope
    label: str
    grant: GrantOption | None = None
    """The rule a session or always answer grants."""
    layers: tuple[RuleLayer, ...] = ()
    """Where an always answer may save its rule (the user layer first when offered)."""
    with_message: bool = False
    """A deny that asks the person for a message to the model."""
    whole_session: bool = False
    """A session answer to a subagent's ask that holds for the whole session, not only that subagent."""

    def answer(self, *, layer: RuleLayer | None = None, message: str | None = None) -> ApprovalAnswer:
        """The answer this choice gives; ``layer``: one of :attr:`layers` for an always answer."""
        if self.scope is ApprovalScope.ONCE:
            return ApprovalAnswer.allow_once()
        if self.scope is ApprovalScope.SESSION:
            return ApprovalAnswer.allow_session(
                self.grant.rule if self.grant is not None else None, whole_session=self.whole_session
            )
        if self.scope is ApprovalScope.ALWAYS:
            chosen = layer or self.layers[0]
            if chosen not in self.layers:
                return ApprovalAnswer.deny(
                    f"'always' may save this rule to {', '.join(map(str, self.layers))}, not {chosen}"
                )
            return ApprovalAnswer.allow_always(self.grant.rule if self.grant is not None else None, layer=chosen)
        return ApprovalAnswer.deny(message or "denied")

    def to_json(self) -> dict[str, Any]:
        return {
            "scope": str(self.scope),
            "label": self.label,
            "grant": self.grant.rule if self.grant is not None else None,
            "layers": [str(layer) for layer in self.layers],
            "with_message": self.with_message,
            "whole_session": self.whole_session,
        }


def approval_choices(request: ApprovalRequest) -> list[ApprovalChoice]:
    """Every answer ``request`` offers, in the order front ends show them."""
    found = [ApprovalChoice(scope=ApprovalScope.ONCE, label="allow once")]
    for wide in (False, True) if request.agent else (False,):  # a subagent's grant ends with it, unless wide
        who = "this session (every agent)" if wide else f"agent {request.agent}" if request.agent else "this session"
        for grant in request.grants:
            label = f"allow for {who}: {grant.covers}" + ("" if grant.exact else f" (rule {grant.rule})")
            found.append(ApprovalChoice(scope=ApprovalScope.SESSION, label=label, grant=grant, whole_session=wide))
    if request.always_allowed:
        # only the layers the gate offers: an untrusted workspace's project and local files are not written
        layers = tuple(sorted(request.layers, key=lambda layer: layer is not RuleLayer.USER)) or (RuleLayer.USER,)
        where = f"in the {layers[0]} configuration" + (
            f" (or {', '.join(map(str, layers[1:]))})" if len(layers) > 1 else ""
        )
        for grant in request.grants:
            if grant.persistable:
                label = f"allow always: save allow rule {grant.rule!r} {where}"
                found.append(ApprovalChoice(scope=ApprovalScope.ALWAYS, label=label, grant=grant, layers=layers))
    found.append(ApprovalChoice(scope=ApprovalScope.DENY, label="deny"))
    found.append(ApprovalChoice(scope=ApprovalScope.DENY, label="deny with a message to the model", with_message=True))
    return found


def link_notes(request: ApprovalRequest) -> list[str]:
    """What each path the call names reaches, where it leads elsewhere through a link (``summary.txt`` written as
    ``~/.bashrc``): every front end shows these lines with the question, so the person approves the real target."""
    return [f"{t.written} is a link: the call reaches {t.target}" for t in request.linked]
