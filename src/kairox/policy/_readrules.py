"""Which paths the rules on reading hide from confined processes: every ``fs.read`` deny and ask rule that names a
path (a command cannot be asked about mid-run, so ask rules hide as deny rules do). The policy names them; the host
finds them on disk when a process starts (``kairox.sandbox.ReadMask``)."""

from pathlib import Path

from kairox._util._pathglob import PathPattern
from kairox.policy._host import HostFacts, ReadMaskLike, host_files
from kairox.policy._paths import parse_pattern
from kairox.policy._rules import RuleAction, RuleLike, RuleRef, parse_rule


def read_patterns(
    rules: tuple[RuleLike, ...], *, workspace: Path, home: Path, host: HostFacts | None = None
) -> tuple[tuple[PathPattern, RuleRef], ...]:
    """The path patterns of the ``fs.read`` deny and ask rules, each with its rule (the first that names it)."""
    patterns: dict[PathPattern, RuleRef] = {}
    for rule in rules:
        try:
            parsed = parse_rule(rule)
        except ValueError:
            continue  # the engine reports it
        if parsed.tool == "fs.read" and parsed.specifier is not None and parsed.ref.action is not RuleAction.ALLOW:
            patterns.setdefault(parse_pattern(parsed.specifier, base=workspace, home=home, host=host), parsed.ref)
    return tuple(patterns.items())


def read_mask(
    rules: tuple[RuleLike, ...],
    *,
    workspace: Path,
    home: Path,
    roots: tuple[Path, ...] = (),
    host: HostFacts | None = None,
) -> ReadMaskLike | None:
    """What the rules on reading hide, as a function the host runs when each command starts; None when no
    ``fs.read`` deny or ask rule names a path (the common case: nothing to work out)."""
    host = host or host_files()
    patterns = read_patterns(rules, workspace=workspace, home=home, host=host)
    if not patterns:
        return None
    return host.read_mask(patterns, workspace=workspace, roots=roots)
