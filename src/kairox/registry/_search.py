"""Tool search (R2): the model-visible tools as a ranked index, and deferring their definitions behind it.

A tool is a document of four weighted fields: its name (split at ``_``, ``.``, ``-`` and case changes, the
``mcp__server__`` prefix read as the server), where it comes from (server, plugin or source), its description
and title, and its parameters' names and descriptions. ``kairox.search`` ranks them with FTS5's BM25.

When the definitions a model would be sent pass ``tools.search_threshold``, ``ToolSearch`` defers them: the
model is sent the built-in and skill tools, a ``tool_search`` tool, and a compact index (one line per server or
group); the tools a search returns are sent in full from the next request on. Only tools the model may see are
indexed, so a hidden or name-denied tool is never found; a found tool is called through the gate like any other.
"""

import contextlib
import json
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from kairox._util._json import JsonObject
from kairox.search import FieldedSearchIndex, SemanticRanker, blend, split_identifier
from kairox.tools import ToolSource, ToolSpec

if TYPE_CHECKING:
    from kairox.registry._adapters import ModelProvider
    from kairox.registry._registry import ToolRegistry

TOOL_FIELDS: dict[str, float] = {"name": 1.5, "origin": 0.5, "description": 1.0, "parameters": 0.2}
"""Weights of each field's own BM25 (tuned on tests/search/corpus): a tool's name and description say most, its
parameters least (every tool has ``owner`` or ``path``)."""

TOOL_SEARCH = "tool_search"
NEVER_DEFERRED = frozenset({ToolSource.BUILTIN, ToolSource.SKILL})
"""Kairox's own tools and the skill loader are always sent: the agent's basics must not need a search."""
MAX_RESULTS = 10


def _short_name(spec: ToolSpec) -> str:
    """``mcp__github__create_issue`` -> ``create_issue``; ``fs.read`` stays."""
    if spec.source is ToolSource.MCP and spec.name.startswith("mcp__") and spec.origin:
        head = f"mcp__{spec.origin}__"
        if spec.name.startswith(head):
            return spec.name[len(head) :]
        return spec.name.split("__", 2)[-1]
    return spec.name


def _parameters(schema: Any, depth: int = 0) -> list[str]:
    """Property names (split) and descriptions, one level of nesting deep."""
    if not isinstance(schema, dict) or depth > 1:
        return []
    out: list[str] = []
    properties = schema.get("properties")
    if isinstance(properties, dict):
        for name, prop in properties.items():
            out.append(f"{name} {' '.join(split_identifier(str(name)))}")
            if isinstance(prop, dict):
                if isinstance(prop.get("description"), str):
                    out.append(prop["description"])
                items = prop.get("items")
                out += _parameters(prop, depth + 1) + (_parameters(items, depth + 1) if isinstance(items, dict) else [])
    return out


def tool_document(spec: ToolSpec) -> dict[str, str]:
    """The fields a tool is found by."""
    short = _short_name(spec)
    origin = " ".join(part for part in (spec.origin or "", str(spec.source)) if part)
    title = spec.annotations.title or ""
    return {
        "name": f"{short} {' '.join(split_identifier(short))}",
        "origin": f"{origin} {' '.join(split_identifier(spec.origin or ''))}",
        "description": f"{title}\n{spec.description}",
        "parameters": "\n".join(_parameters(spec.input_schema)),
    }


@dataclass(frozen=True, kw_only=True, slots=True)
class ToolMatch:
    spec: ToolSpec
    score: float
    terms: tuple[tuple[str, tuple[str, ...]], ...]
    """The query words the tool matched, each with the fields holding it, the largest share first."""
    similarity: float | None = None
    """With semantic matching: the cosine similarity of the query's and the tool's embeddings; ``score`` is then
    the blend of it and the lexical score (``lexical``, scaled to the best lexical hit's)."""
    lexical: float | None = None

    def why(self) -> str:
        words = "; ".join(f"{term} ({', '.join(fields)})" for term, fields in self.terms)
        if self.similarity is None:
            return words
        semantic = f"semantic similarity {self.similarity:.2f}, lexical {self.lexical or 0.0:.2f}"
        return f"{words}; {semantic}" if words else semantic

    def to_json(self) -> JsonObject:
        data: JsonObject = {
            "name": self.spec.name,
            "source": str(self.spec.source),
            "origin": self.spec.origin,
            "description": self.spec.description,
            "score": round(self.score, 4),
            "terms": [{"term": t, "fields": list(f)} for t, f in self.terms],
            "why": self.why(),
        }
        if self.similarity is not None:
            data["semantic"] = {"similarity": round(self.similarity, 4), "lexical": round(self.lexical or 0.0, 4)}
        return data


