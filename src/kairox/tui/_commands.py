"""Slash commands: the TUI's own (``BUILTINS``) and the extensions' commands, which are the user-invocable skills
of the session's skill registry: a plugin's ``commands/`` (``/plugin:command``, and ``/command`` when no other
command has that name), the workspace's ``.kairox/commands`` and, with ``skills.compat_dirs``,
``.claude/commands``, and the skills themselves. Running one of those sends its prompt as the user's turn.

A built-in command is one line in ``BUILTINS`` and a ``cmd_<name>(args)`` method of the app (``-`` in a name
becomes ``_``)."""

from typing import TYPE_CHECKING

from kairox.runtime import SlashCommand, extension_commands

if TYPE_CHECKING:
    from kairox.skills import SkillRegistry

BUILTINS: dict[str, tuple[str, str]] = {
    "help": ("", "every command, built-in and from extensions"),
    "mcp": ("", "MCP servers: details, stderr, restart, enable/disable, tools"),
    "skills": ("", "skills by scope, shadowing, enable/disable"),
    "plugins": ("", "plugins: inventory, contributions, compatibility, trust"),
    "hooks": ("", "configured hooks and plugin hooks"),
    "agents": ("", "the subagents the task tool starts, enable/disable"),
    "tools": ("[QUERY]", "what the model sees, and why others are hidden; with a query, the tool search"),
    "doctor": ("", "what failed to load and what to do"),
    "config": ("", "the effective configuration with provenance"),
    "trust": ("", "the workspace's trust state"),
    "model": ("[PROVIDER/]NAME", "switch the model for this session; alone, the current one and the choices"),
    "trace": ("errors | NAME | all", "filter the event trace"),
    "clear": ("", "clear the conversation (the transcript keeps it)"),
    "compact": ("[WHAT TO KEEP]", "summarise older turns to free the context window"),
    "resume": ("[ID]", "pick an earlier session of this workspace and continue it"),
    "rewind": ("[TURN]", "put back the files a turn changed (the latest by default), and the conversation if asked"),
    "quit": ("", "leave"),
}
"""``name -> (argument hint, one line)`` of the TUI's own commands, in the order /help lists them."""


def all_commands(skills: "SkillRegistry | None") -> list[SlashCommand]:
    builtins = [
        SlashCommand(name=n, argument_hint=h, description=d, source="built-in") for n, (h, d) in BUILTINS.items()
    ]
    return builtins + sorted(extension_commands(skills, BUILTINS), key=lambda c: c.name)


def find_command(name: str, skills: "SkillRegistry | None") -> SlashCommand | None:
    """The command ``/name`` runs (``name`` without the slash), or ``None``."""
    return next((c for c in all_commands(skills) if c.name == name), None)


def unknown_reason(name: str, skills: "SkillRegistry | None") -> str:
    """Why ``/name`` runs nothing: a command waiting for trust or turned off says so; else the close names."""
    from kairox._util._names import suggest

    entry = skills.get(name) if skills is not None else None
    if entry is not None and not entry.enabled:
        return f"/{name} is turned off in the configuration; /skills turns it on"
    if entry is not None and not entry.skill.frontmatter.user_invocable:
        return f"/{name} is a skill for the model only (user-invocable: false)"
    if entry is not None:
        return f"/{name} comes from the workspace, which is not trusted; run `kairox trust` in it, then restart"
    entries = skills.entries() if skills is not None and ":" not in name else []
    plugins = sorted(f"/{e.skill.qualified_name}" for e in entries if e.skill.plugin and e.skill.name == name)
    if len(plugins) > 1:
        return f"/{name} is ambiguous: {', '.join(plugins)}"
    guess = suggest(name, [c.name for c in all_commands(skills)])
    return f"unknown command /{name}" + (f"; did you mean /{guess}?" if guess else "") + "; /help lists every command"


def help_text(skills: "SkillRegistry | None") -> str:
    """/help: every command with its one line, the built-in ones first, then the extensions' by source."""
    commands = all_commands(skills)
    width = min(40, max(len(c.usage) for c in commands))
    lines = ["Built-in commands", ""]
    lines += [f"  {c.usage:<{width}}  {c.description}" for c in commands if c.skill is None]
    extensions = [c for c in commands if c.skill is not None and c.name == c.skill]
    short = {c.skill: c.name for c in commands if c.skill is not None and c.name != c.skill}
    lines += [
        "",
        f"From extensions ({len(extensions)}): the command's prompt "
        "is sent as your turn, words after it as its arguments",
        "",
    ]
    if not extensions:
        lines.append("  none: plugins' commands/, .kairox/commands/*.md and skills appear here")
    lines += [
        f"  {c.usage:<{width}}  {c.description}  [{c.source}"
        + (f"; also /{short[c.name]}]" if c.name in short else "]")
        for c in extensions
    ]
    lines += [
        "",
        "Keys: Enter sends · Ctrl+J new line · Tab completes / and @file "
        "· Esc back to the prompt · Ctrl+O tool calls · Ctrl+C cancels",
    ]
    return "\n".join(lines)
