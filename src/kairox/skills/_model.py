"""What a skill is once parsed (S1): its frontmatter, and the loaded definition the registry keeps."""

import enum
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from kairox._util._json import JsonObject

SKILL_FILE = "SKILL.md"
"""The file that makes a folder an Agent Skill."""


class SkillScope(enum.StrEnum):
    """Where a skill comes from. On a name collision session beats workspace beats user."""

    SESSION = "session"
    WORKSPACE = "workspace"
    USER = "user"
    PLUGIN = "plugin"
    """Namespaced ``<plugin>:<name>``, so a plugin skill never collides with the others."""
    MCP = "mcp"
    """Offered by an MCP server (the skills extension), namespaced ``<server>:<name>`` like a plugin's."""


SCOPE_PRECEDENCE: dict[SkillScope, int] = {
    SkillScope.SESSION: 0,
    SkillScope.WORKSPACE: 1,
    SkillScope.USER: 2,
    SkillScope.PLUGIN: 3,
    SkillScope.MCP: 4,
}
"""Lower wins when two skills share a qualified name."""


class SkillFormat(enum.StrEnum):
    KAIROX = "kairox"
    """A markdown file of its own with frontmatter."""
    AGENT_SKILLS = "agent-skills"
    """A folder holding ``SKILL.md`` and any files it bundles."""


ARGUMENT_TYPES = ("string", "number", "integer", "boolean", "array", "object")


@dataclass(frozen=True, kw_only=True, slots=True)
class SkillArgument:
    """One declared input of a skill (S7): validated, then substituted into the body as ``${name}``."""

    name: str
    type: str = "string"
    description: str = ""
    required: bool = False
    default: Any = None

    def to_json(self) -> JsonObject:
        return {
            "name": self.name,
            "type": self.type,
            "description": self.description,
            "required": self.required,
            "default": self.default,
        }


@dataclass(frozen=True, kw_only=True, slots=True)
class SkillFrontmatter:
    """The frontmatter keys Kairox understands, normalised; every other key is kept in ``extra``."""

    name: str | None = None
    description: str = ""
    scope: str | None = None
    keywords: tuple[str, ...] = ()
    tools: tuple[str, ...] = ()
    """Tools the skill needs (Kairox ``tools``): each must be registered before the skill runs."""
    allowed_tools: tuple[str, ...] = ()
    """``allowed-tools`` (Agent Skills, Claude Code): tools the skill expects to use; reported, not required,
    since those hosts name their tools differently."""
    model: str | None = None
    arguments: tuple[SkillArgument, ...] = ()
    when_to_use: str = ""
    examples: tuple[str, ...] = ()
    """Trigger examples: prompts this skill is meant for."""
    license: str | None = None
    compatibility: str | None = None
    metadata: dict[str, str] = field(default_factory=dict)
    disable_model_invocation: bool = False
    """The model is not offered this skill; a user can still invoke it."""
    user_invocable: bool = True
    argument_hint: str | None = None
    extra: JsonObject = field(default_factory=dict)
    """Keys Kairox does not interpret (Claude Code's and other hosts'), kept as they were."""


@dataclass(frozen=True, kw_only=True, slots=True)
class SkillDef:
    """A loaded skill. The body stays on disk until the skill is used (progressive disclosure, S6)."""

    name: str
    description: str
    path: Path
    """The markdown file: ``SKILL.md`` for Agent Skills, the file itself for Kairox skills."""
    format: SkillFormat
    scope: SkillScope = SkillScope.USER
    plugin: str | None = None
    frontmatter: SkillFrontmatter = field(default_factory=SkillFrontmatter)
    body_line: int = 1
    """First line of the body in ``path`` (after the frontmatter)."""
    root: Path | None = None
    """The skill root this skill was found under."""

    @property
    def qualified_name(self) -> str:
        """``<plugin>:<name>`` for plugin skills, else the name."""
        return f"{self.plugin}:{self.name}" if self.plugin else self.name

    @property
    def folder(self) -> Path:
        """The folder whose files the skill bundles (the skill's own folder for Agent Skills)."""
        return self.path.parent

    @property
    def keywords(self) -> tuple[str, ...]:
        return self.frontmatter.keywords

    @property
    def tools(self) -> tuple[str, ...]:
        return self.frontmatter.tools

    @property
    def model(self) -> str | None:
        return self.frontmatter.model

    @property
    def arguments(self) -> tuple[SkillArgument, ...]:
        return self.frontmatter.arguments

    def placed(self, *, scope: SkillScope, plugin: str | None = None, root: Path | None = None) -> "SkillDef":
        """This skill as found in a given scope (parsing does not know where a file was found)."""
        return replace(self, scope=scope, plugin=plugin, root=root)
