"""The approval shapes (Y5): what a front end is asked when the policy says ``ask``, and what it answers.

Every front end (the CLI prompt, the TUI modal, the web dialog, MCP elicitation in ``kairox serve``) shows an
``ApprovalRequest`` and returns an ``ApprovalAnswer``; none invents its own. A request carries the exact call,
why it asks (the rule with its file:line, or the mode) and the grants it can give, each saying what it covers.
"""

import enum
from dataclasses import dataclass, field, replace
from typing import Protocol

from kairox._util._json import JsonObject
from kairox.policy._rules import DecisionSource


class ApprovalScope(enum.StrEnum):
    ONCE = "once"
    """This call only."""
    SESSION = "session"
    """This call and the calls the chosen grant covers, until the session ends."""
    ALWAYS = "always"
    """Like ``SESSION``, and the grant's rule is written as an allow rule into a config layer."""


class RuleLayer(enum.StrEnum):
    """Where an "always" answer writes its allow rule."""

    USER = "user"
    PROJECT = "project"
    LOCAL = "local"


@dataclass(frozen=True, kw_only=True, slots=True)
class GrantOption:
    """One grant a person may choose besides "once": the rule it adds and, in words, what that rule covers."""

    rule: str
    """An allow-rule pattern, e.g. ``shell.exec(git push origin main)`` or ``mcp__git__git_status``."""
    covers: str
    """What else the grant lets through, e.g. "exactly this command line" or "every `git push` command"."""
    exact: bool = False
    """True for the grant of this exact call (same tool, same arguments, same tool definition)."""
    persistable: bool = False
    """Whether "always" may write ``rule`` as an allow rule (it covers this call and says no more than ``covers``)."""


@dataclass(frozen=True, kw_only=True, slots=True)
class PathTarget:
    """A path a call names and the file it reaches: what a person approves is the target, not the name."""

    written: str
    """The path as the call names it (``summary.txt``)."""
    target: str
    """The file it reaches, ``..`` folded and links followed: what is read or written (``/home/me/.bashrc``)."""
    linked: bool
    """The name leads elsewhere through a link: the target is not the place the name says."""


@dataclass(frozen=True, kw_only=True, slots=True)
class ApprovalRequest:
    tool: str
    arguments: JsonObject = field(default_factory=dict)
    reason: str
    """Why the policy asks (the rule, the protected path, the sandbox, the mode), as one sentence."""
    rule: str | None = None
    """The allow rule an ``ALWAYS`` answer writes when no grant is chosen; None when "always" is not offered."""
    call_id: str = ""
    source: str = ""
    """Which part of the policy asked: ``rule``, ``protected_path``, ``sandbox``, ``mode``, ``hook``."""
    asked_by: str | None = None
    """The rule that asked, as ``ask rule 'shell.exec(*--force*)' (kairox.toml:12)``; None when the mode asked."""
    command: str | None = None
    """For a shell tool: the exact command line that would run (show it whole)."""
    grants: tuple[GrantOption, ...] = ()
    """What "for the session" / "always" may cover; empty when only "once" is possible (protected paths,
    explicit ask rules and hooks ask every time)."""
    layers: tuple[RuleLayer, ...] = ()
    """Layers an "always" answer may write to; empty when "always" is not offered."""
    targets: tuple[PathTarget, ...] = ()
    """Every path the call names, with the file it reaches; show ``linked`` ones by their target."""
    agent: str | None = None
    """The subagent whose call this is (its ``task`` name); None for the session's own calls."""
    unsandboxed: bool = False
    """Approving runs the call again without the OS sandbox (``on_failure``): it may then write what the sandbox
    keeps read-only (``.git/hooks``, project configuration), so an approver that never approves such writes
    (``--yes``) refuses it."""

    @property
    def linked(self) -> tuple[PathTarget, ...]:
        """The paths whose name leads elsewhere (a link): a front end shows what they reach."""
        return tuple(t for t in self.targets if t.linked)

    @property
    def session_allowed(self) -> bool:
        return bool(self.grants)

    @property
    def always_allowed(self) -> bool:
        return bool(self.layers) and any(g.persistable for g in self.grants)


