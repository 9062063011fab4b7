"""``SkillRegistry`` (S4): one skill per name, the shadowed ones kept and listed, enable state, visibility.

Precedence on a shared qualified name: session over workspace over user (plugin skills are namespaced and
never collide with those). Within one scope the root listed first wins (``.kairox/skills`` before the
compatibility folders). In an untrusted workspace, workspace skills are listed but not offered to the model,
and they do not shadow a user or session skill of the same name: an unreviewed repository cannot replace a
skill the user relies on.
"""

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from kairox._util._json import JsonObject
from kairox._util._names import suggest
from kairox.config import SkillsConfig
from kairox.errors import Diagnostic, KairoxError, Severity
from kairox.events import EventSink, NullSink
from kairox.search import query_words
from kairox.skills._cache import SkillCache
from kairox.skills._catalog import Catalog, render_catalog
from kairox.skills._discovery import Discovery, SkillRoot, discover_skills
from kairox.skills._events import SkillsDiscovered, SkillsMatched
from kairox.skills._load import parse_skill_file
from kairox.skills._match import SkillIndex, SkillMatch
from kairox.skills._model import SCOPE_PRECEDENCE, SKILL_FILE, SkillDef, SkillScope

UNTRUSTED_REASON = "the workspace is not trusted; run `kairox trust` to offer its skills"


class SkillError(KairoxError):
    """A skill could not be found, loaded or used."""


class SkillNotFoundError(SkillError):
    def __init__(self, name: str, known: Iterable[str]) -> None:
        guess = suggest(name, known)
        super().__init__(
            f"no skill named {name!r}",
            hint=f"did you mean {guess!r}?" if guess else "`kairox skills list` shows the skills",
        )
        self.name = name


class SkillLoadError(SkillError):
    """A skill file could not be loaded; ``diagnostics`` say why."""

    def __init__(self, path: Path, diagnostics: Sequence[Diagnostic]) -> None:
        reasons = "; ".join(str(d) for d in diagnostics if d.severity is Severity.ERROR) or "not a skill"
        super().__init__(f"{path}: cannot load the skill: {reasons}")
        self.path = path
        self.diagnostics = list(diagnostics)


@dataclass(frozen=True, kw_only=True, slots=True)
class SkillEntry:
    """A skill as the registry sees it."""

    skill: SkillDef
    enabled: bool
    hidden_reason: str | None
    """Why the model is not offered this skill (disabled, untrusted, shadowed, model invocation off)."""
    shadowed: tuple[SkillDef, ...] = ()
    """Skills of the same name this one hides."""
    shadowed_by: SkillDef | None = None
    """Set when this skill is itself hidden by another of the same name."""
    held_by_trust: bool = False
    """Hidden because it is the workspace's and the workspace waits for ``kairox trust``."""

    @property
    def offered(self) -> bool:
        return self.hidden_reason is None

    def to_json(self) -> JsonObject:
        skill = self.skill
        data: JsonObject = {
            "name": skill.name,
            "qualified_name": skill.qualified_name,
            "scope": str(skill.scope),
            "path": str(skill.path),
            "description": skill.description,
            "enabled": self.enabled,
            "format": str(skill.format),
            "shadowed": [str(s.path) for s in self.shadowed],
            "offered": self.offered,
            "hidden_reason": self.hidden_reason,
            "plugin": skill.plugin,
            "model": skill.model,
            "keywords": list(skill.keywords),
            "tools": list(skill.tools),
        }
        if self.shadowed_by is not None:
            data["shadowed_by"] = str(self.shadowed_by.path)
        return data


