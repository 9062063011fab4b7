"""The policy engine (Y1-Y4, Y7): a pure function from a tool, its arguments and the user's policy to a decision.

Order: a hook's deny; deny rules; a call the policy could not read all of (a command it cannot see, arguments
past the path scan's limits) while a rule or a protection depends on what it could not read; under read_only,
programs no OS sandbox holds; a hook's ask; ask rules;
protected paths and the sandbox boundary for writes; allow rules; a hook's allow; the tool's permission profile
against the approval and sandbox policies.
Deny always wins, and a hook's allow never skips a deny rule, an ask rule, a protected path or the sandbox.
"""

import fnmatch
import functools
import os
import re
import shlex
import tempfile
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from kairox.config import ApprovalPolicy, PolicyConfig, SandboxPolicy
from kairox.errors import Diagnostic, Severity
from kairox.policy._arguments import LIMITS, scan_path_arguments
from kairox.policy._command_glob import allow_matches, describe_command_glob
from kairox.policy._decision import Decision, DecisionSource, Verdict
from kairox.policy._paths import PathPattern, protected_reason, resolve_path, writable_reason
from kairox.policy._readmask import MaskedReads, read_mask
from kairox.policy._rules import ParsedRule, Rule, RuleAction, RuleLike, RuleRef, parse_rule
from kairox.policy._scripts import look_into
from kairox.policy._shell import ShellCommand, split_command
from kairox.policy._values import (
    allow_miss,
    argument_diagnostics,
    declared_arguments,
    describe_values,
    every_string,
    named_suggestion,
    refusal_matches,
    unnamed_allow_miss,
)
from kairox.tools import (
    BUILTIN_SPECS,
    Access,
    Confinement,
    HookDecision,
    PermissionProfile,
    ProgramArgs,
    ToolSource,
    ToolSpec,
)

_ACCESS_ORDER = (Access.READ, Access.WRITE, Access.EXECUTE, Access.EXTERNAL)
_SOURCE_FLOOR = {
    ToolSource.BUILTIN: Access.READ,
    ToolSource.SKILL: Access.READ,
    ToolSource.LSP: Access.READ,
    ToolSource.DAP: Access.EXECUTE,
    ToolSource.PLUGIN: Access.EXECUTE,
    ToolSource.MCP: Access.EXTERNAL,
}
"""The least authority a tool of each source is assumed to need, whatever it declares."""
_PATH_FAMILIES = frozenset({"fs.read", "fs.write"})
_THIRD_PARTY = frozenset({ToolSource.MCP, ToolSource.PLUGIN})
_PROCESS_RELATIVE = re.compile(r"\s*(?:file://)?/+proc/+(?:self|thread-self|[0-9]+)(?:/|$)")
"""A path under ``/proc`` that names files by a process (its folder, its root, its open files)."""
"""Sources whose path arguments Kairox finds by their names (best effort: their schemas declare none)."""
_NAMING_ORDER = (RuleAction.DENY, RuleAction.ASK, RuleAction.ALLOW)
"""The rule an ask about unread arguments names: the one that would have refused the call, first."""
_OS_SANDBOXED = frozenset({ToolSource.BUILTIN, ToolSource.PLUGIN, ToolSource.DAP})
"""Sources whose execute tools run their programs under Kairox's OS sandbox (``shell.exec``, plugin commands, the
debug adapter and its debuggee), unless a tool declares ``Confinement.NONE`` (``dap.attach``)."""


