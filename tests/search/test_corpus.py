"""Tool search on real tool definitions: at least 500 tools of real MCP servers, at least 100 tasks phrased as a
user would, and the hit rates the index reaches on them (``bench/tool_search_quality.py`` prints the misses)."""

import json

from tests.search._corpus import CORPUS, corpus_specs, hit_rates, outcomes, queries


def test_corpus_holds_real_definitions_with_their_sources() -> None:
    specs = corpus_specs()
    assert len(specs) >= 500
    assert len(queries()) >= 100
    sources = {json.loads(line)["source"] for line in (CORPUS / "tools.jsonl").read_text(encoding="utf-8").splitlines()}
    listed = (CORPUS / "SOURCES.md").read_text(encoding="utf-8")
    assert all(f"`{source}`" in listed for source in sources), sources
    assert all(key in specs for _, expected in queries() for key in expected)  # every label names a corpus tool


def test_lexical_index_finds_the_right_tool_in_its_top_three_for_nine_tasks_in_ten() -> None:
    top1, top3 = hit_rates(outcomes())
    assert top3 >= 0.90, top3
    assert top1 >= 0.65, top1
