"""Plugin hooks in both forms: Kairox's manifest list and Claude Code's ``hooks/hooks.json`` (H1).

The result is data (``PluginHook``); the hook registry runs them. ``[]``, ``{}`` and other malformed hook
files become one diagnostic each, never silence.
"""

import os
import shlex
from collections import Counter
from pathlib import Path
from typing import Any

from kairox.config import command_words
from kairox.errors import Diagnostic, ExtensionLoadFailure, Severity
from kairox.plugins._manifest import HookDeclaration
from kairox.plugins._model import PluginHook
from kairox.plugins._paths import climbing_root_paths, expand_plugin_root, is_inside

HOOK_EVENTS = (
    "session_start",
    "session_end",
    "user_prompt_submit",
    "pre_turn",
    "post_turn",
    "pre_tool_use",
    "post_tool_use",
    "pre_compact",
    "subagent_start",
    "subagent_stop",
)

EVENT_ALIASES = {
    "SessionStart": "session_start",
    "SessionEnd": "session_end",
    "UserPromptSubmit": "user_prompt_submit",
    "PreToolUse": "pre_tool_use",
    "PostToolUse": "post_tool_use",
    "Stop": "post_turn",
    "sessionStart": "session_start",
    "sessionEnd": "session_end",
    "userPromptSubmit": "user_prompt_submit",
    "preToolUse": "pre_tool_use",
    "postToolUse": "post_tool_use",
    "preTurn": "pre_turn",
    "postTurn": "post_turn",
    "PreTurn": "pre_turn",
    "PostTurn": "post_turn",
    "PreCompact": "pre_compact",
    "preCompact": "pre_compact",
    "SubagentStart": "subagent_start",
    "SubagentStop": "subagent_stop",
}
"""Claude Code's (and camelCase) event names; ``Stop`` fires when a turn ends."""

DEFAULT_TIMEOUT_SEC = 60.0

_INTERPRETERS = {
    ".js": "node",
    ".mjs": "node",
    ".cjs": "node",
    ".py": "python3",
    ".sh": "sh",
    ".bash": "bash",
    ".ts": "npx tsx",
}


def canonical_event(name: str) -> str | None:
    """``pre_tool_use`` for ``pre_tool_use``, ``PreToolUse`` or ``preToolUse``; None when Kairox has no such event."""
    if name in HOOK_EVENTS:
        return name
    return EVENT_ALIASES.get(name)


def script_command(script: str, root: Path) -> str:
    """The command that runs a manifest ``script``: by its interpreter, or directly when it has none."""
    path = expand_plugin_root(script, root)
    if not Path(path).is_absolute():
        path = str(root / path)
    interpreter = _INTERPRETERS.get(Path(path).suffix)
    return f"{interpreter} {shlex.quote(path)}" if interpreter else shlex.quote(path)


def referenced_files(command: str, root: Path) -> tuple[tuple[Path, ...], list[str]]:
    """Files inside ``root`` that a command names: the existing ones, and the missing ones as text."""
    found: list[Path] = []
    missing: list[str] = []
    base = Path(os.path.abspath(root))
    for word in command_words(command):
        if "/" not in word or word.startswith("-") or "://" in word:
            continue
        candidate = Path(os.path.normpath(word if os.path.isabs(word) else base / word))
        if not is_inside(candidate, base):
            continue
        if candidate.is_file():
            found.append(candidate.resolve())
        else:
            missing.append(word)
    return tuple(found), missing


class _Collector:
    def __init__(self, *, plugin: str, trust: str, root: Path, source: str) -> None:
        self.plugin, self.trust, self.root, self.source = plugin, trust, root, source
        self.hooks: list[tuple[str, str, str | None, float]] = []
        self.diagnostics: list[Diagnostic] = []

    def warn(self, reason: str, *, severity: Severity = Severity.WARNING, hint: str | None = None) -> None:
        self.diagnostics.append(
            Diagnostic(kind="hook", name=self.plugin, reason=reason, severity=severity, source=self.source, hint=hint)
        )

    def fail(self, reason: str, hint: str | None = None) -> None:
        self.diagnostics.append(
            ExtensionLoadFailure(kind="hook", name=self.plugin, reason=reason, source=self.source, hint=hint)
        )

    def add(self, event_name: str, command: str, matcher: str | None, timeout: float | None, *, where: str) -> None:
        climbing = climbing_root_paths(command, self.root)
        if climbing:
            self.fail(f"{where} names {climbing[0]!r}, outside the plugin folder; the hook is skipped")
            return
        event = canonical_event(event_name)
        if event is None:
            self.warn(
                f"event {event_name!r} is not supported by Kairox; its hooks are skipped",
                hint=f"Kairox's events: {', '.join(HOOK_EVENTS)}",
            )
            return
        self.hooks.append(
            (event, expand_plugin_root(command, self.root), matcher or None, timeout or DEFAULT_TIMEOUT_SEC)
        )