@dataclass(frozen=True, kw_only=True, slots=True)
class PolicySettings:
    """Everything the engine decides from, as plain data."""

    workspace: Path
    home: Path = field(default_factory=Path.home)
    approval: ApprovalPolicy = ApprovalPolicy.ON_REQUEST
    sandbox: SandboxPolicy = SandboxPolicy.WORKSPACE_WRITE
    writable_roots: tuple[Path, ...] = ()
    """Resolved roots; ``from_config`` puts the workspace, the configured roots and the temp dir here."""
    network_access: bool = False
    allowed_sockets: tuple[Path, ...] = ()
    """Resolved ``policy.allow_unix_sockets``: host sockets sandboxed commands may connect to."""
    rules: tuple[RuleLike, ...] = ()
    own_dirs: tuple[Path, ...] = ()
    """Resolved folders of Kairox's own state (``$KAIROX_HOME``: the user's kairox.toml, the trust store, hook
    approvals): a write there is asked about like a protected path, wherever the folder lies."""

    @classmethod
    def from_config(
        cls,
        policy: PolicyConfig,
        *,
        workspace: Path,
        rules: Iterable[RuleLike] = (),
        home: Path | None = None,
        roots_base: Path | None = None,
        sockets_base: Path | None = None,
        temp_dir: Path | None = None,
        own_dirs: Iterable[Path] = (),
    ) -> "PolicySettings":
        """Settings from ``[policy]``; relative ``writable_roots`` are resolved against ``roots_base``, relative
        ``allow_unix_sockets`` against ``sockets_base`` (both default to the workspace)."""
        home = home or Path.home()
        workspace = resolve_path(str(workspace), base=Path.cwd(), home=home)
        base = roots_base or workspace
        roots = [workspace]
        roots += [resolve_path(r, base=base, home=home) for r in policy.writable_roots]
        roots.append(resolve_path(str(temp_dir or tempfile.gettempdir()), base=base, home=home))
        return cls(
            workspace=workspace,
            home=home,
            approval=policy.approval_policy,
            sandbox=policy.sandbox_policy,
            writable_roots=tuple(dict.fromkeys(roots)),
            network_access=policy.network_access,
            allowed_sockets=tuple(dict.fromkeys(resolve_path(s, base=sockets_base or workspace, home=home) for s in policy.allow_unix_sockets)),
            rules=tuple(rules),
            own_dirs=tuple(resolve_path(str(d), base=base, home=home) for d in own_dirs),
        )


def runs_unsandboxed(spec: ToolSpec) -> bool:
    """Whether the tool works on programs that no OS sandbox of Kairox holds (a process ``dap.attach`` reaches)."""
    profile = effective_profile(spec)
    return profile.access is Access.EXECUTE and (spec.source not in _OS_SANDBOXED or profile.confinement is Confinement.NONE)


def starts_sandboxed(spec: ToolSpec) -> bool:
    """Whether each call starts its programs under the OS sandbox of the call's settings (``shell.exec``,
    ``dap.launch``), so that running it again outside the sandbox (``on_failure``) is a different call; not a tool
    that works on a program started earlier (``dap.continue``)."""
    profile = effective_profile(spec)
    return not runs_unsandboxed(spec) and profile.access is Access.EXECUTE and profile.confinement is Confinement.SANDBOX


def effective_profile(spec: ToolSpec) -> PermissionProfile:
    """The profile the policy holds a tool to: its source's floor, narrowed by what it declares.

    A declaration or annotation can only add caution. An MCP tool is a write with open-world effects unless it
    says ``readOnlyHint: true`` and the user trusts that server's annotations (``trust_annotations``); then it
    is a read, open-world unless it says ``openWorldHint: false``.
    """
    declared = spec.permission
    floor = _SOURCE_FLOOR[spec.source]
    access = max(declared.access, floor, key=_ACCESS_ORDER.index)
    notes = spec.annotations
    destructive = declared.destructive or notes.destructive_hint is True
    open_world = declared.open_world or notes.open_world_hint is True
    if spec.source is ToolSource.MCP:
        trusted_read = mcp_read_only(spec)
        destructive = destructive or not trusted_read
        open_world = open_world or not trusted_read or notes.open_world_hint is not False
    return replace(declared, access=access, destructive=destructive, open_world=open_world)


def mcp_read_only(spec: ToolSpec) -> bool:
    """An MCP tool that only reads: it says so (``readOnlyHint: true``) and the user trusts its server's hints."""
    return spec.source is ToolSource.MCP and spec.annotations_trusted and spec.annotations.read_only_hint is True


def _mcp_why(spec: ToolSpec) -> str:
    """What decided that an MCP tool counts as a write, in words."""
    server = spec.origin or "?"
    if spec.annotations.read_only_hint is True and not spec.annotations_trusted:
        return (
            f"it is annotated read-only, but annotations of server {server!r} are not trusted "
            f"(set mcp_servers.{server}.trust_annotations = true in your own config to trust them)"
        )
    return "it is not annotated read-only, so it counts as a write with effects outside Kairox's sandbox"


