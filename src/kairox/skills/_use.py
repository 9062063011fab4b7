"""Using a skill (S7): validate its arguments, substitute them into the body, check the tools it needs.

Placeholders (the documented choice):

- ``${name}`` is replaced by the value of the declared argument ``name`` (strings as they are, other values
  as JSON). Only declared names are replaced, so shell text such as ``${HOME}`` in a body stays untouched.
- ``$ARGUMENTS`` is replaced by the free text given with the call, or, without one, by the argument values in
  declared order separated by spaces.
- ``$$`` before either writes it literally (``$${name}`` gives ``${name}``).
- When free text is given and the body has no ``$ARGUMENTS``, it is appended as an ``ARGUMENTS:`` line, so it
  is never silently lost. A skill declaring exactly one argument takes the free text as that argument when
  the argument is not passed by name.
"""

import fnmatch
import json
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from kairox._util._json import JsonObject
from kairox._util._names import suggest
from kairox.config import command_words
from kairox.skills._discovery import bundled_files
from kairox.skills._load import read_body
from kairox.skills._model import SkillArgument, SkillDef
from kairox.skills._registry import SkillError

_PLACEHOLDER = re.compile(r"\$(\$?)(?:\{([A-Za-z_][A-Za-z0-9_-]*)\}|(ARGUMENTS)\b)")

RegisteredTools = Callable[[], Iterable[str]] | Iterable[str]
"""The registry's tool names, or a callable giving them at call time."""


class SkillArgumentsError(SkillError):
    """The arguments of a skill call are wrong; the message lists every problem."""

    def __init__(self, skill: str, problems: list[str]) -> None:
        super().__init__(
            f"skill {skill!r}: bad arguments: " + "; ".join(problems), hint="fix the arguments and call again"
        )
        self.problems = problems


class SkillToolsMissingError(SkillError):
    """A skill needs tools that are not registered."""

    def __init__(self, skill: str, missing: list[str]) -> None:
        super().__init__(
            f"skill {skill!r} needs tools that are not registered: {', '.join(missing)}",
            hint="start the MCP server or enable the plugin that provides them, then load the skill again",
        )
        self.missing = missing


@dataclass(frozen=True, kw_only=True, slots=True)
class LoadedSkill:
    skill: SkillDef
    body: str
    """The body with arguments substituted."""
    arguments: JsonObject
    """The argument values used, defaults applied."""
    files: tuple[str, ...]
    """Files the skill bundles, relative to its folder."""

    def to_json(self) -> JsonObject:
        skill = self.skill
        return {
            "name": skill.qualified_name,
            "path": str(skill.path),
            "folder": str(skill.folder),
            "files": list(self.files),
            "model": skill.model,
            "tools": list(skill.tools),
            "allowed_tools": list(skill.frontmatter.allowed_tools),
            "arguments": self.arguments,
        }

    def text(self) -> str:
        """What the model reads: the body, then where the skill lives and what it bundles."""
        lines = [self.body.rstrip(), "", "---", f"Skill {self.skill.qualified_name!r} from {self.skill.path}"]
        if self.files:
            shown = ", ".join(self.files[:50])
            more = f" (and {len(self.files) - 50} more)" if len(self.files) > 50 else ""
            lines.append(f"Bundled files in {self.skill.folder}: {shown}{more}")
        if self.skill.model:
            lines.append(f"The skill asks for model {self.skill.model!r}.")
        return "\n".join(lines)


def argument_schema(arguments: Iterable[SkillArgument]) -> JsonObject:
    """The JSON schema of a skill's declared arguments (what a UI form is built from)."""
    declared = list(arguments)
    properties: JsonObject = {}
    for argument in declared:
        prop: JsonObject = {"type": argument.type}
        if argument.description:
            prop["description"] = argument.description
        if argument.default is not None:
            prop["default"] = argument.default
        properties[argument.name] = prop
    return {
        "type": "object",
        "properties": properties,
        "required": [a.name for a in declared if a.required],
        "additionalProperties": False,
    }