@dataclass(frozen=True, kw_only=True, slots=True)
class ApprovalAnswer:
    approved: bool
    scope: ApprovalScope = ApprovalScope.ONCE
    reason: str | None = None
    """For a denial: the message the model sees as the tool's result (why not, what to do instead)."""
    grant: str | None = None
    """For ``SESSION``/``ALWAYS``: the rule of the chosen :class:`GrantOption`; None picks the first offered."""
    layer: RuleLayer = RuleLayer.USER
    """For ``ALWAYS``: the config layer the allow rule is written to."""
    whole_session: bool = False
    """For ``SESSION`` of a subagent's call: the grant holds for the whole session, not only that subagent."""

    @classmethod
    def allow_once(cls) -> "ApprovalAnswer":
        return cls(approved=True, scope=ApprovalScope.ONCE)

    @classmethod
    def allow_session(cls, grant: str | None = None, *, whole_session: bool = False) -> "ApprovalAnswer":
        return cls(approved=True, scope=ApprovalScope.SESSION, grant=grant, whole_session=whole_session)

    @classmethod
    def allow_always(cls, grant: str | None = None, *, layer: RuleLayer = RuleLayer.USER) -> "ApprovalAnswer":
        return cls(approved=True, scope=ApprovalScope.ALWAYS, grant=grant, layer=layer)

    @classmethod
    def deny(cls, reason: str | None = None) -> "ApprovalAnswer":
        return cls(approved=False, reason=reason)


class Approver(Protocol):
    """Asks a person. The CLI prompts, the TUI and web GUI show a dialog, a non-interactive run denies."""

    async def request_approval(self, request: ApprovalRequest) -> ApprovalAnswer: ...


class NonInteractiveApprover:
    """Used without a person to ask: every ``ask`` becomes a denial that says how it could be allowed."""

    def __init__(self, hint: str | None = None) -> None:
        self.hint = hint

    async def request_approval(self, request: ApprovalRequest) -> ApprovalAnswer:
        return ApprovalAnswer.deny(refusal_text(request, self.hint))


def refusal_text(request: ApprovalRequest, hint: str | None = None) -> str:
    """ "approval required: WHY; HOW TO ALLOW" for an ask nobody could answer."""
    ways = [hint] if hint else []
    if request.rule and request.layers:
        ways.append(f"or add {request.rule!r} to policy.rules.allow in the user's kairox.toml")
    elif request.asked_by:
        ways.append(f"{request.asked_by} asks every time; only a person at a prompt can approve it")
    text = f"approval required: {request.reason}"
    return text + (f" ({'; '.join(ways)})" if ways else "")


def unattended_refusal(request: ApprovalRequest, *, who: str) -> str | None:
    """Why an answer that does not come from a person at a prompt may not approve ``request``, or None when it may
    approve it once or for the session (Y12). ``who`` names that answer: ``--yes``, ``the MCP client answering
    kairox serve's question``.

    Such an answer comes from nobody (``--yes``) or from the party being gated (an MCP client answering an
    elicitation, often an agent itself): it never approves a protected path (project configuration, ``.git``, shell
    start-up files, Kairox's own configuration, trust store and rules), a write outside the writable roots, a
    command run again outside the sandbox (which could write those), nor an "always" rule. The refusal says what
    a person can do instead."""
    if request.source == DecisionSource.PROTECTED_PATH:
        return (
            f"not approved: {request.reason}; {who} does not approve writes to protected paths or to Kairox's own "
            "configuration (a person approves it at a prompt of kairox, or edits the file)"
        )
    if request.unsandboxed:
        return (
            f"not approved: {request.reason}; {who} does not run a command outside the sandbox, where it could write "
            "protected paths (a person approves it at a prompt of kairox)"
        )
    if request.source == DecisionSource.SANDBOX:
        return (
            f"not approved: {request.reason}; {who} does not approve writes outside the writable roots (add the "
            "folder to policy.writable_roots in your own kairox.toml, or approve it at a prompt of kairox)"
        )
    return None


class UnattendedApprover:
    """An Approver whose answers do not come from a person at a prompt (``--yes``, or the party being gated): it
    refuses what :func:`unattended_refusal` says such an answer may not approve without asking ``inner``, never
    offers "always", and takes an "always" it gets anyway for the session only."""

    def __init__(self, inner: Approver, *, who: str) -> None:
        self.inner = inner
        self.who = who

    async def request_approval(self, request: ApprovalRequest) -> ApprovalAnswer:
        refusal = unattended_refusal(request, who=self.who)
        if refusal is not None:
            return ApprovalAnswer.deny(refusal)
        answer = await self.inner.request_approval(replace(request, layers=()))
        if answer.approved and answer.scope is ApprovalScope.ALWAYS:
            return ApprovalAnswer.allow_session(answer.grant)
        return answer
