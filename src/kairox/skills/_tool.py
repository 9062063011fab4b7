"""The ``skill`` tool (S7): the model loads a skill's body by name, through the registry's gate."""

from collections.abc import Awaitable, Callable, Sequence

from kairox._util._json import JsonObject
from kairox.events import EventSink, NullSink
from kairox.skills._events import SkillLoaded
from kairox.skills._model import SkillDef, SkillScope
from kairox.skills._registry import SkillError, SkillRegistry
from kairox.skills._use import RegisteredTools, load_skill
from kairox.tools import CallContext, PermissionProfile, ToolProvider, ToolResult, ToolSource, ToolSpec
from kairox.tools._model import Access

SKILL_TOOL = "skill"

_SCHEMA: JsonObject = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "description": "The skill's name as listed (plugin skills as `plugin:name`)."},
        "arguments": {"type": "object", "description": "Values for the arguments the skill declares."},
        "text": {"type": "string", "description": "Free text for the skill (what `$ARGUMENTS` becomes)."},
    },
    "required": ["name"],
    "additionalProperties": False,
}


class SkillToolProvider(ToolProvider):
    """Provides the ``skill`` tool over a ``SkillRegistry``.

    ``registered`` gives the names of the tools registered elsewhere (the registry passes a callable, since
    this package cannot import it); a skill whose ``tools`` are not all there is refused with their names.
    """

    origin = "skills"
    fetch: Callable[[SkillDef], Awaitable[str | None]] | None = None
    """Brings an MCP server's skill to its ``path`` before it is loaded; what went wrong, or None."""

    def __init__(
        self, registry: SkillRegistry, *, registered: RegisteredTools | None = None, events: EventSink | None = None
    ) -> None:
        super().__init__()
        self.registry = registry
        self.registered = registered
        self.events: EventSink = events or NullSink()

    def spec(self) -> ToolSpec:
        return ToolSpec(
            name=SKILL_TOOL,
            description=(
                "Load a skill: its instructions, with your arguments filled in, and the files it bundles. "
                "Use it when a listed skill fits the task, before doing the task."
            ),
            input_schema=_SCHEMA,
            source=ToolSource.SKILL,
            permission=PermissionProfile(access=Access.READ),
            origin=self.origin,
            meta={"rule_argument": "name"},
        )

    async def list_tools(self) -> Sequence[ToolSpec]:
        return [self.spec()] if self.registry.offered() else []

    async def call_tool(self, name: str, arguments: JsonObject, context: CallContext) -> ToolResult:
        if name != SKILL_TOOL:
            return ToolResult.error(f"the skills provider has no tool {name!r}")
        wanted = arguments.get("name")
        if not isinstance(wanted, str) or not wanted:
            return ToolResult.error("give the skill's `name`")
        raw_arguments = arguments.get("arguments") or {}
        text = arguments.get("text")
        if not isinstance(raw_arguments, dict) or (text is not None and not isinstance(text, str)):
            return ToolResult.error("`arguments` must be an object and `text` a string")
        try:
            entry = self.registry.require(wanted)
            if entry.hidden_reason is not None:
                return ToolResult.error(f"skill {entry.skill.qualified_name!r} is not available: {entry.hidden_reason}")
            problem = await self.fetch(entry.skill) if self.fetch and entry.skill.scope is SkillScope.MCP else None
            if problem is not None:
                return ToolResult.error(problem)
            loaded = load_skill(entry.skill, arguments=raw_arguments, text=text, registered=self.registered)
        except SkillError as exc:
            return ToolResult.error(str(exc))
        self.events.emit(
            SkillLoaded(
                name=loaded.skill.qualified_name,
                path=str(loaded.skill.path),
                arguments=tuple(loaded.arguments),
                model=loaded.skill.model,
            )
        )
        text = loaded.text()
        # the instructions themselves are in the structured form too: some hosts show the model only that form
        return ToolResult.text(text, structured={**loaded.to_json(), "content": text})
