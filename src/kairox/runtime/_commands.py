"""The extensions' slash commands, as every front end lists and runs them: the user-invocable skills of the
session's skill registry (a plugin's ``commands/`` as ``/plugin:command``, and ``/command`` when no other command
has that name; the workspace's ``.kairox/commands``; the skills themselves). Running one sends its prompt
(``kairox.skills.command_prompt``) as the user's turn."""

from collections.abc import Iterable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from kairox.skills import SkillEntry, SkillRegistry


@dataclass(frozen=True, kw_only=True, slots=True)
class SlashCommand:
    name: str
    """Without the slash: ``help``, ``commit-commands:commit``, ``commit``."""
    description: str
    source: str
    """``built-in``, ``plugin NAME``, ``workspace``, ``user`` or ``session``."""
    argument_hint: str = ""
    skill: str | None = None
    """The qualified skill name an extension command runs; ``None`` for a built-in."""

    @property
    def usage(self) -> str:
        return f"/{self.name}" + (f" {self.argument_hint}" if self.argument_hint else "")


def _source(entry: "SkillEntry") -> str:
    skill = entry.skill
    return f"plugin {skill.plugin}" if skill.plugin else str(skill.scope)


def _invocable(entry: "SkillEntry") -> bool:
    """Enabled, meant for a person (``user-invocable``), and not waiting for workspace trust."""
    return entry.enabled and entry.skill.frontmatter.user_invocable and not entry.held_by_trust


def extension_commands(skills: "SkillRegistry | None", builtins: Iterable[str] = ()) -> list[SlashCommand]:
    """The extensions' commands by qualified name, then the short ``/command`` of a plugin command no other
    command (or one of the front end's ``builtins``) is named like."""
    if skills is None:
        return []
    entries = [e for e in skills.entries() if _invocable(e)]
    found = [
        SlashCommand(
            name=e.skill.qualified_name,
            description=e.skill.description.splitlines()[0] if e.skill.description else "",
            source=_source(e),
            argument_hint=e.skill.frontmatter.argument_hint or "",
            skill=e.skill.qualified_name,
        )
        for e in entries
    ]
    taken = {c.name for c in found} | set(builtins)
    short: dict[str, list[SlashCommand]] = {}
    for command, entry in zip(found, entries, strict=True):
        if entry.skill.plugin:
            short.setdefault(entry.skill.name, []).append(command)
    for name, commands in short.items():
        if len(commands) == 1 and name not in taken:
            found.append(replace(commands[0], name=name))
    return found
