"""The tool-search corpus: real MCP servers' tool definitions and tasks phrased as a user would, each labelled
with the tools that do it. ``hit_rates`` is what the test asserts and ``bench/tool_search_quality.py`` prints."""

import json
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from kairox._util._names import mcp_tool_name
from kairox.registry import ToolIndex
from kairox.tools import Access, PermissionProfile, ToolSource, ToolSpec

if TYPE_CHECKING:
    from kairox.search import SemanticRanker

CORPUS = Path(__file__).resolve().parent / "corpus"


@dataclass(frozen=True, kw_only=True, slots=True)
class Outcome:
    query: str
    expected: tuple[str, ...]
    found: tuple[str, ...]
    """The top three, as ``server/tool``."""

    @property
    def rank(self) -> int | None:
        return next((i + 1 for i, key in enumerate(self.found) if key in self.expected), None)


def corpus_specs() -> dict[str, ToolSpec]:
    """``server/tool`` -> the tool as the registry would hold it (MCP tools under ``mcp__server__tool``)."""
    specs = {}
    for line in (CORPUS / "tools.jsonl").read_text(encoding="utf-8").splitlines():
        tool = json.loads(line)
        server, name = tool["server"], tool["name"]
        if server.startswith("kairox-"):
            source, origin, registry_name = ToolSource(server.removeprefix("kairox-")), None, name
        else:
            source, origin, registry_name = ToolSource.MCP, server, mcp_tool_name(server, name)
        specs[f"{server}/{name}"] = ToolSpec(
            name=registry_name,
            description=tool["description"],
            input_schema=tool["input_schema"],
            source=source,
            permission=PermissionProfile(access=Access.EXTERNAL),
            origin=origin,
        )
    return specs


def queries() -> list[tuple[str, tuple[str, ...]]]:
    lines = (CORPUS / "queries.jsonl").read_text(encoding="utf-8").splitlines()
    return [(q["query"], tuple(q["expected"])) for q in map(json.loads, lines)]


def outcomes(semantic: "SemanticRanker | None" = None) -> list[Outcome]:
    specs = corpus_specs()
    key_of = {spec.name: key for key, spec in specs.items()}
    index = ToolIndex(list(specs.values()))
    return [
        Outcome(
            query=query,
            expected=expected,
            found=tuple(key_of[m.spec.name] for m in index.search(query, limit=3, semantic=semantic)),
        )
        for query, expected in queries()
    ]


def hit_rates(results: list[Outcome]) -> tuple[float, float]:
    """Top-1 and top-3 hit rates."""
    top1 = sum(1 for r in results if r.rank == 1) / len(results)
    top3 = sum(1 for r in results if r.rank is not None) / len(results)
    return top1, top3
