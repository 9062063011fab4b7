"""Hook events (H1), what a hook is, and what one run of it said."""

import enum
import fnmatch
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from kairox._util._json import JsonObject
from kairox.errors import Diagnostic
from kairox.tools import HookDecision


class HookEvent(enum.StrEnum):
    SESSION_START = "session_start"
    SESSION_END = "session_end"
    USER_PROMPT_SUBMIT = "user_prompt_submit"
    PRE_TURN = "pre_turn"
    POST_TURN = "post_turn"
    PRE_COMPACT = "pre_compact"
    PRE_TOOL_USE = "pre_tool_use"
    POST_TOOL_USE = "post_tool_use"
    SUBAGENT_START = "subagent_start"
    SUBAGENT_STOP = "subagent_stop"

    @property
    def claude_name(self) -> str:
        """The name Claude Code gives the event (hook scripts written for it read ``hook_event_name``): ours in
        PascalCase, but ``Stop`` for ``post_turn``."""
        return "Stop" if self is HookEvent.POST_TURN else self.title().replace("_", "")

    @classmethod
    def parse(cls, name: str) -> "HookEvent | None":
        """``pre_tool_use``, ``PreToolUse`` or ``preToolUse``; None for an event Kairox does not have."""
        snake = re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()
        if snake in cls._value2member_map_:
            return cls(snake)
        return _ALIASES.get(name)


_ALIASES = {"Stop": HookEvent.POST_TURN, "stop": HookEvent.POST_TURN}

TOOL_EVENTS = frozenset({HookEvent.PRE_TOOL_USE, HookEvent.POST_TOOL_USE})

CLAUDE_TOOL_NAMES = {
    "shell.exec": ("Bash",),
    "fs.write": ("Write",),
    "fs.edit": ("Edit", "MultiEdit"),
    "fs.read": ("Read",),
    "fs.list": ("LS", "Glob"),
    "search.ripgrep": ("Grep",),
}
"""Claude Code's names of the built-in tools, so matchers such as ``Edit|Write`` keep working."""


def matches(matcher: str | None, subject: str | None) -> bool:
    """Whether a hook's matcher covers ``subject`` (a tool name, or a session-start source).

    A matcher is a ``|``-separated list of globs (``fs.write``, ``mcp__github__*``), or a regular expression
    (``^Edit$``, ``Notebook.*``); Claude Code's tool names match the corresponding built-ins.
    """
    if not matcher or matcher.strip() in ("*", ""):
        return True
    if subject is None:
        return True
    names = (subject, *CLAUDE_TOOL_NAMES.get(subject, ()))
    alternatives = [a.strip() for a in matcher.split("|")]
    if any(fnmatch.fnmatchcase(name, a) for name in names for a in alternatives if a):
        return True
    try:
        pattern = re.compile(matcher)
    except re.error:
        return False
    return any(pattern.fullmatch(name) for name in names)


@dataclass(frozen=True, kw_only=True, slots=True)
class HookSpec:
    """One command hook, from ``[hooks]`` in kairox.toml or from a plugin."""

    event: HookEvent
    command: str
    matcher: str | None = None
    timeout_sec: float = 60.0
    name: str = ""
    """A stable name: ``config:pre_tool_use.1`` or ``<plugin>:<hook name>``."""
    plugin: str | None = None
    trust: str | None = None
    """The plugin's trust level; hooks of non-``local`` plugins run only after approval."""
    plugin_root: Path | None = None
    source: str | None = None
    """The file that declares it."""
    scripts: tuple[Path, ...] = ()
    """Plugin files the command runs; part of the approval hash."""
    fail_open: bool = False
    """A ``pre_tool_use`` hook that times out or cannot start lets the call go on (else it blocks it)."""

    @property
    def needs_approval(self) -> bool:
        return self.plugin is not None and self.trust != "local"

    def to_json(self) -> dict[str, object]:
        """The hook as shown to people and pipes: its command with secrets redacted, as ``config show`` does."""
        from kairox.config import redact_command

        return {
            "name": self.name,
            "event": str(self.event),
            "matcher": self.matcher,
            "command": redact_command(self.command),
            "timeout_sec": self.timeout_sec,
            "plugin": self.plugin,
            "trust": self.trust,
            "source": self.source,
            "needs_approval": self.needs_approval,
        }


class PluginHookLike(Protocol):
    """What a plugin hook entry carries (``kairox.plugins.PluginHook`` has this shape)."""

    @property
    def event(self) -> str: ...
    @property
    def command(self) -> str: ...
    @property
    def matcher(self) -> str | None: ...
    @property
    def timeout_sec(self) -> float: ...
    @property
    def plugin(self) -> str: ...
    @property
    def trust(self) -> str: ...
    @property
    def plugin_root(self) -> Path: ...
    @property
    def source(self) -> str: ...
    @property
    def name(self) -> str: ...
    @property
    def scripts(self) -> tuple[Path, ...]: ...


@dataclass(frozen=True, kw_only=True, slots=True)
class HookResult:
    """What one run of one hook said."""

    hook: HookSpec
    exit_code: int | None
    decision: HookDecision | None = None
    reason: str | None = None
    additional_context: str | None = None
    updated_input: JsonObject | None = None
    stop: bool = False
    """The hook asked to stop (``continue: false``, or exit code 2 on a non-tool event)."""
    diagnostic: Diagnostic | None = None
    skipped: bool = False
    """The hook did not run (not approved, no sandbox)."""


@dataclass(frozen=True, kw_only=True, slots=True)
class HookOutcome:
    """The combined word of every hook that ran for one event (deny beats ask beats allow)."""

    event: HookEvent
    decision: HookDecision | None = None
    reason: str | None = None
    additional_context: str | None = None
    updated_input: JsonObject | None = None
    stop: bool = False
    results: tuple[HookResult, ...] = ()
    diagnostics: tuple[Diagnostic, ...] = field(default=())

    @property
    def blocked(self) -> bool:
        return self.stop or self.decision is HookDecision.DENY
