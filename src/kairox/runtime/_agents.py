"""Subagents as files (A3): Claude's ``agents/*.md`` (YAML frontmatter; the body is the system prompt) and Codex's
``agents/*.toml`` (``developer_instructions``), from the workspace, the user's folders and the enabled plugins
(``<plugin>:<agent>``). The first source that names an agent wins and shadows the others; a broken file is a
diagnostic and the others still load. What a subagent may do is decided when it runs (``kairox.agent``)."""

import fnmatch
import os
import re
import tomllib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field, replace
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
    """The agent's system prompt: the file's body (Codex: ``developer_instructions``)."""
    source: str
    """``builtin``, ``session``, ``workspace``, ``user`` or ``plugin:<name>``."""
    path: Path | None = None
    tools: tuple[str, ...] | None = None
    """Tool names or globs it may use (Claude's names mapped to Kairox's); None: every tool of its parent."""
    disallowed: tuple[str, ...] = ()
    model: str | None = None
    """A model name or alias (``sonnet``); None or ``inherit``: the parent's."""
    max_turns: int | None = None
    mcp_servers: dict[str, McpServerConfig] = field(default_factory=dict)
    """Its own servers, declared inline: started for each run of it, seen by it alone."""
    server_names: tuple[str, ...] = ()
    """Configured servers it names: their tools (the parent's) join its own."""
    skills: tuple[str, ...] = ()
    """Skills whose instructions join its system prompt."""
    color: str | None = None
    read_only: bool = False
    """Codex's ``sandbox_mode = "read-only"``: only tools that read."""
    extra: dict[str, Any] = field(default_factory=dict)
    """Keys Kairox does not use, kept as written."""
    held: str | None = None
    """Why its own servers may not start here (an untrusted workspace); None when they may."""
    enabled: bool = True
    shadows: tuple[str, ...] = ()
    """Where the agents of the same name it wins over are."""

    def allows(self, tool: str, *, named: bool = False) -> bool:
        """Whether its ``tools`` name ``tool`` (or it comes from a server the agent ``named``) and its
        ``disallowedTools`` do not."""
        listed = named or self.tools is None or any(fnmatch.fnmatchcase(tool, p) for p in self.tools)
        return listed and not any(fnmatch.fnmatchcase(tool, p) for p in self.disallowed)

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "description": self.description,
            "source": self.source,
            "path": str(self.path) if self.path else None,
            "enabled": self.enabled,
            "tools": list(self.tools) if self.tools is not None else None,
            "disallowed_tools": list(self.disallowed),
            "model": self.model,
            "max_turns": self.max_turns,
            "mcp_servers": sorted(self.mcp_servers) + list(self.server_names),
            "skills": list(self.skills),
            "color": self.color,
            "read_only": self.read_only,
            "held": self.held,
            "shadows": list(self.shadows),
            "extra": self.extra,
            "prompt": self.prompt,
        }


GENERAL = AgentDef(
    name=GENERAL_PURPOSE,
    description="A general agent with your tools, for research and multi-step tasks in a fresh context.",
    prompt=(
        "You are a subagent: do the task you are given with the tools you have, then answer with what you found or "
        "did. Your final answer is all the caller sees, so make it complete and concise."
    ),
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
        old = self.agents.get(agent.name)
        shadows = (str(old.path or old.source), *old.shadows) if old is not None else ()
        self.agents[agent.name] = replace(agent, shadows=shadows)


def _files(folder: Path) -> Iterator[Path]:
    if folder.is_dir():
        for path in sorted(folder.rglob("*")):
            hidden = any(part.startswith(".") for part in path.relative_to(folder).parts)
            if path.suffix in (".md", ".toml") and path.name.lower() != "readme.md" and not hidden and path.is_file():
                yield path


def _names(value: Any) -> tuple[str, ...]:
    """``Read, Grep`` or a list, Claude's names mapped (``Bash(git:*)`` counts as ``shell.exec``)."""
    from kairox.hooks import CLAUDE_TOOL_NAMES

    claude = {c: k for k, names in CLAUDE_TOOL_NAMES.items() for c in names} | _MORE_CLAUDE_NAMES
    # split at commas outside parentheses: ``Agent(a, b), Read``
    items = (
        re.findall(r"[^,(]+(?:\([^)]*\))?", value)
        if isinstance(value, str)
        else value
        if isinstance(value, list)
        else []
    )
    words = (str(item).split("(")[0].strip() for item in items)
    return tuple(dict.fromkeys(claude.get(w, w) for w in words if w))


def parse_agent(
    path: Path, *, source: str, plugin: str | None = None, root: Path | None = None
) -> tuple[AgentDef | None, list[Diagnostic]]:
    """One agent file; None (with the reason) when it is not one."""
    from kairox.skills import load_frontmatter, split_frontmatter

    problems: list[Diagnostic] = []

    def problem(reason: str, hint: str, severity: Severity = Severity.ERROR) -> Diagnostic:
        found = Diagnostic(kind="agent", name=path.stem, reason=reason, source=str(path), hint=hint, severity=severity)
        problems.append(found)
        return found

    try:
        text = path.read_text(encoding="utf-8")
        if path.suffix == ".toml":
            data: Any = tomllib.loads(text)
            body = data.get("developer_instructions", "") if isinstance(data, dict) else ""
        else:
            split = split_frontmatter(text)
            if split.yaml_text is None:
                problem(
                    "no frontmatter: an agent file starts with YAML between `---` lines", "add name and description"
                )
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
        if plugin and root is not None:
            from kairox.plugins import expand_plugin_root

            entry = _expand(entry, lambda s: expand_plugin_root(s, root))
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
        read_only=data.get("sandbox_mode") == "read-only",
        extra={k: v for k, v in data.items() if k not in _KNOWN},
    )
    return agent, problems