def _claude_table(collector: _Collector, table: dict[str, Any]) -> None:
    for event_name, groups in table.items():
        if not isinstance(groups, list):
            collector.fail(f"hooks.{event_name} must be a list of matcher groups, not {type(groups).__name__}")
            continue
        for index, group in enumerate(groups):
            where = f"hooks.{event_name}[{index}]"
            if not isinstance(group, dict) or not isinstance(group.get("hooks"), list):
                collector.fail(f'{where} must be an object with a "hooks" list')
                continue
            matcher = group.get("matcher")
            if matcher is not None and not isinstance(matcher, str):
                collector.fail(f"{where}.matcher must be a string")
                continue
            for position, hook in enumerate(group["hooks"]):
                spot = f"{where}.hooks[{position}]"
                if not isinstance(hook, dict):
                    collector.fail(f"{spot} must be an object")
                    continue
                kind = hook.get("type", "command")
                if kind != "command":
                    collector.warn(f"{spot}: hooks of type {kind!r} are not supported; only command hooks run")
                    continue
                command, timeout = hook.get("command"), hook.get("timeout")
                if not isinstance(command, str) or not command.strip():
                    collector.fail(f"{spot} has no command")
                    continue
                if timeout is not None and (not isinstance(timeout, int | float) or timeout <= 0):
                    collector.fail(f"{spot}.timeout must be a positive number of seconds")
                    continue
                collector.add(event_name, command, matcher, float(timeout) if timeout else None, where=spot)


def parse_hooks(
    data: Any, *, plugin: str, trust: str, root: Path, source: str, inline: bool = False
) -> tuple[list[PluginHook], list[Diagnostic]]:
    """Hooks from a decoded ``hooks.json`` / inline ``hooks`` object, or the Kairox list form.

    An empty hooks file is an error (it was meant to hold hooks); an empty inline object in a manifest is a
    warning.
    """
    collector = _Collector(plugin=plugin, trust=trust, root=root, source=source)
    if isinstance(data, list):
        if not data and inline:
            collector.warn('the manifest\'s "hooks" list is empty; it declares no hooks')
        elif not data:
            collector.fail(
                "the hooks file is an empty list ([]); it declares no hooks",
                hint='write {"hooks": {"PreToolUse": [...]}} or remove the file',
            )
        for index, item in enumerate(data):
            if not isinstance(item, dict):
                collector.fail(f'hooks[{index}] must be an object with "event" and "command" or "script"')
                continue
            try:
                declaration = HookDeclaration.model_validate(item)
            except Exception as exc:
                collector.fail(f"hooks[{index}]: {exc}".splitlines()[0])
                continue
            if declaration.command:
                command = declaration.command
            elif declaration.script:
                if climbing_root_paths(declaration.script, root):
                    collector.fail(
                        f"hooks[{index}] names {declaration.script!r}, outside the plugin folder; the hook is skipped"
                    )
                    continue
                command = script_command(declaration.script, root)
            else:
                collector.fail(f'hooks[{index}] needs "command" or "script"')
                continue
            collector.add(declaration.event, command, declaration.matcher, declaration.timeout, where=f"hooks[{index}]")
    elif isinstance(data, dict):
        table = data.get("hooks", data)
        if not isinstance(table, dict):
            collector.fail(f'"hooks" must be an object of events, not {type(table).__name__}')
        else:
            table = {k: v for k, v in table.items() if k not in ("description", "$schema", "version")}
            if not table:
                hint = 'add events such as {"hooks": {"PreToolUse": [...]}} or remove it'
                if inline:
                    collector.warn('the manifest\'s "hooks" object is empty; it declares no hooks', hint=hint)
                else:
                    collector.fail("the hooks file declares no hooks (an empty object)", hint=hint)
            _claude_table(collector, table)
    else:
        collector.fail(f"hooks must be a JSON object or list, not {type(data).__name__}")
    hooks = _finish(collector)
    return hooks, collector.diagnostics


def _finish(collector: _Collector) -> list[PluginHook]:
    totals = Counter(event for event, *_ in collector.hooks)
    seen: Counter[str] = Counter()
    hooks: list[PluginHook] = []
    for event, command, matcher, timeout in collector.hooks:
        seen[event] += 1
        name = event if totals[event] == 1 else f"{event}.{seen[event]}"
        scripts, missing = referenced_files(command, collector.root)
        for word in missing:
            collector.warn(f"hook {name} runs {word!r}, which is missing from the plugin; it will fail when it fires")
        hooks.append(
            PluginHook(
                event=event,
                command=command,
                matcher=matcher,
                timeout_sec=timeout,
                plugin=collector.plugin,
                trust=collector.trust,
                plugin_root=collector.root,
                source=collector.source,
                name=name,
                scripts=scripts,
            )
        )
    return hooks