class _Facts:
    """What rules are matched against, worked out once per call; the string values only when a rule asks."""

    __slots__ = ("_every", "arguments", "command", "named", "paths", "scan_unseen", "skill", "unseen")

    def __init__(
        self,
        *,
        command: ShellCommand | None,
        paths: tuple[Path, ...],
        arguments: Mapping[str, Any],
        skill: str | None,
        named: tuple[Path, ...] = (),
        unseen: str | None = None,
        scan_unseen: bool = False,
    ) -> None:
        self.command = command
        self.paths = paths
        """Every path of the call: the declared path arguments' and ``named``."""
        self.named = named
        """The paths found by argument names in a third-party tool's call (``path``, ``file``, ``file://`` URIs ...),
        besides the arguments it declares as paths."""
        self.unseen = unseen
        """Why part of the arguments was not read for paths (past the scan's limits), or None: ``paths`` may miss some."""
        self.scan_unseen = scan_unseen
        """``unseen`` comes from the scan by names (else from a declared path argument that holds no text)."""
        self.arguments = arguments
        self.skill = skill
        self._every: tuple[str, ...] | None = None

    @property
    def every_value(self) -> tuple[str, ...]:
        """Every string the call holds, also inside lists and objects and the keys of those (a skill's name first),
        for deny and ask rules with a specifier: a value must not get past them by being nested or being a key.
        (Allow rules on values vouch only when every value matches: see ``kairox.policy._values``.)"""
        if self._every is None:
            self._every = (*([] if self.skill is None else [self.skill]), *every_string(self.arguments))
        return self._every


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
        self.read_mask = read_mask(settings.rules, workspace=settings.workspace, home=settings.home, roots=settings.writable_roots)
        """What ``fs.read`` deny and ask rules hide from sandboxed commands (``SandboxSettings.hidden``), or None."""
        self._path_patterns: dict[str, PathPattern] = {}
        self._by_tool: dict[tuple[object, ...], dict[RuleAction, tuple[ParsedRule, ...]]] = {}

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
        """The deny rule that hides this tool whatever its arguments (``mcp__github__*``), or None."""
        for rule in self._candidates(spec)[RuleAction.DENY]:
            if rule.names_tool_only:
                return rule.ref
        return None

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

    def matches_any(self, rules: Sequence[ParsedRule], spec: ToolSpec, arguments: Mapping[str, Any]) -> ParsedRule | None:
        """The first of ``rules`` (read as allow rules) that covers this call."""
        facts = self._facts(spec, arguments)
        for rule in rules:
            if rule.matches_tool(spec) and self._covers(rule, spec, facts, for_allow=True):
                return rule
        return None

    def refuses_reads(self, spec: ToolSpec) -> bool:
        """Whether any deny or ask rule could keep ``spec`` from reading a file (else no read filter is needed)."""
        rules = self._candidates(spec)
        return any(
            r.specifier is not None and not r.arguments and (r in rules[action] or r.tool == "fs.read")
            for action in (RuleAction.DENY, RuleAction.ASK)
            for r in self._rules[action]
        )

    def read_refusal(self, spec: ToolSpec, path: Path) -> RuleRef | None:
        """The deny or ask rule that keeps ``spec`` from reading ``path``, a file it met inside a folder it was
        allowed to read (a search or a listing must not show what ``fs.read`` may not)."""
        rules = self._candidates(spec)
        for action in (RuleAction.DENY, RuleAction.ASK):
            # the tool's own rules, and every rule on reading files (`fs.read(secrets/**)`) whatever the tool
            reading = [r for r in self._rules[action] if r.tool == "fs.read"]
            for rule in dict.fromkeys([*rules[action], *reading]):
                if rule.specifier is not None and not rule.arguments and self._path_pattern(rule.specifier).matches(path, any_part=True):
                    return rule.ref
        return None

    def reads_elsewhere(self) -> Callable[[Path], str | None] | None:
        """For one call of a tool that reads files itself: why a file no rule names must not be read (another name
        of a file the rules on reading hide, the history of a repository they reach), or None. The read mask is
        worked out at most once, and only for such a file: one with several names, or inside a ``.git`` folder or
        a repository's hidden stores."""
        mask = self.read_mask
        if mask is None:
            return None
        worked: list[MaskedReads] = []

        def why(path: Path) -> str | None:
            if ".git" not in path.parts:
                try:
                    if os.stat(path).st_nlink < 2 and not worked:
                        return None
                except OSError:
                    return None
            if not worked:
                worked.append(mask.work_out())
            return worked[0].why(path)

        return why

    def argument_diagnostics(self, specs: Iterable[ToolSpec]) -> list[Diagnostic]:
        """Warnings for rules naming an argument the tools they match do not take (see ``_values``)."""
        return argument_diagnostics((r for rules in self._rules.values() for r in rules), specs)

    def suggest_rule(self, spec: ToolSpec, arguments: Mapping[str, Any]) -> str | None:
        """The allow rule that would cover calls like this one (what "always" persists), or None."""
        return _suggestion(spec, self._facts(spec, arguments))

    def exact_rule(self, spec: ToolSpec, arguments: Mapping[str, Any]) -> str | None:
        """An allow rule that covers this call and no other, or None when no rule can say it that narrowly."""
        facts = self._facts(spec, arguments)
        command = facts.command
        if command is not None:
            if len(command.pieces) != 1 or command.opaque or command.hidden is not None:
                return None
            # the rule matches the line as split (quotes gone, git's global options dropped): it says only this line
            # when that is the line as written, else it would also cover `rm *` for `rm '*'`
            written = arguments.get(spec.permission.command_arg or "")
            if not isinstance(written, str) or " ".join(written.split()) != command.pieces[0]:
                return None
            return f"{spec.name}({_literal_glob(command.pieces[0])})"
        if spec.permission.path_args and len(facts.paths) == 1 and len(arguments) == 1:
            return f"{spec.name}({_literal_glob(str(facts.paths[0]))})"
        if not arguments and not spec.input_schema.get("properties"):
            return spec.name
        return None

    def command_line(self, spec: ToolSpec, arguments: Mapping[str, Any]) -> str | None:
        """The command line this call runs, as a person should see it and the rules see it: with ``cd DIR &&`` in
        front when it runs in a folder other than the workspace root; None for a tool without a command.

        A tool that names a program (``dap.launch``) is shown as ``[NAME=VALUE ...] PROGRAM ARG ...``, quoted for a
        shell, so the person sees what runs; the rules do not read it as a shell command."""
        profile = spec.permission
        value = None if profile.command_arg is None else arguments.get(profile.command_arg)
        if not isinstance(value, str) and profile.program is not None:
            value = _program_line(profile.program, arguments)
        if not isinstance(value, str):
            return None
        return self._in_folder(value, None if profile.cwd_arg is None else arguments.get(profile.cwd_arg))

    def call_paths(self, spec: ToolSpec, arguments: Mapping[str, Any]) -> tuple[Path, ...]:
        """The files this call names and the folder its command runs in, resolved as the rules see them (``..``
        folded, symlinks followed)."""
        paths = self._facts(spec, arguments).paths
        cwd = None if spec.permission.cwd_arg is None else arguments.get(spec.permission.cwd_arg)
        if isinstance(cwd, str) and cwd.strip():
            paths += (resolve_path(cwd, base=self.settings.workspace, home=self.settings.home),)
        return paths

    def describe_rule(self, spec: ToolSpec, pattern: str) -> str | None:
        """What an allow rule would let through, in words; None for a blank cheque on a command tool."""
        try:
            parsed = parse_rule(Rule(action="allow", pattern=pattern))
        except ValueError:
            return None
        if parsed.specifier is None:
            if spec.permission.command_arg is not None:
                return None
            return f"every call of {parsed.tool}, with any arguments"
        if parsed.arguments and (spec.permission.command_arg is not None or spec.permission.path_args):
            return None  # a command or path tool is vouched for by its command or paths, never by named arguments
        if spec.permission.command_arg is not None:
            return (
                f"every command line whose commands are all {describe_command_glob(parsed.specifier)}, run as written: no redirection "
                "or option that writes a file, no sudo, ssh or container exec, no variables that change what runs"
            )
        if spec.permission.path_args:
            return f"every call of {parsed.tool} on paths matching {parsed.specifier!r}"
        return describe_values(parsed.tool, parsed.specifier, parsed.arguments)

    # --- the decision ----------------------------------------------------------------------------------------

    def _decide(
        self, spec: ToolSpec, arguments: Mapping[str, Any], *, hook: HookDecision | None, hook_reason: str | None
    ) -> Decision:
        if hook is HookDecision.DENY:
            return Decision.deny(hook_reason or "a pre_tool_use hook denied the call", source=DecisionSource.HOOK)
        return self._decide_on(spec, self._facts(spec, arguments), hook=hook, hook_reason=hook_reason)

    def _decide_on(self, spec: ToolSpec, facts: "_Facts", *, hook: HookDecision | None, hook_reason: str | None) -> Decision:
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
            refusing = next((r for a in (RuleAction.DENY, RuleAction.ASK) for r in rules[a] if r.specifier is not None and not r.arguments), None)
            if refusing is not None:  # code from elsewhere could run what the rule is about (Y8): a person decides
                return Decision.ask(f"{runs}, so {refusing.ref} cannot be checked against it", source=DecisionSource.RULE, rule=refusing.ref)
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
                return Decision.ask(f"{decision.reason}; {missed}", source=decision.source, suggested_rule=decision.suggested_rule)
        return decision

    def _hidden_elsewhere(self, paths: Iterable[Path]) -> str | None:
        """Why a path a third-party tool names must not be read though no rule names it (another name, a hard link,
        of a file the rules on reading hide; a hidden history), as ``fs.read`` refuses it; None otherwise."""
        why = self.reads_elsewhere()
        if why is None:
            return None
        return next((reason for reason in map(why, paths) if reason is not None), None)

    def _as_command(self, spec: ToolSpec, facts: "_Facts", action: RuleAction) -> Decision | None:
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
        for line in _program_lines(names, facts.arguments):
            command = self._in_folder(line, cwd)
            seen = _Facts(command=split_command(command), paths=(), arguments={"command": command}, skill=None)
            for rule in rules:
                if self._covers(rule, shell, seen, for_allow=False):
                    why = f"{spec.name} runs `{command}`, and {rule.ref} holds for it as for shell.exec"
                    if action is RuleAction.DENY:
                        return Decision.deny(f"denied: {why}", source=DecisionSource.RULE, rule=rule.ref)
                    return Decision.ask(f"{why} and asks for approval", source=DecisionSource.RULE, rule=rule.ref)
        return None

    def _value_rule_missed(self, spec: ToolSpec, allows: Sequence[ParsedRule], facts: "_Facts") -> str | None:
        """Why the first allow rule on this tool's values did not vouch for the call, with what to write instead;
        None when no such rule was near (an unnamed one whose glob matches none of the call's strings)."""
        if facts.command is not None:
            return None
        named = [r for r in allows if r.arguments]
        if named:  # the one naming the call's arguments most nearly
            keys = set(facts.arguments)
            rule = min(named, key=lambda r: (len(keys.symmetric_difference(c.name for c in r.arguments)), named.index(r)))
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

    def _value_miss(self, rule: ParsedRule, spec: ToolSpec, facts: "_Facts") -> str | None:
        """Why an allow rule on values does not vouch for this call (no command in it, no paths unless it names
        arguments), or None when it does."""
        arguments = facts.arguments
        specifier = rule.specifier or "*"
        if rule.arguments:
            profile = spec.permission
            if profile.command_arg is not None or profile.path_args:
                return f"{spec.name} is vouched for by its command or its paths, never by named arguments"
            return allow_miss(rule.arguments, arguments, self._path_match if facts.paths else _no_path)
        if facts.skill is not None and fnmatch.fnmatchcase(facts.skill, specifier):
            return None
        argument = spec.meta.get("rule_argument")
        if isinstance(argument, str):  # the tool says which argument its rules are about (the skill tool: the skill's name)
            value = arguments.get(argument)
            return None if isinstance(value, str) and fnmatch.fnmatchcase(value, specifier) else f"argument {argument!r} does not match"
        return unnamed_allow_miss(specifier, arguments, declared_arguments(spec))

    def _path_match(self, argument: str, text: str, glob: str) -> bool | None:
        """Whether every path ``text`` names (as argument ``argument``) is inside ``glob`` read as a path pattern;
        None when it names none."""
        found: list[str] = []
        scan_path_arguments({argument: text}, found)
        if not found:
            return None
        pattern = self._path_pattern(glob)
        return all(pattern.matches(resolve_path(p, base=self.settings.workspace, home=self.settings.home)) for p in found)

    def _path_touches(self, argument: str, text: str, glob: str) -> bool | None:
        """Whether any path ``text`` names (as argument ``argument``) is in ``glob`` read as a path pattern (or in a
        folder it covers); None when it names none."""
        found: list[str] = []
        scan_path_arguments({argument: text}, found)
        if not found:
            return None
        pattern = self._path_pattern(glob)
        return any(pattern.matches(resolve_path(p, base=self.settings.workspace, home=self.settings.home), any_part=True) for p in found)

    def _unread(self, spec: ToolSpec, rules: dict[RuleAction, tuple[ParsedRule, ...]], facts: "_Facts") -> Decision | None:
        """The ask for a call whose arguments the policy could not read all of, when a rule or a protection that
        depends on its paths is in force for the tool; None when none is (nothing unread could change the decision)."""
        unseen = facts.unseen
        what_to_do = f"split it into calls of at most {LIMITS}" if facts.scan_unseen else "pass each path as text"
        remedy = f"{what_to_do}; no allow rule can vouch for what was not read"
        naming = next((r for action in _NAMING_ORDER for r in rules[action] if r.specifier is not None), None)
        if naming is not None:
            return Decision.ask(
                f"{unseen}, so {naming.ref} cannot be checked against the rest; {remedy}", source=DecisionSource.RULE, rule=naming.ref
            )
        writes = bool(spec.permission.path_args) and Access.WRITE in (effective_profile(spec).access, spec.permission.access)
        if writes:
            what = "the protected paths and the writable roots"
        elif facts.scan_unseen and not mcp_read_only(spec):  # paths found by name: the protected ones ask
            what = "the protected paths"
        else:
            return None
        return Decision.ask(f"{unseen}, so the rest cannot be checked against {what}; {remedy}", source=DecisionSource.PROTECTED_PATH)

    def _protected(self, paths: tuple[Path, ...]) -> Decision | None:
        for path in paths:
            reason = protected_reason(path, home=self.settings.home, own_dirs=self.settings.own_dirs, workspace=self.settings.workspace)
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

    def _by_mode(self, spec: ToolSpec, profile: PermissionProfile, facts: "_Facts") -> Decision:
        settings = self.settings
        access = profile.access
        suggestion = _suggestion(spec, facts) if access is not Access.READ else None
        if settings.approval is ApprovalPolicy.UNTRUSTED and access is not Access.READ and not mcp_read_only(spec):
            unguarded = self._unguarded_reads() if access is Access.EXECUTE and not runs_unsandboxed(spec) else ""
            return Decision.ask(
                f"{spec.name} needs {access} access and the approval policy is untrusted (only read-only tools run without asking){unguarded}",
                source=DecisionSource.MODE,
                suggested_rule=suggestion,
            )
        if access is Access.EXTERNAL:
            who = f"{spec.source} tool {spec.name}" + (f" from {spec.origin}" if spec.origin else "")
            if spec.source is ToolSource.MCP and not mcp_read_only(spec):
                return Decision.ask(f"{who} may change things: {_mcp_why(spec)}", source=DecisionSource.MODE, suggested_rule=suggestion)
            if profile.destructive:
                return Decision.ask(
                    f"{who} runs outside Kairox's sandbox and may change things (it does not declare that it only reads)",
                    source=DecisionSource.MODE,
                    suggested_rule=suggestion,
                )
            if profile.open_world and not settings.network_access:
                return Decision.ask(
                    f"{who} reaches the outside world (it is not annotated openWorldHint: false) and policy.network_access is false",
                    source=DecisionSource.MODE,
                    suggested_rule=suggestion,
                )
            if spec.source is ToolSource.MCP:
                return Decision.allow(
                    f"{who} is annotated read-only and the annotations of server {spec.origin!r} are trusted (trust_annotations)",
                    source=DecisionSource.MODE,
                )
            return Decision.allow(f"{who} declares that it only reads", source=DecisionSource.MODE)
        if access is Access.EXECUTE and runs_unsandboxed(spec):
            # whatever the sandbox policy: that program is not under it, and what the tool makes it do runs with its authority
            return Decision.ask(
                f"{spec.name} works on a program that Kairox did not start and no Kairox sandbox holds, so what it makes "
                "that program do runs with the program's full authority",
                source=DecisionSource.MODE,
                suggested_rule=suggestion,
            )
        if access is Access.EXECUTE:
            where = "without a sandbox (danger_full_access)" if settings.sandbox is SandboxPolicy.DANGER_FULL_ACCESS else f"in the {settings.sandbox} sandbox"
            return Decision.allow(f"{spec.name} runs {where}{self._let_through()}{self._unguarded_reads()}", source=DecisionSource.MODE)
        if access is Access.WRITE:
            return Decision.allow(f"{spec.name} writes inside the writable roots", source=DecisionSource.MODE)
        return Decision.allow(f"{spec.name} only reads", source=DecisionSource.MODE)

    def _let_through(self) -> str:
        """Said of a sandboxed command when ``policy.allow_unix_sockets`` names host sockets it may still reach."""
        if self.settings.sandbox is SandboxPolicy.DANGER_FULL_ACCESS or not self.settings.allowed_sockets:
            return ""
        return f"; host sockets let through (policy.allow_unix_sockets): {', '.join(map(str, self.settings.allowed_sockets))}"

    def _unguarded_reads(self) -> str:
        """Said of a command that runs without a sandbox while rules on reading exist: they do not hold for it."""
        if self.settings.sandbox is not SandboxPolicy.DANGER_FULL_ACCESS or self.read_mask is None:
            return ""
        return "; without a sandbox, fs.read deny and ask rules do not hold for what the command reads"

    # --- matching --------------------------------------------------------------------------------------------

    def _facts(self, spec: ToolSpec, arguments: Mapping[str, Any]) -> _Facts:
        profile = spec.permission
        command = None
        if profile.command_arg is not None:
            line = self.command_line(spec, arguments)
            if line is not None:
                command = split_command(line)
                if self._refuses_commands(spec):  # only then are the scripts and programs it starts looked into
                    command = self._looked_into(command, spec, arguments)
        paths: list[Path] = []
        unseen: str | None = None
        for name in profile.path_args:
            value = arguments.get(name)
            items = value if isinstance(value, list) else [value]
            for item in items:
                if isinstance(item, str):
                    if item.strip():
                        paths.append(resolve_path(item, base=self.settings.workspace, home=self.settings.home))
                elif item is not None:  # a schema that lets more than text through: the tool may still read a path in it
                    unseen = f"argument {name!r} holds a {type(item).__name__} where the policy reads a path"
        named: list[Path] = []
        scan_unseen = False
        if spec.source in _THIRD_PARTY:
            # also when it declares path arguments: a plugin's manifest may name `input` and leave out `output_file`
            declared = profile.path_args
            rest = {k: v for k, v in arguments.items() if k not in declared} if declared else arguments
            found: list[str] = []
            scanned = scan_path_arguments(rest, found)
            if scanned is not None and unseen is None:
                unseen, scan_unseen = scanned, True
            elsewhere = next((item for item in found if _PROCESS_RELATIVE.match(item)), None)
            if elsewhere is not None and unseen is None:
                # /proc/self/cwd/... means the folders of the process that opens it: the tool's server, not Kairox
                unseen = f"{elsewhere!r} names a file by the process that opens it (/proc/self, /proc/PID), which Kairox cannot see for {spec.name}"
            named = [resolve_path(item, base=self.settings.workspace, home=self.settings.home) for item in found]
        skill = spec.origin if spec.source is ToolSource.SKILL and spec.origin else None
        return _Facts(
            command=command, paths=(*paths, *named), arguments=arguments, skill=skill, named=tuple(named), unseen=unseen, scan_unseen=scan_unseen
        )

    def _refuses_commands(self, spec: ToolSpec) -> bool:
        """Whether a deny or ask rule on this tool's commands is in force (an allow rule alone reads no file)."""
        rules = self._candidates(spec)
        return any(r.specifier is not None and not r.arguments for a in (RuleAction.DENY, RuleAction.ASK) for r in rules[a])

    def _looked_into(self, command: ShellCommand, spec: ToolSpec, arguments: Mapping[str, Any]) -> ShellCommand:
        cwd = None if spec.permission.cwd_arg is None else arguments.get(spec.permission.cwd_arg)
        folder = self.settings.workspace
        if isinstance(cwd, str) and cwd.strip():
            folder = resolve_path(cwd, base=self.settings.workspace, home=self.settings.home)
        return look_into(command, cwd=folder, roots=self.settings.writable_roots, entered=int(folder != self.settings.workspace))

    def _in_folder(self, command: str, cwd: object) -> str:
        """The command as the rules see it: run in a folder other than the workspace root, it is ``cd DIR && ...``
        (``make test`` there runs that folder's Makefile), so a rule for the command alone does not cover it."""
        if not isinstance(cwd, str) or not cwd.strip():
            return command
        if resolve_path(cwd, base=self.settings.workspace, home=self.settings.home) == self.settings.workspace:
            return command
        return f"cd {shlex.quote(cwd)} && {command}"

    def _covers(self, rule: ParsedRule, spec: ToolSpec, facts: _Facts, *, for_allow: bool) -> bool:
        """Whether the rule's specifier holds: for an allow rule, for every command and path of the call; for
        deny and ask, for any of them."""
        specifier = rule.specifier
        if specifier is None:
            return True
        if for_allow and facts.unseen is not None:  # an allow rule vouches only for what the policy could read
            return False
        if rule.arguments:  # `.sql=SELECT*`: the values of the arguments it names, whatever kind of tool
            if for_allow:
                return self._value_miss(rule, spec, facts) is None
            return refusal_matches(rule.arguments, facts.arguments, self._path_touches if facts.paths else _no_path)
        if facts.command is not None:
            command = facts.command
            pieces = command.pieces
            if for_allow:
                # an allow rule vouches only for what it can see: every command, run as written, writing no file
                return (
                    bool(pieces) and command.hidden is None and not command.opaque and not command.writes
                    and not command.privileged and not command.changes_programs and command.allow_vouches_for_loads(specifier)
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
            pattern = PathPattern.parse(specifier, base=self.settings.workspace, home=self.settings.home)
            self._path_patterns[specifier] = pattern
        return pattern


def _no_path(argument: str, text: str, glob: str) -> None:
    """The path match of a call that names no path."""
    return None


def _suggestion(spec: ToolSpec, facts: _Facts) -> str | None:
    """A rule covering calls like this one, or None when no rule should (a command the parser cannot fully see)."""
    if facts.command is not None:
        command = facts.command
        if not command.pieces or command.opaque or command.hidden is not None:
            return None
        words = command.pieces[0].split(" ")
        return f"{spec.name}({' '.join(words[:2])}*)" if len(words) > 1 else f"{spec.name}({words[0]}*)"
    if len(facts.paths) == 1 and not facts.named:
        return f"{spec.name}({_literal_glob(str(facts.paths[0]))})"
    return spec.name


def _program_line(names: ProgramArgs, arguments: Mapping[str, Any], *, interpreter: str | None = None) -> str | None:
    """``[NAME=VALUE ...] PROGRAM ARG ...`` of a call that names a program, quoted for a shell; None without one.
    With ``interpreter``: ``[NAME=VALUE ...] INTERPRETER PROGRAM ARG ...``."""
    program = arguments.get(names.program)
    if not isinstance(program, str):
        return None
    args = arguments.get(names.args) if names.args else None
    env = arguments.get(names.env) if names.env else None
    # `env NAME=VALUE`: shlex quotes a variable word whole ('A=b c'), which a shell reads as an assignment only after env
    words = ["env", *(f"{k}={v}" for k, v in env.items())] if isinstance(env, dict) and env else []
    words += [interpreter, program] if interpreter else [program]
    words += [str(a) for a in args] if isinstance(args, list) else []
    return shlex.join(words)


_INTERPRETERS = {".py": ("python", "python3"), ".js": ("node",), ".mjs": ("node",), ".cjs": ("node",), ".sh": ("sh", "bash")}
"""What runs a program file of each kind, as rules name it (a debug adapter starts the debuggee through it)."""


def _program_lines(names: ProgramArgs, arguments: Mapping[str, Any]) -> list[str]:
    """The command lines a program-naming call runs, for the shell.exec rules: as written, and through the
    interpreter of the program's kind."""
    line = _program_line(names, arguments)
    if line is None:
        return []
    program = str(arguments.get(names.program))
    kinds = _INTERPRETERS.get(os.path.splitext(program)[1].lower(), ())
    return [line, *(_program_line(names, arguments, interpreter=name) or line for name in kinds)]


@functools.cache
def _shell_spec() -> ToolSpec:
    return next(spec for spec in BUILTIN_SPECS if spec.name == "shell.exec")


def _literal_glob(path: str) -> str:
    """``path`` as a glob that matches only itself: ``*``, ``?`` and ``[`` in a file name are not wildcards."""
    return "".join(f"[{char}]" if char in "*?[" else char for char in path)


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
