"""Subagents as files (A3): Claude's ``agents/*.md`` (YAML frontmatter; the body is the system prompt) and Codex's
``agents/*.toml`` (``developer_instructions``), from the workspace, the user's folders and the enabled plugins
(``<plugin>:<agent>``). The first source that names an agent wins and shadows the others; a broken file is a
diagnostic and the others still load. What a subagent may do is decided when it runs (``kairox.agent``)."""

import fnmatch
import os
import re
import tomllib
from collections.abc import Iterator
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml

from kairox.config import McpServerConfig, ResolvedConfig, mcp_server_config
from kairox.errors import Diagnostic, Severity

if TYPE_CHECKING:
    from kairox.plugins import PluginSet

GENERAL_PURPOSE = "general-purpose"
_KNOWN = {"name", "description", "tools", "disallowedTools", "disallowed_tools", "model", "maxTurns", "max_turns"}
_KNOWN |= {"mcpServers", "mcp_servers", "skills", "color", "developer_instructions"}
_MORE_CLAUDE_NAMES = {"Task": "task", "Agent": "task", "Skill": "skill", "WebFetch": "web.fetch"}


@dataclass(frozen=True, kw_only=True, slots=True)
class AgentDef:
    """One agent a ``task`` call can start."""

    name: str
    """What ``subagent_type`` names: ``reviewer``, or ``<plugin>:<agent>``."""
    description: str
    prompt: str
    """Its system prompt: the file's body (Codex: ``developer_instructions``)."""
    source: str
    """``builtin``, ``session``, ``workspace``, ``user`` or ``plugin:<name>``."""
    path: Path | None = None
    tools: tuple[str, ...] | None = None
    """Tool names or globs it may use (Claude's names mapped to Kairox's); None: every tool of its parent."""
    disallowed: tuple[str, ...] = ()
    plugin_tools: tuple[str, ...] | None = None
    """What its plugin's manifest lets its agents use (``permissions.tools``, names or globs); None: no limit."""
    model: str | None = None
    """A model name or alias (``sonnet``); None (``inherit``): the parent's."""
    max_turns: int | None = None
    mcp_servers: dict[str, McpServerConfig] = field(default_factory=dict)
    """Its own servers, declared inline: started for each run of it, seen by it alone."""
    server_names: tuple[str, ...] = ()
    """Configured servers it names: their tools (the parent's) are its too."""
    skills: tuple[str, ...] = ()
    """Skills whose instructions join its system prompt."""
    color: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    """Keys Kairox does not use, kept as written."""
    held: str | None = None
    """Why its own servers may not start here (an untrusted workspace); None when they may."""
    enabled: bool = True

    def allows(self, tool: str, *, named: bool = False) -> bool:
        """Whether its ``tools`` name ``tool`` (or it comes from a server the agent ``named``), its
        ``disallowedTools`` do not, and its plugin's ``permissions.tools`` (if any) name it too."""
        listed = named or self.tools is None or any(fnmatch.fnmatchcase(tool, p) for p in self.tools)
        narrowed = self.plugin_tools is None or any(fnmatch.fnmatchcase(tool, p) for p in self.plugin_tools)
        return listed and narrowed and not any(fnmatch.fnmatchcase(tool, p) for p in self.disallowed)

    def to_json(self) -> dict[str, Any]:
        data = {f.name: getattr(self, f.name) for f in fields(self)}
        return data | {"path": str(self.path or ""), "mcp_servers": sorted(self.mcp_servers)}


GENERAL = AgentDef(
    name=GENERAL_PURPOSE,
    description="A general agent with your tools, for research and multi-step tasks in a fresh context.",
    prompt="",
    source="builtin",
)


