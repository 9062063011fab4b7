"""Rules on argument values: ``mcp__db__query(SELECT*)`` and the form that names the arguments it is about,
``mcp__db__query(.sql=SELECT*, .limit=*)``.

A condition is ``.NAME=GLOB``: the leading dot keeps it apart from every pattern written before (a command, a path
or a value glob does not start with ``.word=``). Conditions are joined by ``,`` before the next ``.NAME=``; a value
that holds ``, .x=`` itself is written with ``[,]``.

What a rule on values covers:

Object keys are values too: ``{"sql": "SELECT 1", "DROP TABLE users": 1}`` holds the text ``DROP TABLE users``.

- deny and ask, unnamed: any string of the call, at any depth, keys included (the arguments' own names too); named:
  every condition holds, a condition holding when any value below its argument (a string, a key, a number,
  ``true``/``false``/``null`` as JSON writes them) matches;
- allow, named: the call's arguments are exactly the ones named, each matching all through (a text, a number, a
  flag, or a non-empty list of those; ``*`` for anything, an object too); an argument the rule does not name is
  something it cannot vouch for. A text the policy reads as a path (``path``, ``target``, a ``file:`` URI) matches
  as a path;
- allow, unnamed: every value of the call, at any depth, matches, and so does every key inside an argument's value;
  an empty list or object is something it did not look at, so it does not vouch for the call. A harmless value
  elsewhere in the call, or a flag, a key or an empty container next to it, must not carry what the rule never
  looked at. The names of the parameters the tool's schema declares are not values an allow rule matches (the
  named form says exactly which parameters it vouches for); any other top-level name is a value like the rest.
"""

import fnmatch
import json
import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from kairox.tools import ToolSpec

_NAME = r"[A-Za-z0-9_$-]+"
_CONDITION = re.compile(rf"\.(?P<name>{_NAME})\s*=(?P<glob>.*)", re.DOTALL)
_STARTS_NAMED = re.compile(rf"\.{_NAME}\s*=")
_NESTED_NAME = re.compile(rf"\.{_NAME}(?:\.{_NAME})+\s*=")
_NEXT = re.compile(rf"\s*,\s*(?=\.{_NAME}\s*=)")
_PATH_TOOLS = frozenset({"fs.read", "fs.write"})


@dataclass(frozen=True, slots=True)
class ArgumentCondition:
    """``.NAME=GLOB`` of a rule: the argument it is about and what its values must match."""

    name: str
    glob: str

    def __str__(self) -> str:
        return f".{self.name}={self.glob}"


def parse_conditions(tool: str, specifier: str) -> tuple[ArgumentCondition, ...]:
    """The conditions of a specifier written as ``.NAME=GLOB, ...``; () for any other specifier (a command, a path or
    a value glob). Raises ``ValueError`` for a spelling that looks named but is not one this grammar reads."""
    if _NESTED_NAME.match(specifier):
        raise ValueError(
            f"{specifier!r} names an argument inside another; name the top-level argument (.options=...): "
            "deny and ask rules see every value below it"
        )
    if not _STARTS_NAMED.match(specifier):
        return ()
    if tool in _PATH_TOOLS:
        raise ValueError(f"{tool} rules take a path glob such as {tool}(src/**), not named arguments")
    conditions: list[ArgumentCondition] = []
    for part in _NEXT.split(specifier):
        match = _CONDITION.fullmatch(part.strip())
        if match is None:  # unreachable by the split, kept as a guard
            raise ValueError(f"{part!r} is not .NAME=GLOB")
        glob = match.group("glob").strip()
        if glob.endswith(":*"):  # Claude's prefix form, as for a whole specifier
            glob = glob[:-2] + "*"
        name = match.group("name")
        if any(c.name == name for c in conditions):
            raise ValueError(f"argument {name!r} is named twice in {specifier!r}")
        conditions.append(ArgumentCondition(name=name, glob=glob))
    return tuple(conditions)


def value_text(value: Any) -> str:
    """A scalar as a glob sees it: a string as it is, anything else as JSON writes it (``5``, ``true``, ``null``)."""
    return value if isinstance(value, str) else json.dumps(value)


def scalars(value: Any) -> Iterator[Any]:
    """Every scalar at any depth of ``value`` (a string, number, boolean or null), in order, an object's keys too
    (each before its value)."""
    stack: list[Any] = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            for key, inner in reversed(item.items()):
                stack += (inner, str(key))
        elif isinstance(item, list):
            stack.extend(reversed(item))
        else:
            yield item


def every_string(arguments: Mapping[str, Any]) -> Iterator[str]:
    """Every string of a call at any depth, the arguments' names and every key included: what a deny or ask rule on
    values is matched against."""
    for item in scalars(dict(arguments)):
        if isinstance(item, str):
            yield item


