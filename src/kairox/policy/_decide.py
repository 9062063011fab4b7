"""The decision (Y1-Y4, Y7): a pure function from a tool, its arguments and the user's policy to a verdict.

Order: a hook's deny; deny rules; a call the policy could not read all of (a command it cannot see, arguments
past the path scan's limits) while a rule or a protection depends on what it could not read; under read_only,
programs no OS sandbox holds; a hook's ask; ask rules;
protected paths and the sandbox boundary for writes; allow rules; a hook's allow; the tool's permission profile
against the approval and sandbox policies.
Deny always wins, and a hook's allow never skips a deny rule, an ask rule, a protected path or the sandbox.

The settings are ``_settings``, the facts of a call ``_facts``, the words ``_explain``; what the decision needs to
know of files comes from the host (``PolicySettings.host``).
"""

import fnmatch
import functools
import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from kairox._util._pathglob import PathPattern
from kairox.config import ApprovalPolicy, SandboxPolicy
from kairox.errors import Diagnostic, Severity
from kairox.policy._approval import PathTarget
from kairox.policy._command_glob import allow_matches
from kairox.policy._explain import describe_rule, exact_rule, let_through, mcp_why, suggested_rule, unguarded_reads
from kairox.policy._facts import (
    LIMITS,
    CallFacts,
    call_facts,
    command_line,
    effective_profile,
    in_folder,
    mcp_read_only,
    program_lines,
    runs_unsandboxed,
    scan_path_arguments,
)
from kairox.policy._paths import parse_pattern, protected_reason, writable_reason
from kairox.policy._readrules import read_mask
from kairox.policy._rules import (
    _THIRD_PARTY,
    Decision,
    DecisionSource,
    NameDenials,
    ParsedRule,
    RuleAction,
    RuleRef,
    Verdict,
    argument_diagnostics,
    parse_rule,
)
from kairox.policy._settings import PolicySettings
from kairox.policy._shell import split_command
from kairox.policy._values import (
    allow_miss,
    declared_arguments,
    named_suggestion,
    no_path,
    refusal_matches,
    unnamed_allow_miss,
)
from kairox.tools import (
    BUILTIN_SPECS,
    Access,
    HookDecision,
    PermissionProfile,
    ToolSource,
    ToolSpec,
    host_kind,
)

_PATH_FAMILIES = frozenset({"fs.read", "fs.write"})
_NAMING_ORDER = (RuleAction.DENY, RuleAction.ASK, RuleAction.ALLOW)
"""The rule an ask about unread arguments names: the one that would have refused the call, first."""


