"""Permission rules: ``allow`` / ``ask`` / ``deny`` patterns with where they were written; and the gate's
``Decision`` about one call: its verdict, why, and which rule (with its file and line) said so."""

import enum
import fnmatch
import re
from collections.abc import Iterable, Iterator
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Protocol

from kairox.errors import Diagnostic
from kairox.policy._values import ArgumentCondition, declared_arguments, parse_conditions
from kairox.tools import Access, ToolSource, ToolSpec


class RuleAction(enum.StrEnum):
    ALLOW = "allow"
    ASK = "ask"
    DENY = "deny"


class RuleLike(Protocol):
    """What the engine needs of a rule; ``kairox.config.PolicyRule`` has this shape."""

    @property
    def action(self) -> str: ...
    @property
    def pattern(self) -> str: ...
    @property
    def layer(self) -> Any: ...
    @property
    def file(self) -> Any: ...
    @property
    def line(self) -> int | None: ...


@dataclass(frozen=True, kw_only=True, slots=True)
class Rule:
    """A rule written somewhere (a config layer, a test, a session approval)."""

    action: str
    pattern: str
    layer: Any = None
    file: Path | str | None = None
    line: int | None = None


@dataclass(frozen=True, kw_only=True, slots=True)
class RuleRef:
    """A rule as a decision names it: the pattern and where it was written."""

    action: RuleAction
    pattern: str
    layer: str | None = None
    file: str | None = None
    line: int | None = None

    @property
    def where(self) -> str | None:
        if self.file is None:
            return self.layer
        return f"{self.file}:{self.line}" if self.line else self.file

    def __str__(self) -> str:
        where = self.where
        return f"{self.action} rule {self.pattern!r}" + (f" ({where})" if where else "")


_FAMILIES = {"fs.read": Access.READ, "fs.write": Access.WRITE}
_PATH_FAMILY_SOURCES = frozenset({ToolSource.BUILTIN, ToolSource.LSP})
"""Sources whose path arguments are files Kairox itself opens (an extension's own path claims are not trusted)."""
_THIRD_PARTY = frozenset({ToolSource.MCP, ToolSource.PLUGIN})
"""Sources whose path arguments Kairox finds by their names (best effort: their schemas declare none)."""
_PATTERN = re.compile(r"^\s*(?P<tool>[^()\s]+)\s*(?:\((?P<spec>.*)\))?\s*$", re.DOTALL)


@dataclass(frozen=True, slots=True)
class ParsedRule:
    ref: RuleRef
    tool: str
    """Tool-name glob, ``plugin:NAME``, an MCP server prefix ``mcp__server`` or ``skill``."""
    specifier: str | None
    """What is inside the parentheses: a command glob, a path glob or an argument glob."""
    arguments: tuple[ArgumentCondition, ...] = ()
    """The arguments the specifier names (``.sql=SELECT*, .limit=*``), or () when it names none."""

    def matches_tool(self, spec: ToolSpec) -> bool:
        tool = self.tool
        if tool.startswith("plugin:"):
            name = tool.removeprefix("plugin:")
            origin = spec.origin or ""
            return spec.source is ToolSource.PLUGIN and fnmatch.fnmatchcase(origin.removeprefix("plugin:"), name)
        if tool == "skill" and spec.source is ToolSource.SKILL:
            return True
        # `fs.read(...)` rules hold for every tool that reads the paths it is given (fs.list, search.ripgrep, the
        # language-server tools), and `fs.write(...)` rules for every one that writes them (fs.edit)
        family = _FAMILIES.get(tool)
        if family is not None:
            profile = spec.permission
            if spec.source in _PATH_FAMILY_SOURCES and profile.path_args and profile.access is family:
                return True
            # a tool that writes what it reads (fs.edit): `fs.read` deny and ask rules hold for its paths; an allow
            # rule on reading never vouches for the write
            if (
                spec.source in _PATH_FAMILY_SOURCES
                and profile.path_args
                and family is Access.READ
                and profile.reads
                and self.ref.action is not RuleAction.ALLOW
            ):
                return True
            # a third-party tool's paths are found by argument name; deny and ask rules on paths hold for them
            if spec.source in _THIRD_PARTY and self.ref.action is not RuleAction.ALLOW and self.specifier is not None:
                return True
        if fnmatch.fnmatchcase(spec.name, tool):
            return True
        # `mcp__github` (Claude's server-level form) covers every tool of that server
        return tool.startswith("mcp__") and tool.count("__") == 1 and spec.name.startswith(tool + "__")

    @property
    def names_tool_only(self) -> bool:
        return self.specifier is None


