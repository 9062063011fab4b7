"""Hit rates of tool search on the corpus of real MCP tool definitions (tests/search/corpus/): for each task
phrased as a user would, is a right tool first (top-1) or among the first three (top-3)? Misses are listed.

With ``--semantic``, also blended with embeddings from tests/servers/embeddings_server.py, a scripted
OpenAI-compatible endpoint on 127.0.0.1 whose vectors count words by a small hand-made table of related words:
a stand-in that exercises the blending and the wire, not a real embedding model (no model is reachable here).

Run: PYTHONPATH=src .venv/bin/python bench/tool_search_quality.py [--semantic]
"""

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.search._corpus import corpus_specs, hit_rates, outcomes


def semantic(weights: tuple[float, ...] = (0.2, 0.35, 0.5)) -> None:
    import tempfile

    from tests.servers.embeddings_server import EmbeddingsServer

    from kairox.agent import ModelSettings
    from kairox.agent._embeddings import provider_embedder
    from kairox.search import EmbeddingCache, SemanticRanker

    with tempfile.TemporaryDirectory() as tmp, EmbeddingsServer() as server:
        settings = ModelSettings(model="m", provider="scripted", wire_api="chat", base_url=server.base_url)
        cache = EmbeddingCache(Path(tmp) / "embeddings.sqlite")
        for weight in weights:
            ranker = SemanticRanker(
                provider_embedder(settings, "scripted"), model="scripted", cache=cache, weight=weight
            )
            started = time.perf_counter()
            top1, top3 = hit_rates(outcomes(ranker))
            seconds = time.perf_counter() - started
            print(
                f"blended, weight {weight:.2f} (scripted embeddings): top-1 {top1:6.1%}  top-3 "
                f"{top3:6.1%}  ({seconds * 1000:.0f} ms, {ranker.embedded} texts embedded)"
            )


def main() -> None:
    started = time.perf_counter()
    results = outcomes()
    seconds = time.perf_counter() - started
    top1, top3 = hit_rates(results)
    print(
        f"corpus: {len(corpus_specs())} tools, {len(results)} labelled "
        f"queries (index built and queried in {seconds * 1000:.0f} ms)"
    )
    print(f"top-1 hit rate: {top1:6.1%}")
    print(f"top-3 hit rate: {top3:6.1%}")
    for result in results:
        if result.rank != 1:
            where = f"rank {result.rank}" if result.rank else "missed"
            print(
                f"  {where:8}  {result.query!r}: wanted {', '.join(result.expected)}"
                f"; got {', '.join(result.found) or 'nothing'}"
            )


if __name__ == "__main__":
    main()
    if "--semantic" in sys.argv[1:]:
        semantic()