def _unmatched(value: Any, glob: str) -> str | None:
    """What in an argument's value an unnamed allow rule did not match (a value, a key, an empty list or object),
    or None when it matched all of it."""
    stack: list[Any] = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, dict | list) and not item:
            return f"an empty {'object' if isinstance(item, dict) else 'list'}, which the rule cannot match"
        if isinstance(item, dict):
            for key, inner in item.items():
                if not fnmatch.fnmatchcase(str(key), glob):
                    return f"a key that does not match {glob!r}"
                stack.append(inner)
        elif isinstance(item, list):
            stack.extend(item)
        elif not fnmatch.fnmatchcase(value_text(item), glob):
            return f"a value that does not match {glob!r}"
    return None


PathMatch = Callable[[str, str, str], bool | None]
"""``(argument, text, glob)``: None when the text names no path (by the argument's name or as a ``file:`` URI), else
whether every path it names (for an allow rule; any path, for a deny or ask rule) is inside the glob read as a path
pattern (``..`` folded, symlinks followed)."""


def no_path(argument: str, text: str, glob: str) -> None:
    """The path match of a call that names no path: its texts are matched as written only."""
    return None


def refusal_matches(
    conditions: tuple[ArgumentCondition, ...], arguments: Mapping[str, Any], path_match: PathMatch = no_path
) -> bool:
    """A named deny or ask rule: every condition's argument is in the call and holds a matching value somewhere; a
    text the policy reads as a path matches as written or as the path it names (``//etc/passwd``, ``file:///etc/x``
    and ``src/../../etc/x`` are in ``/etc/*``)."""
    return all(
        c.name in arguments and any(_refuses(c.name, v, c.glob, path_match) for v in scalars(arguments[c.name]))
        for c in conditions
    )


def _refuses(name: str, value: Any, glob: str, path_match: PathMatch) -> bool:
    return fnmatch.fnmatchcase(value_text(value), glob) or (
        isinstance(value, str) and path_match(name, value, glob) is True
    )


def allow_miss(
    conditions: tuple[ArgumentCondition, ...], arguments: Mapping[str, Any], path_match: PathMatch
) -> str | None:
    """Why a named allow rule does not vouch for these arguments, or None when it does."""
    named = {c.name for c in conditions}
    for name in arguments:
        if name not in named:
            return f"argument {name!r} is not named by it (add .{name}=GLOB to it to vouch for its values)"
    for condition in conditions:
        if condition.name not in arguments:
            return f"argument {condition.name!r} is not in the call"
        if not _vouches(condition.name, arguments[condition.name], condition.glob, path_match):
            return f"argument {condition.name!r} does not match {condition.glob!r} all through"
    return None


def _vouches(name: str, value: Any, glob: str, path_match: PathMatch) -> bool:
    if glob == "*":  # the rule says any value will do: an object's too
        return True
    if isinstance(value, dict):
        return False
    if isinstance(value, list):
        return bool(value) and all(
            not isinstance(v, list | dict) and _scalar_vouches(name, v, glob, path_match) for v in value
        )
    return _scalar_vouches(name, value, glob, path_match)


def _scalar_vouches(name: str, value: Any, glob: str, path_match: PathMatch) -> bool:
    # a path compares as a path: `src/*` as text would also match `src/../../etc/passwd`
    inside = path_match(name, value, glob) if isinstance(value, str) else None
    return fnmatch.fnmatchcase(value_text(value), glob) if inside is None else inside


def unnamed_allow_miss(glob: str, arguments: Mapping[str, Any], declared: frozenset[str] | None) -> str | None:
    """Why an unnamed allow rule on values does not vouch for these arguments (not every value and key inside them
    matches, or one holds an empty list or object), or None. ``declared``: the parameters the tool's schema names
    (:func:`declared_arguments`); any other top-level name is a value like the rest, which the glob must match."""
    for name, value in arguments.items():
        what = _unmatched(value, glob)
        if what is not None:
            return f"argument {name!r} holds {what}"
        if (declared is None or name not in declared) and not fnmatch.fnmatchcase(name, glob):
            return f"argument {name!r}, which the tool does not declare, does not match"
    return None if arguments else "the call has no value for it to match"


def named_suggestion(tool: str, glob: str, arguments: Mapping[str, Any]) -> str:
    """How to write an unnamed allow rule with its arguments named, for this call: the arguments whose values
    match it keep its glob, the others get ``GLOB`` to fill in."""
    parts = []
    for name, value in arguments.items():
        matched = any(isinstance(v, str) and fnmatch.fnmatchcase(v, glob) for v in scalars(value))
        parts.append(f".{name}={glob if matched else 'GLOB'}")
    return f"{tool}({', '.join(parts)})"


def describe_values(tool: str, specifier: str, conditions: tuple[ArgumentCondition, ...]) -> str:
    """What an allow rule on values lets through, in words."""
    if not conditions:
        return f"every call of {tool} whose every value, also inside lists and objects, matches {specifier!r}"
    names = ", ".join(repr(c.name) for c in conditions)
    each = "; ".join(f"{c.name} matching {c.glob!r}" for c in conditions)
    return f"every call of {tool} whose arguments are exactly {names}: {each}"


def declared_arguments(spec: ToolSpec) -> frozenset[str] | None:
    """The argument names a tool's input schema declares, or None when it declares none (any name may be valid)."""
    properties = spec.input_schema.get("properties")
    return frozenset(properties) if isinstance(properties, dict) and properties else None