def parse_rule(rule: RuleLike) -> ParsedRule:
    """Parse one rule; raises ``ValueError`` with what is wrong."""
    try:
        action = RuleAction(str(rule.action))
    except ValueError:
        raise ValueError(f"unknown rule action {rule.action!r} (use allow, ask or deny)") from None
    match = _PATTERN.match(rule.pattern)
    if match is None or rule.pattern.count("(") != rule.pattern.count(")"):
        raise ValueError(f"rule pattern {rule.pattern!r} is not TOOL or TOOL(SPECIFIER), e.g. shell.exec(git status*)")
    layer = rule.layer
    layer_name = None if layer is None else str(getattr(layer, "value", layer))
    ref = RuleRef(
        action=action,
        pattern=rule.pattern.strip(),
        layer=layer_name,
        file=None if rule.file is None else str(rule.file),
        line=rule.line,
    )
    specifier = match.group("spec")
    if specifier is not None:
        specifier = specifier.strip()
        if specifier.endswith(":*"):  # Claude's prefix form `git status:*`
            specifier = specifier[:-2] + "*"
        if specifier in ("", "*", "**"):
            specifier = None
    tool = match.group("tool")
    arguments = () if specifier is None else parse_conditions(tool, specifier)
    return ParsedRule(ref=ref, tool=tool, specifier=specifier, arguments=arguments)


class NameDenials:
    """The deny rules that name a tool only (no specifier), compiled once: which of them, first in order, hides a
    tool. Rules on names become one regular expression (fnmatch globs and the ``mcp__server`` form, one
    alternative each, tried in rule order); the few whose match depends on more than the name (``plugin:NAME``,
    ``skill``, ``fs.read`` / ``fs.write``) are checked one by one. Same answer as the first deny rule whose
    ``matches_tool`` holds, in one pass over the name instead of one per rule."""

    def __init__(self, rules: list[ParsedRule]) -> None:
        self._rules = [rule for rule in rules if rule.ref.action is RuleAction.DENY and rule.names_tool_only]
        self._special: list[tuple[int, ParsedRule]] = []
        alternatives: list[str] = []
        for index, rule in enumerate(self._rules):
            tool = rule.tool
            if tool.startswith("plugin:"):  # only a plugin's origin decides, never the name
                self._special.append((index, rule))
                continue
            if tool == "skill" or tool in _FAMILIES:
                self._special.append((index, rule))  # the source or the profile may decide; the name still can
            pattern = fnmatch.translate(tool)
            if tool.startswith("mcp__") and tool.count("__") == 1:
                pattern = f"(?:{pattern}|{re.escape(tool + '__')}.*\\Z)"
            alternatives.append(f"(?P<r{index}>{pattern})")
        self._names = re.compile("|".join(alternatives), re.DOTALL) if alternatives else None

    def first(self, spec: ToolSpec) -> RuleRef | None:
        """The first deny rule, in order, that hides ``spec`` whatever its arguments; None when none does."""
        best: int | None = None
        if self._names is not None:
            found = self._names.match(spec.name)
            if found is not None and found.lastgroup is not None:
                best = int(found.lastgroup[1:])
        for index, rule in self._special:
            if best is not None and index >= best:
                break
            if rule.matches_tool(spec):
                best = index
                break
        return None if best is None else self._rules[best].ref