class SkillRegistry:
    """The skills of a session. Build with ``SkillRegistry.load(roots, ...)`` or from parsed skills."""

    def __init__(
        self,
        skills: Iterable[SkillDef] = (),
        *,
        diagnostics: Iterable[Diagnostic] = (),
        config: SkillsConfig | None = None,
        trusted: bool = True,
        events: EventSink | None = None,
    ) -> None:
        self.config = config or SkillsConfig()
        self.trusted = trusted
        self.events: EventSink = events or NullSink()
        self.diagnostics: list[Diagnostic] = list(diagnostics)
        self._shadow_notes: list[Diagnostic] = []
        self._found: list[SkillDef] = list(skills)
        self._session: list[SkillDef] = []
        self._enabled: dict[str, bool] = {name: entry.enabled for name, entry in self.config.entries.items()}
        self._entries: dict[str, SkillEntry] = {}
        self._shadowed_entries: list[SkillEntry] = []
        self._index: SkillIndex | None = None
        self._rebuild()

    @classmethod
    def load(
        cls,
        roots: Sequence[SkillRoot],
        *,
        config: SkillsConfig | None = None,
        trusted: bool = True,
        cache_file: Path | None = None,
        events: EventSink | None = None,
        exclude: Iterable[str] = (),
    ) -> "SkillRegistry":
        """Discover skills under ``roots`` (highest precedence first) and build the registry. Qualified names
        in ``exclude`` are left out entirely (a plugin's disabled contributions are not loaded)."""
        config = config or SkillsConfig()
        cache = SkillCache(cache_file) if cache_file is not None else None
        found: Discovery = discover_skills(roots, max_depth=config.max_depth, cache=cache)
        excluded = frozenset(exclude)
        skills = [s for s in found.skills if s.qualified_name not in excluded]
        registry = cls(skills, diagnostics=found.diagnostics, config=config, trusted=trusted, events=events)
        registry.events.emit(
            SkillsDiscovered(
                skills=len(registry._entries),
                shadowed=len(registry._shadowed_entries),
                diagnostics=len(registry.diagnostics),
                parsed=found.stats.parsed,
                cached=found.stats.cached,
            )
        )
        return registry

    # --- building --------------------------------------------------------------------------------------------

    def _hidden_reason(self, skill: SkillDef, enabled: bool) -> str | None:
        if not enabled:
            return "disabled in configuration"
        if skill.scope is SkillScope.WORKSPACE and not self.trusted:
            return UNTRUSTED_REASON
        if skill.frontmatter.disable_model_invocation:
            return "disable-model-invocation is set; only a user can invoke it"
        return None

    def _rebuild(self) -> None:
        candidates: dict[str, list[tuple[tuple[int, int, int], SkillDef]]] = {}
        for order, skill in enumerate([*self._session, *self._found]):
            untrusted = skill.scope is SkillScope.WORKSPACE and not self.trusted
            key = (1 if untrusted else 0, SCOPE_PRECEDENCE[skill.scope], order)
            candidates.setdefault(skill.qualified_name, []).append((key, skill))
        self._entries = {}
        self._shadowed_entries = []
        # this rebuild's shadowing notes replace the last one's (known by identity: a note's text is no type)
        stale = {id(d) for d in self._shadow_notes}
        self.diagnostics = [d for d in self.diagnostics if id(d) not in stale]
        self._shadow_notes = []
        for name in sorted(candidates):
            ranked = [skill for _, skill in sorted(candidates[name], key=lambda item: item[0])]
            winner, losers = ranked[0], ranked[1:]
            enabled = self._enabled.get(name, True)
            held = enabled and winner.scope is SkillScope.WORKSPACE and not self.trusted
            self._entries[name] = SkillEntry(
                skill=winner,
                enabled=enabled,
                hidden_reason=self._hidden_reason(winner, enabled),
                shadowed=tuple(losers),
                held_by_trust=held,
            )
            for loser in losers:
                self._shadowed_entries.append(
                    SkillEntry(
                        skill=loser, enabled=enabled, hidden_reason=f"shadowed by {winner.path}", shadowed_by=winner
                    )
                )
                note = Diagnostic(
                    kind="skill",
                    name=name,
                    severity=Severity.INFO,
                    source=str(loser.path),
                    reason=f"shadowed by {winner.path} ({winner.scope} scope)",
                    hint="rename one of them to use both",
                )
                self._shadow_notes.append(note)
                self.diagnostics.append(note)
        self._index = None

    def add_skills(self, skills: Iterable[SkillDef]) -> None:
        """Skills found after loading (an MCP server's), below every other scope."""
        self._found.extend(skills)
        self._rebuild()

    def add_session_skill(self, source: Path | SkillDef) -> SkillDef:
        """Add a skill for this session only (highest precedence). ``source`` is a skill file, a folder
        holding ``SKILL.md``, or an already parsed skill. Raises ``SkillLoadError`` when it does not load."""
        if isinstance(source, SkillDef):
            skill = source.placed(scope=SkillScope.SESSION, root=source.root)
        else:
            path = source / SKILL_FILE if source.is_dir() else source
            outcome = parse_skill_file(path)
            if outcome.skill is None:
                raise SkillLoadError(path, outcome.diagnostics)
            self.diagnostics.extend(outcome.diagnostics)
            skill = outcome.skill.placed(scope=SkillScope.SESSION, root=path.parent)
        self._session.insert(0, skill)
        self._rebuild()
        return skill

    def set_enabled(self, name: str, enabled: bool) -> None:
        """Change the enable state in memory (persisting is the caller's job: ``persist_enabled``)."""
        entry = self.require(name)
        self._enabled[entry.skill.qualified_name] = enabled
        self._rebuild()

    # --- reading ---------------------------------------------------------------------------------------------

    def entries(self, *, include_shadowed: bool = False) -> list[SkillEntry]:
        """Every skill by qualified name; with ``include_shadowed`` the hidden duplicates follow."""
        listed = list(self._entries.values())
        return [*listed, *self._shadowed_entries] if include_shadowed else listed

    def names(self) -> list[str]:
        return list(self._entries)

    def get(self, name: str) -> SkillEntry | None:
        """By qualified name; a plain name also finds a plugin skill when exactly one plugin has it."""
        entry = self._entries.get(name)
        if entry is not None or ":" in name:
            return entry
        plugin_hits = [e for e in self._entries.values() if e.skill.plugin and e.skill.name == name]
        return plugin_hits[0] if len(plugin_hits) == 1 else None

    def require(self, name: str) -> SkillEntry:
        entry = self.get(name)
        if entry is None:
            raise SkillNotFoundError(name, self._entries)
        return entry

    def offered(self) -> list[SkillDef]:
        """The skills the model may be told about and may load."""
        return [e.skill for e in self._entries.values() if e.offered]

    def match(self, prompt: str, *, limit: int = 5, include_hidden: bool = False) -> list[SkillMatch]:
        """Rank skills for ``prompt``; by default only those offered to the model."""
        if include_hidden:
            matches = SkillIndex([e.skill for e in self._entries.values()]).match(prompt, limit=limit)
        else:
            if self._index is None:
                self._index = SkillIndex(self.offered())
            matches = self._index.match(prompt, limit=limit)
        self.events.emit(
            SkillsMatched(
                prompt_terms=tuple(dict.fromkeys(query_words(prompt))),
                matches=tuple(m.skill.qualified_name for m in matches),
                scores=tuple(round(m.score, 4) for m in matches),
            )
        )
        return matches

    def catalog(self, budget_chars: int | None = None) -> Catalog:
        """The prompt text listing offered skills within the budget (``skills.prompt_budget_chars``)."""
        return render_catalog(self.offered(), budget_chars or self.config.prompt_budget_chars)

    def to_json(self, *, include_shadowed: bool = False) -> JsonObject:
        """The ``kairox skills list --json`` document."""
        return {
            "skills": [e.to_json() for e in self.entries(include_shadowed=include_shadowed)],
            "diagnostics": [diagnostic_json(d) for d in self.diagnostics],
        }


def diagnostic_json(diagnostic: Diagnostic) -> JsonObject:
    return {
        "path": diagnostic.source,
        "line": diagnostic.line,
        "severity": str(diagnostic.severity),
        "reason": diagnostic.reason,
        "name": diagnostic.name,
        "hint": diagnostic.hint,
    }