def resolve_arguments(skill: SkillDef, arguments: Mapping[str, Any] | None, text: str | None) -> JsonObject:
    """Validate ``arguments`` against the declared ones and apply defaults; raises ``SkillArgumentsError``."""
    values: JsonObject = dict(arguments or {})
    declared = {a.name: a for a in skill.arguments}
    if text and len(declared) == 1:
        only = next(iter(declared))
        values.setdefault(only, text)
    problems: list[str] = []
    for name in values:
        if name not in declared:
            guess = suggest(name, declared)
            if not declared:
                problems.append(
                    f"{name!r} is not an argument of this skill (it declares none; pass free text as `text`)"
                )
            else:
                problems.append(
                    f"{name!r} is not an argument of this skill"
                    + (f" (did you mean {guess!r}?)" if guess else f" (it takes {', '.join(declared)})")
                )
    for argument in declared.values():
        if argument.name not in values and argument.default is not None:
            values[argument.name] = argument.default
    # here, not at the top: it costs ~50 ms, and a session loads this module whether a skill is used or not
    import jsonschema

    validator = jsonschema.Draft202012Validator({**argument_schema(declared.values()), "additionalProperties": True})
    for error in sorted(validator.iter_errors(values), key=lambda e: list(e.path)):
        where = ".".join(str(p) for p in error.path)
        problems.append(f"{where}: {error.message}" if where else error.message)
    if problems:
        raise SkillArgumentsError(skill.qualified_name, problems)
    return values


def substitute(body: str, skill: SkillDef, values: Mapping[str, Any], text: str | None, *, append: bool = True) -> str:
    """Replace the placeholders of ``body`` (see the module docstring); ``append=False`` never adds the
    ``ARGUMENTS:`` line (the text was used otherwise)."""
    declared = [a.name for a in skill.arguments]

    def show(value: Any) -> str:
        return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)

    if text:
        all_text = text
    else:
        ordered = [*declared, *(k for k in values if k not in declared)]
        all_text = " ".join(show(values[k]) for k in ordered if k in values and values[k] is not None)
    used_all = False

    def replace(match: re.Match[str]) -> str:
        nonlocal used_all
        escaped, name, whole = match.group(1), match.group(2), match.group(3)
        if escaped:
            return match.group(0)[1:]
        if whole:
            used_all = True
            return all_text
        if name in values and name in declared:
            value = values[name]
            return "" if value is None else show(value)
        return match.group(0)

    result = _PLACEHOLDER.sub(replace, body)
    if text and not used_all and append:
        result = result.rstrip("\n") + f"\n\nARGUMENTS: {text}\n"
    return result


_POSITIONAL = re.compile(r"\$(\$?)([1-9])(?![0-9])")
"""``$1`` ... ``$9`` of a slash command: the words of its text, in order (``$$1`` writes ``$1``)."""


def missing_tools(skill: SkillDef, registered: Iterable[str]) -> list[str]:
    """Declared ``tools`` that no registered tool name (or pattern such as ``mcp__github__*``) satisfies."""
    names = set(registered)
    missing: list[str] = []
    for wanted in skill.tools:
        base = wanted.split("(", 1)[0].strip()
        if base in names:
            continue
        if any(ch in base for ch in "*?[") and any(fnmatch.fnmatchcase(n, base) for n in names):
            continue
        missing.append(wanted)
    return missing


def _checked_body(skill: SkillDef, registered: RegisteredTools | None) -> str:
    if registered is not None:
        names = registered() if callable(registered) else registered
        missing = missing_tools(skill, names)
        if missing:
            raise SkillToolsMissingError(skill.qualified_name, missing)
    try:
        return read_body(skill)
    except OSError as exc:
        raise SkillError(
            f"skill {skill.qualified_name!r}: cannot read {skill.path}: {exc.strerror or exc}",
            hint="`kairox skills list` rescans the skills",
        ) from exc


def command_prompt(skill: SkillDef, text: str = "", *, registered: RegisteredTools | None = None) -> str:
    """What a slash command sends as the user's turn: its body with ``$ARGUMENTS`` (the whole text), ``$1`` ...
    ``$9`` (its words, shell-quoted words kept together; missing ones empty) and declared ``${name}`` replaced.
    Text the body uses nowhere is appended as an ``ARGUMENTS:`` line, as for a skill."""
    text = text.strip()
    values = resolve_arguments(skill, None, text or None)
    body = _checked_body(skill, registered)
    positional = any(not m.group(1) for m in _POSITIONAL.finditer(body))
    words = command_words(text)

    def word(match: re.Match[str]) -> str:
        index = int(match.group(2))
        if match.group(1):
            return f"${index}"
        return words[index - 1] if index <= len(words) else ""

    body = _POSITIONAL.sub(word, body)
    return substitute(body, skill, values, text or None, append=not positional)


def load_skill(
    skill: SkillDef,
    *,
    arguments: Mapping[str, Any] | None = None,
    text: str | None = None,
    registered: RegisteredTools | None = None,
) -> LoadedSkill:
    """Everything using a skill needs, or a ``SkillError`` that says what is wrong."""
    values = resolve_arguments(skill, arguments, text)
    body = _checked_body(skill, registered)
    return LoadedSkill(
        skill=skill, body=substitute(body, skill, values, text), arguments=values, files=tuple(bundled_files(skill))
    )