def argument_diagnostics(rules: Iterable[ParsedRule], specs: Iterable[ToolSpec]) -> list[Diagnostic]:
    """Warnings for rules that name arguments the tools they match do not take (a typo: a deny rule that never
    holds), and for named allow rules on tools only their command or path rules vouch for. Rules that match no
    known tool are not judged: the tool may not be listed yet."""
    named = [r for r in rules if r.arguments]
    if not named:
        return []
    tools = list(specs)
    found: list[Diagnostic] = []
    for rule in named:
        matched = [s for s in tools if rule.matches_tool(s)]
        if matched:
            found += (
                Diagnostic(
                    kind="policy_rule",
                    name=rule.ref.pattern,
                    reason=reason,
                    source=rule.ref.file,
                    line=rule.ref.line,
                    hint=hint,
                )
                for reason, hint in _named_problems(rule, matched)
            )
    return found


def _named_problems(rule: ParsedRule, matched: list[ToolSpec]) -> Iterator[tuple[str, str]]:
    """What is wrong with a rule naming arguments, given the tools it matches, and what to do: (reason, hint)."""
    ref, first = rule.ref, matched[0]
    if ref.action == "allow" and all(s.permission.command_arg is not None or s.permission.path_args for s in matched):
        yield (
            f"{ref} names arguments of {first.name}, which is vouched "
            "for by its command or paths: it never allows a call",
            f"write a {'command' if first.permission.command_arg else 'path'} rule instead, e.g. "
            f"{first.name}({'git status*' if first.permission.command_arg else 'src/**'})",
        )
        return
    known = [(s, props) for s in matched if (props := declared_arguments(s)) is not None]
    for condition in rule.arguments:
        if known and not any(condition.name in props for _, props in known):
            spec, props = known[0]
            yield (
                f"{ref} names argument {condition.name!r}, which {spec.name}"
                f" does not take (it takes: {', '.join(sorted(props))})",
                "fix the argument's name: a rule about an argument the call never has holds for no call",
            )


# --- what the gate decided about one call ---------------------------------------------------------------------------


class Verdict(enum.StrEnum):
    ALLOW = "allow"
    ASK = "ask"
    DENY = "deny"


class DecisionSource(enum.StrEnum):
    """Which part of the policy decided."""

    HOOK = "hook"
    RULE = "rule"
    PROTECTED_PATH = "protected_path"
    SANDBOX = "sandbox"
    MODE = "mode"
    """The tool's permission profile against the approval and sandbox policies."""
    SESSION = "session"
    """An approval given earlier in this session."""
    APPROVER = "approver"
    REGISTRY = "registry"
    """The tool is disabled or hidden."""


@dataclass(frozen=True, kw_only=True, slots=True)
class Decision:
    verdict: Verdict
    reason: str
    source: DecisionSource
    rule: RuleRef | None = None
    suggested_rule: str | None = None
    """For ``ask``: the allow rule an "always" answer would persist; None when no rule could skip this ask."""

    @classmethod
    def allow(cls, reason: str, *, source: DecisionSource, rule: RuleRef | None = None) -> "Decision":
        return cls(verdict=Verdict.ALLOW, reason=reason, source=source, rule=rule)

    @classmethod
    def ask(
        cls, reason: str, *, source: DecisionSource, rule: RuleRef | None = None, suggested_rule: str | None = None
    ) -> "Decision":
        return cls(verdict=Verdict.ASK, reason=reason, source=source, rule=rule, suggested_rule=suggested_rule)

    @classmethod
    def deny(cls, reason: str, *, source: DecisionSource, rule: RuleRef | None = None) -> "Decision":
        return cls(verdict=Verdict.DENY, reason=reason, source=source, rule=rule)

    @property
    def where(self) -> str | None:
        """``file:line`` of the deciding rule, when a rule decided."""
        return self.rule.where if self.rule else None

    def to_json(self) -> dict[str, object]:
        rule = self.rule
        return {
            "decision": str(self.verdict),
            "reason": self.reason,
            "source": str(self.source),
            "rule": None if rule is None else {**asdict(rule), "action": str(rule.action)},
            "suggested_rule": self.suggested_rule,
        }