def semantic_text(spec: ToolSpec) -> str:
    """What a tool's embedding is made of: its name, where it comes from, its description."""
    return (
        f"{_short_name(spec)} ({spec.origin or spec.source}): {spec.annotations.title or ''} {spec.description}".strip()
    )


class ToolIndex:
    """A search index over some tools; build it from the tools a searcher may find, and only those."""

    def __init__(self, specs: Sequence[ToolSpec]) -> None:
        self.specs = {spec.name: spec for spec in specs}
        self._index = FieldedSearchIndex(
            TOOL_FIELDS, [(spec.name, tool_document(spec)) for spec in self.specs.values()]
        )

    def search(self, query: str, *, limit: int = 5, semantic: SemanticRanker | None = None) -> list[ToolMatch]:
        """The best ``limit`` tools for ``query``: BM25 alone, or blended with ``semantic`` similarity over every
        indexed tool. An embedder that fails raises (``search_explained`` falls back and says why)."""
        if semantic is None:
            return [
                ToolMatch(spec=self.specs[hit.key], score=hit.score, terms=tuple((t.term, t.fields) for t in hit.terms))
                for hit in self._index.search(query, limit=limit)
            ]
        hits = {hit.key: hit for hit in self._index.search(query, limit=max(limit * 5, 50))}
        similarity = semantic.similarities(query, {name: semantic_text(spec) for name, spec in self.specs.items()})
        ranked = blend({k: h.score for k, h in hits.items()}, similarity, weight=semantic.weight, limit=limit)
        return [
            ToolMatch(
                spec=self.specs[b.key],
                score=b.score,
                similarity=b.similarity,
                lexical=b.lexical,
                terms=tuple((t.term, t.fields) for t in hits[b.key].terms) if b.key in hits else (),
            )
            for b in ranked
        ]

    def search_explained(
        self, query: str, *, limit: int = 5, semantic: SemanticRanker | None = None
    ) -> tuple[list[ToolMatch], str | None]:
        """``search``, and when semantic matching was asked for but failed, the lexical ranking and why."""
        if semantic is None:
            return self.search(query, limit=limit), None
        try:
            return self.search(query, limit=limit, semantic=semantic), None
        except Exception as exc:  # never required: the lexical ranking stands
            return self.search(
                query, limit=limit
            ), f"semantic matching unavailable ({type(exc).__name__}: {exc}); lexical ranking only"


def search_threshold_tokens(threshold: float | str, context_window_tokens: int) -> int | None:
    """``tools.search_threshold`` in tokens: a fraction (up to 1) of the context window, or tokens; ``off`` -> None."""
    if isinstance(threshold, str):
        return None
    return int(threshold * context_window_tokens) if threshold <= 1 else int(threshold)


def tool_search_definition(provider: "ModelProvider | str") -> JsonObject:
    """The ``tool_search`` tool in ``provider``'s wire form."""
    from kairox.registry._adapters import ADAPTERS, ModelProvider
    from kairox.tools import Access, PermissionProfile, object_schema

    schema = object_schema(
        {
            "query": {
                "type": "string",
                "description": "What the tool should do, in a few words (e.g. 'create a github issue').",
            },
            "limit": {
                "type": "integer",
                "minimum": 1,
                "maximum": MAX_RESULTS,
                "description": "How many tools to return (default 5).",
            },
        },
        ["query"],
    )
    spec = ToolSpec(
        name=TOOL_SEARCH,
        description=(
            "Find tools that are not loaded yet (see the tool index in the system prompt). Returns the best "
            "matching tools with their full definitions; they can be called from your next step."
        ),
        input_schema=schema,
        source=ToolSource.BUILTIN,
        permission=PermissionProfile(access=Access.READ),
    )
    return ADAPTERS[ModelProvider(provider)](spec)


