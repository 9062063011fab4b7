"""The policy engine (Y1-Y4, Y7): a pure function from a tool, its arguments and the user's policy to a decision.

Order: a hook's deny; deny rules; under read_only, programs no OS sandbox holds; a hook's ask; ask rules;
protected paths and the sandbox boundary for writes; allow rules; a hook's allow; the tool's permission profile
against the approval and sandbox policies.
Deny always wins, and a hook's allow never skips a deny rule, an ask rule, a protected path or the sandbox.
"""

import fnmatch
import tempfile
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from kairox.config import ApprovalPolicy, PolicyConfig, SandboxPolicy
from kairox.errors import Diagnostic, Severity
from kairox.policy._decision import Decision, DecisionSource, Verdict
from kairox.policy._paths import PathPattern, protected_reason, resolve_path, writable_reason
from kairox.policy._rules import ParsedRule, RuleAction, RuleLike, RuleRef, parse_rule
from kairox.policy._shell import ShellCommand, split_command
from kairox.tools import Access, HookDecision, PermissionProfile, ToolSource, ToolSpec

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
_OS_SANDBOXED = frozenset({ToolSource.BUILTIN, ToolSource.PLUGIN})
"""Sources whose execute tools run their commands under Kairox's OS sandbox (``shell.exec``, plugin commands)."""


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
    rules: tuple[RuleLike, ...] = ()

    @classmethod
    def from_config(
        cls,
        policy: PolicyConfig,
        *,
        workspace: Path,
        rules: Iterable[RuleLike] = (),
        home: Path | None = None,
        roots_base: Path | None = None,
        temp_dir: Path | None = None,
    ) -> "PolicySettings":
        """Settings from ``[policy]``; relative ``writable_roots`` are resolved against ``roots_base``."""
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
            rules=tuple(rules),
        )


def runs_unsandboxed(spec: ToolSpec) -> bool:
    """Whether the tool runs programs that no OS sandbox holds (a debuggee under DAP)."""
    return effective_profile(spec).access is Access.EXECUTE and spec.source not in _OS_SANDBOXED


def effective_profile(spec: ToolSpec) -> PermissionProfile:
    """The profile the policy holds a tool to: its source's floor, narrowed by what it declares.

    A declaration or annotation can only add caution. MCP tools are external; one without annotations counts as
    destructive and open-world.
    """
    declared = spec.permission
    floor = _SOURCE_FLOOR[spec.source]
    access = max(declared.access, floor, key=_ACCESS_ORDER.index)
    notes = spec.annotations
    destructive = declared.destructive or notes.destructive_hint is True
    open_world = declared.open_world or notes.open_world_hint is True
    if spec.source is ToolSource.MCP:
        said_harmless = notes.read_only_hint is True or notes.destructive_hint is False
        destructive = destructive or not said_harmless
        open_world = open_world or notes.open_world_hint is not False
    return replace(declared, access=access, destructive=destructive, open_world=open_world)