class PolicyEngine:
    """Decides allow / ask / deny. Synchronous and without side effects; build one per settings."""

    def __init__(self, settings: PolicySettings) -> None:
        self.settings = settings
        self.diagnostics: list[Diagnostic] = []
        self._rules: dict[RuleAction, list[ParsedRule]] = {action: [] for action in RuleAction}
        for rule in settings.rules:
            try:
                parsed = parse_rule(rule)
            except ValueError as exc:
                where = f"{rule.file}:{rule.line}" if rule.file and rule.line else None
                self.diagnostics.append(
                    Diagnostic(
                        kind="policy_rule",
                        name=rule.pattern,
                        reason=str(exc),
                        severity=Severity.ERROR,
                        source=None if rule.file is None else str(rule.file),
                        line=rule.line,
                        hint=f"fix the rule{' at ' + where if where else ''}; it is ignored until then",
                    )
                )
                continue
            self._rules[parsed.ref.action].append(parsed)
        self.read_mask = read_mask(
            settings.rules,
            workspace=settings.workspace,
            home=settings.home,
            roots=settings.writable_roots,
            host=settings.host,
        )
        """What ``fs.read`` deny and ask rules hide from sandboxed commands (``SandboxSettings.hidden``), worked out
        by the host when a command starts; None when no such rule names a path."""
        self._path_patterns: dict[str, PathPattern] = {}
        self._by_tool: dict[tuple[object, ...], dict[RuleAction, tuple[ParsedRule, ...]]] = {}
        self._name_denials = NameDenials(self._rules[RuleAction.DENY])
        """The deny rules on names alone as one matcher: hiding 2,000 tools at session start is one regex match
        each, not a walk over every rule per tool."""

    def _candidates(self, spec: ToolSpec) -> dict[RuleAction, tuple[ParsedRule, ...]]:
        """The rules whose tool part matches ``spec``, per action (cached: a tool's identity does not change)."""
        key = (spec.name, spec.source, spec.origin, spec.permission.access, bool(spec.permission.path_args))
        found = self._by_tool.get(key)
        if found is None:
            found = {action: tuple(r for r in rules if r.matches_tool(spec)) for action, rules in self._rules.items()}
            self._by_tool[key] = found
        return found

    # --- queries ---------------------------------------------------------------------------------------------

    def denied_by_name(self, spec: ToolSpec) -> RuleRef | None:
        """The deny rule that hides this tool whatever its arguments (``mcp__github__*``), or None: the first such
        rule in order whose tool part matches ``spec`` (as ``ParsedRule.matches_tool`` reads it)."""
        return self._name_denials.first(spec)

    def decide(
        self,
        spec: ToolSpec,
        arguments: Mapping[str, Any],
        *,
        hook: HookDecision | None = None,
        hook_reason: str | None = None,
    ) -> Decision:
        decision = self._decide(spec, arguments, hook=hook, hook_reason=hook_reason)
        if decision.verdict is Verdict.ASK and self.settings.approval is ApprovalPolicy.NEVER:
            decision = Decision.deny(
                f"{decision.reason}; the approval policy is never, so what would be asked is denied",
                source=decision.source,
                rule=decision.rule,
            )
        return decision

    def matches_any(
        self, rules: Sequence[ParsedRule], spec: ToolSpec, arguments: Mapping[str, Any]
    ) -> ParsedRule | None:
        """The first of ``rules`` (read as allow rules) that covers this call."""
        facts = self._facts(spec, arguments)
        for rule in rules:
            if rule.matches_tool(spec) and self._covers(rule, spec, facts, for_allow=True):
                return rule
        return None

    def refuses_reads(self, spec: ToolSpec) -> bool:
        """Whether any deny or ask rule could keep ``spec`` from reading a file (else no read filter is needed)."""
        return any(rule.specifier is not None and not rule.arguments for rule in self._reading_rules(spec))

    def read_refusal(self, spec: ToolSpec, path: Path, *, approved: frozenset[RuleRef] = frozenset()) -> RuleRef | None:
        """The deny or ask rule that keeps ``spec`` from reading ``path``, a file it met inside a folder it was
        allowed to read (a search or a listing must not show what ``fs.read`` may not), or the file it reads to
        rewrite it. ``approved``: the ask rules the person answered for this call, which no longer refuse it."""
        for rule in self._reading_rules(spec):
            if (
                rule.specifier is not None
                and not rule.arguments
                and rule.ref not in approved
                and self._path_pattern(rule.specifier).matches(path, any_part=True)
            ):
                return rule.ref
        return None

    def approved_rules(self, spec: ToolSpec, arguments: Mapping[str, Any]) -> frozenset[RuleRef]:
        """The ask rules that a person's yes to this call answers: every one that covers the call itself (each
        would have asked the same question). Deny rules are never answered."""
        facts = self._facts(spec, arguments)
        return frozenset(
            rule.ref
            for rule in self._candidates(spec)[RuleAction.ASK]
            if self._covers(rule, spec, facts, for_allow=False)
        )

    def _reading_rules(self, spec: ToolSpec) -> tuple[ParsedRule, ...]:
        """The deny, then ask, rules on reading that hold for what ``spec`` reads: every rule on reading files
        (`fs.read(secrets/**)`) whatever the tool, and for a tool that only reads, its own rules too. A tool that
        reads on behalf of a write or a run (fs.edit reads what it rewrites) is held to the rules on reading only:
        its own ask rule asks about the write, and is no refusal to read."""
        own = self._candidates(spec)
        reads_only = spec.permission.access is Access.READ
        found: list[ParsedRule] = []
        for action in (RuleAction.DENY, RuleAction.ASK):
            reading = [r for r in self._rules[action] if r.tool == "fs.read"]
            found.extend(dict.fromkeys([*(own[action] if reads_only else ()), *reading]))
        return tuple(found)

    def reads_elsewhere(self) -> Callable[[Path], str | None] | None:
        """For one call of a tool that reads files itself: why a file no rule names must not be read (another name
        of a file the rules on reading hide, the history of a repository they reach), or None when no rule on
        reading names a path. The host works it out (``ReadMaskLike.elsewhere``)."""
        return None if self.read_mask is None else self.read_mask.elsewhere()

    def argument_diagnostics(self, specs: Iterable[ToolSpec]) -> list[Diagnostic]:
        """Warnings for rules naming an argument the tools they match do not take (see ``_values``)."""
        return argument_diagnostics((r for rules in self._rules.values() for r in rules), specs)

    def suggest_rule(self, spec: ToolSpec, arguments: Mapping[str, Any]) -> str | None:
        """The allow rule that would cover calls like this one (what "always" persists), or None."""
        return suggested_rule(spec, self._facts(spec, arguments))

    def exact_rule(self, spec: ToolSpec, arguments: Mapping[str, Any]) -> str | None:
        """An allow rule that covers this call and no other, or None when no rule can say it that narrowly."""
        return exact_rule(spec, arguments, self._facts(spec, arguments))

    def command_line(self, spec: ToolSpec, arguments: Mapping[str, Any]) -> str | None:
        """The command line this call runs, as a person should see it and the rules see it: with ``cd DIR &&`` in
        front when it runs in a folder other than the workspace root; None for a tool without a command.

        A tool that names a program (``dap.launch``) is shown as ``[NAME=VALUE ...] PROGRAM ARG ...``, quoted for a
        shell, so the person sees what runs; the rules do not read it as a shell command."""
        return command_line(self.settings, spec, arguments)

    def call_paths(self, spec: ToolSpec, arguments: Mapping[str, Any]) -> tuple[Path, ...]:
        """The files this call names and the folder its command runs in, resolved as the rules see them (``..``
        folded, symlinks followed)."""
        paths = self._facts(spec, arguments).paths
        cwd = None if spec.permission.cwd_arg is None else arguments.get(spec.permission.cwd_arg)
        if isinstance(cwd, str) and cwd.strip():
            paths += (self.settings.resolved(cwd),)
        return paths

    def path_targets(self, spec: ToolSpec, arguments: Mapping[str, Any]) -> tuple[PathTarget, ...]:
        """Each path the call's path arguments name, with the file it reaches (links followed), so a person
        approving a write to ``summary.txt`` sees that it writes ``~/.bashrc`` through a link."""
        settings = self.settings
        found: list[PathTarget] = []
        for name in spec.permission.path_args:
            value = arguments.get(name)
            for written in value if isinstance(value, list) else [value]:
                if not isinstance(written, str) or not written.strip():
                    continue
                target = settings.resolved(written)
                text = written.strip()
                home = str(settings.home)
                plain = text.replace("~", home, 1) if text == "~" or text.startswith("~/") else text
                folded = os.path.normpath(plain if plain.startswith("/") else f"{settings.workspace}/{plain}")
                found.append(PathTarget(written=written, target=str(target), linked=str(target) != folded))
        return tuple(found)

    def describe_rule(self, spec: ToolSpec, pattern: str) -> str | None:
        """What an allow rule would let through, in words; None for a blank cheque on a command tool."""
        return describe_rule(spec, pattern)

    # --- the decision ----------------------------------------------------------------------------------------

    def _decide(
        self, spec: ToolSpec, arguments: Mapping[str, Any], *, hook: HookDecision | None, hook_reason: str | None
    ) -> Decision:
        if hook is HookDecision.DENY:
            return Decision.deny(hook_reason or "a pre_tool_use hook denied the call", source=DecisionSource.HOOK)
        return self._decide_on(spec, self._facts(spec, arguments), hook=hook, hook_reason=hook_reason)

    def _decide_on(
        self, spec: ToolSpec, facts: CallFacts, *, hook: HookDecision | None, hook_reason: str | None
    ) -> Decision:
        rules = self._candidates(spec)
        for rule in rules[RuleAction.DENY]:
            if self._covers(rule, spec, facts, for_allow=False):
                return Decision.deny(f"denied by {rule.ref}", source=DecisionSource.RULE, rule=rule.ref)
        as_command = self._as_command(spec, facts, RuleAction.DENY)
        if as_command is not None:
            return as_command
        if spec.source in _THIRD_PARTY and facts.paths:
            hidden = self._hidden_elsewhere(facts.paths)
            if hidden is not None:
                return Decision.deny(f"{hidden} ({spec.name} is refused it as fs.read is)", source=DecisionSource.RULE)
        hidden = None if facts.command is None else facts.command.hidden
        if hidden is not None:
            naming = next((r for action in RuleAction for r in rules[action] if r.specifier is not None), None)
            if naming is not None:  # no rule can vouch for what it cannot see: a person decides, every time
                return Decision.ask(
                    f"{hidden}, so {naming.ref} cannot be checked against it",
                    source=DecisionSource.RULE,
                    rule=naming.ref,
                )
        runs = None if facts.command is None else facts.command.runs_unseen
        if runs is not None:
            refusing = next(
                (
                    r
                    for a in (RuleAction.DENY, RuleAction.ASK)
                    for r in rules[a]
                    if r.specifier is not None and not r.arguments
                ),
                None,
            )
            if refusing is not None:  # code from elsewhere could run what the rule is about (Y8): a person decides
                return Decision.ask(
                    f"{runs}, so {refusing.ref} cannot be checked against it",
                    source=DecisionSource.RULE,
                    rule=refusing.ref,
                )
        if facts.unseen is not None:
            unread = self._unread(spec, rules, facts)
            if unread is not None:
                return unread
        if self.settings.sandbox is SandboxPolicy.READ_ONLY and runs_unsandboxed(spec):
            return Decision.deny(
                f"{spec.name} runs a program outside Kairox's OS sandbox, which the read_only sandbox policy forbids",
                source=DecisionSource.SANDBOX,
            )
        if hook is HookDecision.ASK:
            return Decision.ask(hook_reason or "a pre_tool_use hook asks for approval", source=DecisionSource.HOOK)
        for rule in rules[RuleAction.ASK]:
            if self._covers(rule, spec, facts, for_allow=False):
                return Decision.ask(f"{rule.ref} asks for approval", source=DecisionSource.RULE, rule=rule.ref)
        as_command = self._as_command(spec, facts, RuleAction.ASK)
        if as_command is not None:
            return as_command
        web = self._web_host(spec, rules, facts)
        if web is not None:
            return web
        profile = effective_profile(spec)
        if facts.paths:
            declared = facts.paths[: len(facts.paths) - len(facts.named)]
            boundary = None
            if declared and Access.WRITE in (profile.access, spec.permission.access):
                boundary = self._write_boundary(declared)
            if boundary is None and facts.named and not mcp_read_only(spec):
                # paths a third-party tool names by its arguments' names: the protected ones always ask, unless it
                # only reads (whether it writes them is not known, so the writable roots are not held against them)
                boundary = self._protected(facts.named)
            if boundary is not None:
                return boundary
        for rule in rules[RuleAction.ALLOW]:
            if self._covers(rule, spec, facts, for_allow=True):
                return Decision.allow(f"allowed by {rule.ref}", source=DecisionSource.RULE, rule=rule.ref)
        if hook is HookDecision.ALLOW:
            return Decision.allow(hook_reason or "a pre_tool_use hook allowed the call", source=DecisionSource.HOOK)
        decision = self._by_mode(spec, profile, facts)
        if decision.verdict is Verdict.ASK:
            missed = self._value_rule_missed(spec, rules[RuleAction.ALLOW], facts)
            if missed is not None:  # say why the allow rule written for this tool did not vouch, and how to fix it
                return Decision.ask(
                    f"{decision.reason}; {missed}", source=decision.source, suggested_rule=decision.suggested_rule
                )
        return decision

    def _web_host(
        self, spec: ToolSpec, rules: dict[RuleAction, tuple[ParsedRule, ...]], facts: CallFacts
    ) -> Decision | None:
        """A URL's host that is a cloud metadata endpoint (refused) or loopback, link-local or private (asked),
        unless an allow rule with a specifier vouches for it: a blanket ``web.fetch`` allow is not enough."""
        host = facts.url_host(spec)
        kind = None if host is None else host_kind(host)
        if host is None or kind is None:
            return None
        for rule in rules[RuleAction.ALLOW]:
            if rule.specifier is not None and self._covers(rule, spec, facts, for_allow=True):
                return Decision.allow(f"allowed by {rule.ref}", source=DecisionSource.RULE, rule=rule.ref)
        if kind == "metadata":
            return Decision.deny(
                f"{host} is a cloud metadata address, which {spec.name} reaches only with an allow rule naming it "
                f"({spec.name}(domain:{host}))",
                source=DecisionSource.RULE,
            )
        return Decision.ask(
            f"{spec.name} would reach {host}, a loopback, link-local or private address (this machine or its "
            "network): it asks every time unless an allow rule names the host",
            source=DecisionSource.MODE,
            suggested_rule=f"{spec.name}(domain:{host})",
        )

    def _hidden_elsewhere(self, paths: Iterable[Path]) -> str | None:
        """Why a path a third-party tool names must not be read though no rule names it (another name, a hard link,
        of a file the rules on reading hide; a hidden history), as ``fs.read`` refuses it; None otherwise."""
        why = self.reads_elsewhere()
        if why is None:
            return None
        return next((reason for reason in map(why, paths) if reason is not None), None)

    def _as_command(self, spec: ToolSpec, facts: CallFacts, action: RuleAction) -> Decision | None:
        """A tool that names a program it runs (``dap.launch``) runs a command as ``shell.exec`` does: the
        ``shell.exec`` deny (or ask) rules hold for ``[cd DIR &&] [env NAME=VALUE ...] PROGRAM ARG ...`` and, for a
        program an interpreter runs (``app.py``), for ``INTERPRETER PROGRAM ARG ...`` too, so ``shell.exec(*)`` or a
        rule on ``python*`` also refuses the launch."""
        names = spec.permission.program
        if names is None:
            return None
        shell = _shell_spec()
        rules = self._candidates(shell)[action]
        if not rules:
            return None
        cwd = None if spec.permission.cwd_arg is None else facts.arguments.get(spec.permission.cwd_arg)
        for line in program_lines(names, facts.arguments):
            command = in_folder(self.settings, line, cwd)
            seen = CallFacts(command=split_command(command), paths=(), arguments={"command": command}, skill=None)
            for rule in rules:
                if self._covers(rule, shell, seen, for_allow=False):
                    why = f"{spec.name} runs `{command}`, and {rule.ref} holds for it as for shell.exec"
                    if action is RuleAction.DENY:
                        return Decision.deny(f"denied: {why}", source=DecisionSource.RULE, rule=rule.ref)
                    return Decision.ask(f"{why} and asks for approval", source=DecisionSource.RULE, rule=rule.ref)
        return None

    def _value_rule_missed(self, spec: ToolSpec, allows: Sequence[ParsedRule], facts: CallFacts) -> str | None:
        """Why the first allow rule on this tool's values did not vouch for the call, with what to write instead;
        None when no such rule was near (an unnamed one whose glob matches none of the call's strings)."""
        if facts.command is not None:
            return None
        named = [r for r in allows if r.arguments]
        if named:  # the one naming the call's arguments most nearly
            keys = set(facts.arguments)
            rule = min(
                named, key=lambda r: (len(keys.symmetric_difference(c.name for c in r.arguments)), named.index(r))
            )
            why = self._value_miss(rule, spec, facts)
            return None if why is None else f"{rule.ref} does not vouch for it: {why}"
        for rule in allows:
            specifier = rule.specifier
            if specifier is None or rule.tool in _PATH_FAMILIES or facts.paths:
                continue
            if not any(fnmatch.fnmatchcase(v, specifier) for v in facts.every_value):
                continue
            why = self._value_miss(rule, spec, facts)
            if why is None:
                return None
            return (
                f"{rule.ref} vouches only for calls whose every value matches {specifier!r}, and {why}; name the "
                f"arguments it vouches for, e.g. {named_suggestion(rule.tool, specifier, facts.arguments)}"
            )
        return None

    def _value_miss(self, rule: ParsedRule, spec: ToolSpec, facts: CallFacts) -> str | None:
        """Why an allow rule on values does not vouch for this call (no command in it, no paths unless it names
        arguments), or None when it does."""
        arguments = facts.arguments
        specifier = rule.specifier or "*"
        if rule.arguments:
            profile = spec.permission
            if profile.command_arg is not None or profile.path_args:
                return f"{spec.name} is vouched for by its command or its paths, never by named arguments"
            return allow_miss(rule.arguments, arguments, self._path_match if facts.paths else no_path)
        if facts.skill is not None and fnmatch.fnmatchcase(facts.skill, specifier):
            return None
        argument = spec.meta.get("rule_argument")
        if isinstance(
            argument, str
        ):  # the tool says which argument its rules are about (the skill tool: the skill's name)
            value = arguments.get(argument)
            return (
                None
                if isinstance(value, str) and fnmatch.fnmatchcase(value, specifier)
                else f"argument {argument!r} does not match"
            )
        return unnamed_allow_miss(specifier, arguments, declared_arguments(spec))

    def _path_match(self, argument: str, text: str, glob: str) -> bool | None:
        """Whether every path ``text`` names (as argument ``argument``) is inside ``glob`` read as a path pattern;
        None when it names none."""
        found: list[str] = []
        scan_path_arguments({argument: text}, found)
        if not found:
            return None
        pattern = self._path_pattern(glob)
        return all(pattern.matches(self.settings.resolved(p)) for p in found)

    def _path_touches(self, argument: str, text: str, glob: str) -> bool | None:
        """Whether any path ``text`` names (as argument ``argument``) is in ``glob`` read as a path pattern (or in a
        folder it covers); None when it names none."""
        found: list[str] = []
        scan_path_arguments({argument: text}, found)
        if not found:
            return None
        pattern = self._path_pattern(glob)
        return any(pattern.matches(self.settings.resolved(p), any_part=True) for p in found)

    def _unread(
        self, spec: ToolSpec, rules: dict[RuleAction, tuple[ParsedRule, ...]], facts: CallFacts
    ) -> Decision | None:
        """The ask for a call whose arguments the policy could not read all of, when a rule or a protection that
        depends on its paths is in force for the tool; None when none is (nothing unread could change the decision)."""
        unseen = facts.unseen
        what_to_do = f"split it into calls of at most {LIMITS}" if facts.scan_unseen else "pass each path as text"
        remedy = f"{what_to_do}; no allow rule can vouch for what was not read"
        naming = next((r for action in _NAMING_ORDER for r in rules[action] if r.specifier is not None), None)
        if naming is not None:
            return Decision.ask(
                f"{unseen}, so {naming.ref} cannot be checked against the rest; {remedy}",
                source=DecisionSource.RULE,
                rule=naming.ref,
            )
        writes = bool(spec.permission.path_args) and Access.WRITE in (
            effective_profile(spec).access,
            spec.permission.access,
        )
        if writes:
            what = "the protected paths and the writable roots"
        elif facts.scan_unseen and not mcp_read_only(spec):  # paths found by name: the protected ones ask
            what = "the protected paths"
        else:
            return None
        return Decision.ask(
            f"{unseen}, so the rest cannot be checked against {what}; {remedy}", source=DecisionSource.PROTECTED_PATH
        )

    def _protected(self, paths: tuple[Path, ...]) -> Decision | None:
        for path in paths:
            reason = protected_reason(
                path, home=self.settings.home, own_dirs=self.settings.own_dirs, workspace=self.settings.workspace
            )
            if reason is not None:
                return Decision.ask(reason, source=DecisionSource.PROTECTED_PATH)
        return None

    def _write_boundary(self, paths: tuple[Path, ...]) -> Decision | None:
        settings = self.settings
        protected = self._protected(paths)
        if protected is not None:
            return protected
        if settings.sandbox is SandboxPolicy.DANGER_FULL_ACCESS:
            return None
        if settings.sandbox is SandboxPolicy.READ_ONLY:
            return Decision.ask(
                f"the sandbox policy is read_only, so writing {', '.join(map(str, paths))} needs approval",
                source=DecisionSource.SANDBOX,
            )
        for path in paths:
            reason = writable_reason(path, settings.writable_roots)
            if reason is not None:
                return Decision.ask(
                    f"{reason}; add the folder to policy.writable_roots to allow writes there",
                    source=DecisionSource.SANDBOX,
                )
        return None

    def _by_mode(self, spec: ToolSpec, profile: PermissionProfile, facts: CallFacts) -> Decision:
        settings = self.settings
        access = profile.access
        suggestion = suggested_rule(spec, facts) if access is not Access.READ else None
        if settings.approval is ApprovalPolicy.UNTRUSTED and access is not Access.READ and not mcp_read_only(spec):
            unguarded = (
                unguarded_reads(settings, self.read_mask is not None)
                if access is Access.EXECUTE and not runs_unsandboxed(spec)
                else ""
            )
            return Decision.ask(
                f"{spec.name} needs {access} access and the approval policy is "
                f"untrusted (only read-only tools run without asking){unguarded}",
                source=DecisionSource.MODE,
                suggested_rule=suggestion,
            )
        if access is Access.EXTERNAL:
            who = f"{spec.source} tool {spec.name}" + (f" from {spec.origin}" if spec.origin else "")
            if spec.source is ToolSource.MCP and not mcp_read_only(spec):
                return Decision.ask(
                    f"{who} may change things: {mcp_why(spec)}", source=DecisionSource.MODE, suggested_rule=suggestion
                )
            if profile.destructive:
                return Decision.ask(
                    f"{who} runs outside Kairox's sandbox and may change "
                    "things (it does not declare that it only reads)",
                    source=DecisionSource.MODE,
                    suggested_rule=suggestion,
                )
            if profile.open_world and not settings.network_access:
                return Decision.ask(
                    f"{who} reaches the outside world (it is not annotated "
                    "openWorldHint: false) and policy.network_access is false",
                    source=DecisionSource.MODE,
                    suggested_rule=suggestion,
                )
            if spec.source is ToolSource.MCP:
                return Decision.allow(
                    f"{who} is annotated read-only and the annotations of "
                    f"server {spec.origin!r} are trusted (trust_annotations)",
                    source=DecisionSource.MODE,
                )
            return Decision.allow(f"{who} declares that it only reads", source=DecisionSource.MODE)
        if access is Access.EXECUTE and runs_unsandboxed(spec):
            # whatever the sandbox policy: that program is not under
            # it, and what the tool makes it do runs with its authority
            return Decision.ask(
                f"{spec.name} works on a program that Kairox did not "
                "start and no Kairox sandbox holds, so what it makes "
                "that program do runs with the program's full authority",
                source=DecisionSource.MODE,
                suggested_rule=suggestion,
            )
        if access is Access.EXECUTE:
            where = (
                "without a sandbox (danger_full_access)"
                if settings.sandbox is SandboxPolicy.DANGER_FULL_ACCESS
                else f"in the {settings.sandbox} sandbox"
            )
            return Decision.allow(
                f"{spec.name} runs {where}{let_through(settings)}"
                f"{unguarded_reads(settings, self.read_mask is not None)}",
                source=DecisionSource.MODE,
            )
        if access is Access.WRITE:
            return Decision.allow(f"{spec.name} writes inside the writable roots", source=DecisionSource.MODE)
        if profile.open_world and not settings.network_access:
            host = facts.url_host(spec) or "the network"
            return Decision.ask(
                f"{spec.name} reaches {host} and policy.network_access is false",
                source=DecisionSource.MODE,
                suggested_rule=suggested_rule(spec, facts),
            )
        return Decision.allow(f"{spec.name} only reads", source=DecisionSource.MODE)

    # --- matching --------------------------------------------------------------------------------------------

    def _facts(self, spec: ToolSpec, arguments: Mapping[str, Any]) -> CallFacts:
        look = spec.permission.command_arg is not None and self._refuses_commands(spec)
        return call_facts(self.settings, spec, arguments, look_into_scripts=look)

    def _refuses_commands(self, spec: ToolSpec) -> bool:
        """Whether a deny or ask rule on this tool's commands is in force (an allow rule alone reads no file)."""
        rules = self._candidates(spec)
        return any(
            r.specifier is not None and not r.arguments for a in (RuleAction.DENY, RuleAction.ASK) for r in rules[a]
        )

    def _covers(self, rule: ParsedRule, spec: ToolSpec, facts: CallFacts, *, for_allow: bool) -> bool:
        """Whether the rule's specifier holds: for an allow rule, for every command and path of the call; for
        deny and ask, for any of them."""
        specifier = rule.specifier
        if specifier is None:
            return True
        if for_allow and facts.unseen is not None:  # an allow rule vouches only for what the policy could read
            return False
        if specifier.startswith("domain:"):  # `web.fetch(domain:docs.python.org)`: the URL's host
            host = facts.url_host(spec)
            return host is not None and fnmatch.fnmatchcase(host, specifier[7:].strip().lower())
        if rule.arguments:  # `.sql=SELECT*`: the values of the arguments it names, whatever kind of tool
            if for_allow:
                return self._value_miss(rule, spec, facts) is None
            return refusal_matches(rule.arguments, facts.arguments, self._path_touches if facts.paths else no_path)
        if facts.command is not None:
            command = facts.command
            pieces = command.pieces
            if for_allow:
                # an allow rule vouches only for what it can see: every command, run as written, writing no file
                return (
                    bool(pieces)
                    and command.hidden is None
                    and not command.opaque
                    and not command.writes
                    and not command.privileged
                    and not command.changes_programs
                    and command.allow_vouches_for_loads(specifier)
                    and all(allow_matches(p, specifier) for p in pieces)
                )
            return any(_command_match(p, specifier) for p in (*pieces, *command.tails))
        if rule.tool in _PATH_FAMILIES and spec.source in _THIRD_PARTY:
            # `fs.read(secrets/**)` holds for the paths a third-party tool names, and only for those
            pattern = self._path_pattern(specifier)
            return any(pattern.matches(p, any_part=True) for p in facts.paths)
        if facts.paths:
            pattern = self._path_pattern(specifier)
            if for_allow:
                return all(pattern.matches(p) for p in facts.paths)
            return any(pattern.matches(p, any_part=True) for p in facts.paths)
        if for_allow:
            return self._value_miss(rule, spec, facts) is None
        return any(fnmatch.fnmatchcase(v, specifier) for v in facts.every_value)

    def _path_pattern(self, specifier: str) -> PathPattern:
        pattern = self._path_patterns.get(specifier)
        if pattern is None:
            pattern = parse_pattern(
                specifier, base=self.settings.workspace, home=self.settings.home, host=self.settings.host
            )
            self._path_patterns[specifier] = pattern
        return pattern


@functools.cache
def _shell_spec() -> ToolSpec:
    return next(spec for spec in BUILTIN_SPECS if spec.name == "shell.exec")


def _command_match(piece: str, specifier: str) -> bool:
    """Whether a deny or ask rule's command glob matches one command: as a plain glob, so ``rm*`` also refuses
    ``rmdir`` (the safe side), and by the program's base name (``/bin/rm -rf x``)."""
    spec = " ".join(specifier.split())
    if fnmatch.fnmatchcase(piece, spec):
        return True
    head, _, rest = piece.partition(" ")
    if "/" in head:
        short = head.rsplit("/", 1)[-1] + (" " + rest if rest else "")
        return fnmatch.fnmatchcase(short, spec)
    return False