class ToolSearch:
    """For one session: whether the model's tools are deferred, which the model has found, and the search."""

    def __init__(
        self, registry: "ToolRegistry", *, threshold_tokens: int | None, semantic: SemanticRanker | None = None
    ) -> None:
        self.registry = registry
        self.semantic = semantic
        """Blends embeddings into the ranking when ``tools.semantic`` is on (None: lexical only)."""
        self.threshold_tokens = threshold_tokens
        """Defer when the definitions would take more than this many tokens (about 4 characters each); never
        when ``None``."""
        self.found: set[str] = set()
        self._index: ToolIndex | None = None
        self._indexed: tuple[str, ...] = ()
        self.deferred = False

    def _deferrable(self) -> list[ToolSpec]:
        return [spec for spec in self.registry.visible_tools() if spec.source not in NEVER_DEFERRED]

    def index(self) -> ToolIndex:
        """The index over the deferrable visible tools, rebuilt when that set changed (a server came or went,
        a policy change hid a tool)."""
        specs = self._deferrable()
        fingerprint = tuple(spec.fingerprint() for spec in specs)
        if self._index is None or fingerprint != self._indexed:
            self._index, self._indexed = ToolIndex(specs), fingerprint
        return self._index

    def definitions(self, provider: "ModelProvider | str") -> list[JsonObject]:
        """What this request sends: every definition when under the threshold; otherwise the never-deferred
        tools, the ones found so far, and ``tool_search``."""
        self.deferred = self.threshold_tokens is not None and self._over(self.threshold_tokens)
        if not self.deferred:
            return self.registry.definitions(provider)[0]
        kept = [s for s in self.registry.visible_tools() if s.source in NEVER_DEFERRED or s.name in self.found]
        return [*self._adapt(kept, provider).values(), tool_search_definition(provider)]

    def _over(self, tokens: int) -> bool:
        """Whether every visible definition takes more than ``tokens`` tokens (about 4 characters a token): counted
        only until the budget is passed (2,000 tools need not all be measured to know)."""
        size = 0
        for s in self.registry.visible_tools():
            size += len(s.name) + len(s.description) + len(json.dumps(s.input_schema)) + 40
            if size // 4 > tokens:
                return True
        return False

    def _adapt(self, specs: Sequence[ToolSpec], provider: "ModelProvider | str") -> dict[str, JsonObject]:
        """Definitions of just these tools, under the wire names the registry maps back (a tool whose schema
        the provider cannot take is left out, as ``definitions()`` leaves it out)."""
        from dataclasses import replace

        from kairox.registry._adapters import ADAPTERS, ModelProvider, SchemaAdapterError

        adapter = ADAPTERS[ModelProvider(provider)]
        wire = self.registry.wire_names()
        out: dict[str, JsonObject] = {}
        for spec in specs:
            with contextlib.suppress(SchemaAdapterError, KeyError):
                out[spec.name] = adapter(replace(spec, name=wire[spec.name]))
        return out

    def is_deferred(self, name: str) -> bool:
        """A tool the model has not been sent yet: calling it first needs ``tool_search``."""
        spec = self.registry.get(name)
        return self.deferred and spec is not None and spec.source not in NEVER_DEFERRED and name not in self.found

    def prompt_index(self) -> str:
        """The compact index of deferred tools for the system prompt: one line per server or group."""
        if not self.deferred:
            return ""
        groups: dict[str, list[ToolSpec]] = defaultdict(list)
        for spec in self._deferrable():
            groups[f"{spec.origin or spec.source} ({spec.source})"].append(spec)
        lines = [
            f"- {group}: {len(specs)} tools, e.g. {', '.join(_short_name(s) for s in specs[:4])}"
            for group, specs in sorted(groups.items())
        ]
        return (
            "<deferred-tools>\nMore tools are available than are loaded. Call `tool_search` with what you need to do; "
            "the tools it returns can be called from your next step.\n" + "\n".join(lines) + "\n</deferred-tools>"
        )

    def search(self, arguments: JsonObject, provider: "ModelProvider | str") -> tuple[str, bool]:
        """Run a ``tool_search`` call: the result text for the model, and whether it is an error."""
        query = arguments.get("query")
        if not isinstance(query, str) or not query.strip():
            return "tool_search needs a `query`: a few words saying what the tool should do", True
        limit = arguments.get("limit", 5)
        limit = max(1, min(MAX_RESULTS, limit if isinstance(limit, int) else 5))
        matches, note = self.index().search_explained(query, limit=limit, semantic=self.semantic)
        if not matches:
            return (
                f"no tool matches {query!r}; try other words (the tool index in the system prompt lists the servers)",
                False,
            )
        by_name = self._adapt([m.spec for m in matches], provider)
        found = [m for m in matches if m.spec.name in by_name]
        self.found.update(m.spec.name for m in found)
        payload: JsonObject = {"tools": [{"definition": by_name[m.spec.name], "matched": m.why()} for m in found]}
        if note is not None:
            payload["note"] = note
        return "These tools are loaded and can be called from your next step:\n" + json.dumps(
            payload, ensure_ascii=False
        ), False