@dataclass(frozen=True, slots=True)
class _Facts:
    """What rules are matched against, worked out once per call."""

    command: ShellCommand | None
    paths: tuple[Path, ...]
    values: tuple[str, ...]


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
            return Decision.deny(
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

    def read_refusal(self, spec: ToolSpec, path: Path) -> RuleRef | None:
        """The deny or ask rule that keeps ``spec`` from reading ``path``, a file it met inside a folder it was
        allowed to read (a search or a listing must not show what ``fs.read`` may not)."""
        rules = self._candidates(spec)
        for action in (RuleAction.DENY, RuleAction.ASK):
            for rule in rules[action]:
                if rule.specifier is not None and self._path_pattern(rule.specifier).matches(path, any_part=True):
                    return rule.ref
        return None

    def suggest_rule(self, spec: ToolSpec, arguments: Mapping[str, Any]) -> str:
        """The allow rule that would cover calls like this one (what "always" persists)."""
        return _suggestion(spec, self._facts(spec, arguments))

    # --- the decision ----------------------------------------------------------------------------------------

    def _decide(
        self, spec: ToolSpec, arguments: Mapping[str, Any], *, hook: HookDecision | None, hook_reason: str | None
    ) -> Decision:
        if hook is HookDecision.DENY:
            return Decision.deny(hook_reason or "a pre_tool_use hook denied the call", source=DecisionSource.HOOK)
        facts = self._facts(spec, arguments)
        rules = self._candidates(spec)
        for rule in rules[RuleAction.DENY]:
            if self._covers(rule, spec, facts, for_allow=False):
                return Decision.deny(f"denied by {rule.ref}", source=DecisionSource.RULE, rule=rule.ref)
        if facts.command is not None and facts.command.dynamic:
            unsure = next((r for r in rules[RuleAction.DENY] if r.specifier is not None), None)
            if unsure is not None:  # `$X -rf y` may be what the rule forbids: a person decides
                return Decision.ask(
                    f"the command name is only known when the line runs, so {unsure.ref} cannot be checked",
                    source=DecisionSource.RULE,
                    rule=unsure.ref,
                )
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
        profile = effective_profile(spec)
        if Access.WRITE in (profile.access, spec.permission.access) and facts.paths:
            boundary = self._write_boundary(facts.paths)
            if boundary is not None:
                return boundary
        for rule in rules[RuleAction.ALLOW]:
            if self._covers(rule, spec, facts, for_allow=True):
                return Decision.allow(f"allowed by {rule.ref}", source=DecisionSource.RULE, rule=rule.ref)
        if hook is HookDecision.ALLOW:
            return Decision.allow(hook_reason or "a pre_tool_use hook allowed the call", source=DecisionSource.HOOK)
        return self._by_mode(spec, profile, facts)

    def _write_boundary(self, paths: tuple[Path, ...]) -> Decision | None:
        settings = self.settings
        for path in paths:
            reason = protected_reason(path, home=settings.home)
            if reason is not None:
                return Decision.ask(reason, source=DecisionSource.PROTECTED_PATH)
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
        if settings.approval is ApprovalPolicy.UNTRUSTED and access is not Access.READ:
            return Decision.ask(
                f"{spec.name} needs {access} access and the approval policy is untrusted (only read-only tools run without asking)",
                source=DecisionSource.MODE,
                suggested_rule=suggestion,
            )
        if access is Access.EXTERNAL:
            who = f"{spec.source} tool {spec.name}" + (f" from {spec.origin}" if spec.origin else "")
            if profile.destructive:
                return Decision.ask(
                    f"{who} runs outside Kairox's sandbox and may change things (it is not annotated read-only or non-destructive)",
                    source=DecisionSource.MODE,
                    suggested_rule=suggestion,
                )
            if profile.open_world and not settings.network_access:
                return Decision.ask(
                    f"{who} reaches the outside world and policy.network_access is false",
                    source=DecisionSource.MODE,
                    suggested_rule=suggestion,
                )
            return Decision.allow(f"{who} is annotated read-only", source=DecisionSource.MODE)
        if access is Access.EXECUTE and runs_unsandboxed(spec):
            return Decision.allow(f"{spec.name} runs outside Kairox's OS sandbox (allowed by the {settings.sandbox} policy)", source=DecisionSource.MODE)
        if access is Access.EXECUTE:
            where = "without a sandbox (danger_full_access)" if settings.sandbox is SandboxPolicy.DANGER_FULL_ACCESS else f"in the {settings.sandbox} sandbox"
            return Decision.allow(f"{spec.name} runs {where}", source=DecisionSource.MODE)
        if access is Access.WRITE:
            return Decision.allow(f"{spec.name} writes inside the writable roots", source=DecisionSource.MODE)
        return Decision.allow(f"{spec.name} only reads", source=DecisionSource.MODE)

    # --- matching --------------------------------------------------------------------------------------------

    def _facts(self, spec: ToolSpec, arguments: Mapping[str, Any]) -> _Facts:
        profile = spec.permission
        command = None
        if profile.command_arg is not None:
            value = arguments.get(profile.command_arg)
            if isinstance(value, str):
                command = split_command(value)
        paths: list[Path] = []
        for name in profile.path_args:
            value = arguments.get(name)
            items = value if isinstance(value, list) else [value]
            for item in items:
                if isinstance(item, str) and item.strip():
                    paths.append(resolve_path(item, base=self.settings.workspace, home=self.settings.home))
        values = tuple(v for v in arguments.values() if isinstance(v, str))
        if spec.source is ToolSource.SKILL and spec.origin:
            values = (spec.origin, *values)
        return _Facts(command=command, paths=tuple(paths), values=values)

    def _covers(self, rule: ParsedRule, spec: ToolSpec, facts: _Facts, *, for_allow: bool) -> bool:
        """Whether the rule's specifier holds: for an allow rule, for every command and path of the call; for
        deny and ask, for any of them."""
        specifier = rule.specifier
        if specifier is None:
            return True
        if facts.command is not None:
            pieces = facts.command.pieces
            if for_allow:
                command = facts.command
                return bool(pieces) and not command.opaque and not command.writes and all(_command_match(p, specifier, exact=True) for p in pieces)
            return any(_command_match(p, specifier, exact=False) for p in pieces)
        if facts.paths:
            pattern = self._path_pattern(specifier)
            if for_allow:
                return all(pattern.matches(p) for p in facts.paths)
            return any(pattern.matches(p, any_part=True) for p in facts.paths)
        return any(fnmatch.fnmatchcase(v, specifier) for v in facts.values)

    def _path_pattern(self, specifier: str) -> PathPattern:
        pattern = self._path_patterns.get(specifier)
        if pattern is None:
            pattern = PathPattern.parse(specifier, base=self.settings.workspace, home=self.settings.home)
            self._path_patterns[specifier] = pattern
        return pattern


def _suggestion(spec: ToolSpec, facts: _Facts) -> str:
    if facts.command is not None and facts.command.pieces and not facts.command.opaque:
        words = facts.command.pieces[0].split(" ")
        return f"{spec.name}({' '.join(words[:2])}*)" if len(words) > 1 else f"{spec.name}({words[0]}*)"
    if len(facts.paths) == 1:
        return f"{spec.name}({_literal_glob(str(facts.paths[0]))})"
    return spec.name


def _literal_glob(path: str) -> str:
    """``path`` as a glob that matches only itself: ``*``, ``?`` and ``[`` in a file name are not wildcards."""
    return "".join(f"[{char}]" if char in "*?[" else char for char in path)


def _command_match(piece: str, specifier: str, *, exact: bool) -> bool:
    spec = " ".join(specifier.split())
    if fnmatch.fnmatchcase(piece, spec):
        return True
    if exact:
        return False
    # a deny rule for `rm*` also catches `/bin/rm -rf x`
    head, _, rest = piece.partition(" ")
    if "/" in head:
        short = head.rsplit("/", 1)[-1] + (" " + rest if rest else "")
        return fnmatch.fnmatchcase(short, spec)
    return False
