"""Hit rates of tool search on the corpus of real MCP tool definitions (tests/search/corpus/): for each task
phrased as a user would, is a right tool first (top-1) or among the first three (top-3)? Misses are listed.

Run: PYTHONPATH=src .venv/bin/python bench/tool_search_quality.py
"""

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.search._corpus import corpus_specs, hit_rates, outcomes


def main() -> None:
    started = time.perf_counter()
    results = outcomes()
    seconds = time.perf_counter() - started
    top1, top3 = hit_rates(results)
    print(f"corpus: {len(corpus_specs())} tools, {len(results)} labelled queries (index built and queried in {seconds * 1000:.0f} ms)")
    print(f"top-1 hit rate: {top1:6.1%}")
    print(f"top-3 hit rate: {top3:6.1%}")
    for result in results:
        if result.rank != 1:
            where = f"rank {result.rank}" if result.rank else "missed"
            print(f"  {where:8}  {result.query!r}: wanted {', '.join(result.expected)}; got {', '.join(result.found) or 'nothing'}")


if __name__ == "__main__":
    main()