@dataclass(kw_only=True, slots=True)
class AgentSet:
    """The agents found, winners by name (enabled or not), and what was wrong on the way."""

    agents: dict[str, AgentDef] = field(default_factory=dict)
    diagnostics: list[Diagnostic] = field(default_factory=list)

    def offered(self) -> list[AgentDef]:
        return [a for a in self.agents.values() if a.enabled]

    def get(self, name: str) -> AgentDef | None:
        return self.agents.get(name)

    def add(self, agent: AgentDef) -> None:
        """An agent of the session's own: it wins over any file of its name."""
        self.agents[agent.name] = agent


def _files(folder: Path) -> Iterator[Path]:
    for path in sorted(folder.rglob("*")) if folder.is_dir() else ():
        hidden = any(part.startswith(".") for part in path.relative_to(folder).parts)
        if path.suffix in (".md", ".toml") and path.name.lower() != "readme.md" and not hidden and path.is_file():
            yield path


def _names(value: Any) -> tuple[str, ...]:
    """``Read, Grep`` or a list, Claude's names mapped (``Bash(git:*)`` counts as ``shell.exec``)."""
    from kairox.hooks import CLAUDE_TOOL_NAMES

    claude = {c: k for k, names in CLAUDE_TOOL_NAMES.items() for c in names} | _MORE_CLAUDE_NAMES
    items = value if isinstance(value, list) else []
    if isinstance(value, str):  # split at commas outside parentheses: ``Agent(a, b), Read``
        items = re.findall(r"[^,(]+(?:\([^)]*\))?", value)
    words = (str(item).split("(")[0].strip() for item in items)
    return tuple(dict.fromkeys(claude.get(w, w) for w in words if w))


def parse_agent(
    path: Path, *, source: str, plugin: str | None = None, root: Path | None = None
) -> tuple[AgentDef | None, list[Diagnostic]]:
    """One agent file; None (with the reason) when it is not one."""
    from kairox.skills import load_frontmatter, split_frontmatter

    problems: list[Diagnostic] = []

    def problem(reason: str, hint: str, severity: Severity = Severity.ERROR) -> None:
        problems.append(
            Diagnostic(kind="agent", name=path.stem, reason=reason, source=str(path), hint=hint, severity=severity)
        )

    try:
        text = path.read_text(encoding="utf-8")
        if path.suffix == ".toml":
            data: Any = tomllib.loads(text)
            body = data.get("developer_instructions", "") if isinstance(data, dict) else ""
        else:
            split = split_frontmatter(text)
            if split.yaml_text is None:
                problem("no frontmatter: an agent file starts with YAML between `---` lines", "add one")
                return None, problems
            data, body = load_frontmatter(split.yaml_text), split.body
    except yaml.YAMLError as exc:
        problem(f"frontmatter is not valid YAML: {str(exc).splitlines()[0]}", "quote values that hold `: ` or `#`")
        return None, problems
    except (OSError, ValueError) as exc:  # unreadable, not UTF-8, TOML errors, YAML past the size budget
        problem(f"cannot be read: {exc}", "fix the file; the other agents still load")
        return None, problems
    if not isinstance(data, dict):
        problem("the frontmatter is not a mapping of keys", "write `name: ...` and `description: ...` lines")
        return None, problems
    name = str(data.get("name") or path.stem).strip()
    description = " ".join(str(data.get("description") or "").split())
    if not description:
        problem("no description: the model is told only its name", "add `description`", Severity.WARNING)
    servers: dict[str, McpServerConfig] = {}
    raw = data.get("mcpServers", data.get("mcp_servers")) or {}
    raw = raw.get("mcpServers", raw) if isinstance(raw, dict) else raw if isinstance(raw, list) else {}
    # a table of entries, or a list of names and one-entry tables (Claude's subagent form)
    items = raw.items() if isinstance(raw, dict) else [i for x in raw if isinstance(x, dict) for i in x.items()]
    named = [x for x in raw if isinstance(x, str)] if isinstance(raw, list) else []
    for server, entry in items:
        if isinstance(entry, str):
            named.append(server)
            continue
        if root is not None:
            from kairox.plugins import expand_plugin_values

            entry = expand_plugin_values(entry, root)
        try:
            servers[str(server)] = mcp_server_config(entry)
        except ValueError as exc:
            problem(f"mcpServers.{server}: {exc}", "fix this entry; the agent runs without it")
    turns = data.get("maxTurns", data.get("max_turns"))
    if turns is not None and (not isinstance(turns, int) or isinstance(turns, bool) or turns < 1):
        problem(f"maxTurns must be a whole number from 1, not {turns!r}", "fix it; the session's limit applies")
        turns = None
    model = data.get("model")
    agent = AgentDef(
        name=f"{plugin}:{name}" if plugin else name,
        description=description,
        prompt=str(body).strip(),
        source=source,
        path=path,
        tools=_names(data["tools"]) if data.get("tools") not in (None, "*") else None,
        disallowed=_names(data.get("disallowedTools", data.get("disallowed_tools"))),
        model=None if model in (None, "", "inherit") else str(model),
        max_turns=turns,
        mcp_servers=servers,
        server_names=tuple(named),
        skills=_names(data.get("skills")),
        color=str(data["color"]) if data.get("color") else None,
        extra={k: v for k, v in data.items() if k not in _KNOWN},
    )
    return agent, problems