def _expand(value: Any, expand: Any) -> Any:
    if isinstance(value, str):
        return expand(value)
    if isinstance(value, list):
        return [_expand(v, expand) for v in value]
    return {k: _expand(v, expand) for k, v in value.items()} if isinstance(value, dict) else value


def agent_folders(resolved: ResolvedConfig) -> list[tuple[Path, str]]:
    """Where agent files are read, first wins: the workspace's, then the user's."""
    workspace, codex = resolved.workspace, Path(os.environ.get("CODEX_HOME") or Path.home() / ".codex")
    folders = [workspace / ".kairox" / "agents", workspace / ".claude" / "agents", workspace / ".codex" / "agents"]
    return [(f, "workspace") for f in folders] + [(resolved.home / "agents", "user"), (codex / "agents", "user")]


def load_agents(resolved: ResolvedConfig, plugins: "PluginSet | None" = None) -> AgentSet:
    """Every agent of the workspace, the user and the active plugins, in precedence order."""
    from kairox.plugins import ContributionKind

    entries = resolved.config.agent.subagents
    found = AgentSet(agents={GENERAL_PURPOSE: GENERAL})
    held = None if resolved.trusted else "the workspace is not trusted: its agents start no server (`kairox trust`)"
    candidates: list[tuple[Path, str, str | None, Path | None]] = [
        (path, source, None, None) for folder, source in agent_folders(resolved) for path in _files(folder)
    ]
    for plugin in plugins.active() if plugins is not None else ():
        candidates += [
            (e.path, f"plugin:{plugin.name}", plugin.name, plugin.root)
            for e in plugin.agents
            if plugin.is_enabled(ContributionKind.AGENT, e.name)
        ]
    for path, source, plugin_name, root in candidates:
        agent, problems = parse_agent(path, source=source, plugin=plugin_name, root=root)
        found.diagnostics += problems
        if agent is None:
            continue
        first = found.agents.get(agent.name)
        if first is not None:
            found.agents[agent.name] = replace(first, shadows=(*first.shadows, str(path)))
            found.diagnostics.append(_shadowed(agent, first))
            continue
        found.agents[agent.name] = replace(agent, held=held if source == "workspace" else None)
    for name, setting in entries.items():
        if name in found.agents and not setting.enabled:
            found.agents[name] = replace(found.agents[name], enabled=False)
    return found


def _shadowed(agent: AgentDef, first: AgentDef) -> Diagnostic:
    return Diagnostic(
        kind="agent",
        name=agent.name,
        reason=f"{agent.path} is shadowed by the agent of the same name in {first.path or first.source}",
        source=str(agent.path),
        severity=Severity.INFO,
    )


def agents_text(agents: Iterable[AgentDef]) -> list[str]:
    """One line per agent for a listing: name, where it comes from, whether it is on, its description."""
    return [
        f"{'on ' if a.enabled else 'off'} {a.name}  [{a.source}]  {a.description[:100]}"
        + ("…" if len(a.description) > 100 else "")
        for a in agents
    ]