def agent_folders(resolved: ResolvedConfig) -> list[tuple[Path, str]]:
    """Where agent files are read, first wins: the workspace's, then the user's."""
    workspace, codex = resolved.workspace, Path(os.environ.get("CODEX_HOME") or Path.home() / ".codex")
    folders = [workspace / ".kairox" / "agents", workspace / ".claude" / "agents", workspace / ".codex" / "agents"]
    return [(f, "workspace") for f in folders] + [(resolved.home / "agents", "user"), (codex / "agents", "user")]


def load_agents(resolved: ResolvedConfig, plugins: "PluginSet | None" = None) -> AgentSet:
    """Every agent of the workspace, the user and the active plugins, in precedence order."""
    from kairox.plugins import ContributionKind

    entries = resolved.config.agent.subagents
    found = AgentSet(agents={GENERAL_PURPOSE: replace(GENERAL, enabled=_on(entries, GENERAL_PURPOSE))})
    held = None if resolved.trusted else "the workspace is not trusted: its agents start no server (`kairox trust`)"
    candidates: list[tuple[Path, str, str | None, Path | None]] = [
        (path, source, None, None) for folder, source in agent_folders(resolved) for path in _files(folder)
    ]
    narrowed: dict[str, tuple[str, ...]] = {}  # plugin -> its manifest's permissions.tools
    for plugin in plugins.active() if plugins is not None else ():
        if plugin.permissions.tools is not None:
            narrowed[plugin.name] = tuple(plugin.permissions.tools)
        candidates += [
            (e.path, f"plugin:{plugin.name}", plugin.name, plugin.root)
            for e in plugin.agents
            if plugin.is_enabled(ContributionKind.AGENT, e.name)
        ]
    for path, source, plugin_name, root in candidates:
        agent, problems = parse_agent(path, source=source, plugin=plugin_name, root=root)
        if agent is not None and plugin_name in narrowed:
            agent = replace(agent, plugin_tools=narrowed[plugin_name])
        found.diagnostics += problems
        if agent is None:
            continue
        first = found.agents.get(agent.name)
        if first is not None:
            reason = f"shadowed by the agent {agent.name!r} of {first.path or first.source}"
            shadow = Diagnostic(kind="agent", name=agent.name, reason=reason, source=str(path), severity=Severity.INFO)
            found.diagnostics.append(shadow)
            continue
        held_here = held if source == "workspace" else None
        found.agents[agent.name] = replace(agent, held=held_here, enabled=_on(entries, agent.name))
    return found


def _on(entries: dict[str, Any], name: str) -> bool:
    return name not in entries or bool(entries[name].enabled)
