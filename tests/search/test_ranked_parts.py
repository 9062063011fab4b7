"""Ranking in parts (``SearchIndex._ranked``) gives what one ``ORDER BY bm25 LIMIT`` over every document holding
any query word gives: the same documents, the same scores to the last bit, ties in the same order."""

import random

from kairox.search import SearchIndex
from kairox.search._index import _phrase

WORDS = [
    "review",
    "pull",
    "request",
    "test",
    "coverage",
    "deploy",
    "service",
    "release",
    "notes",
    "changelog",
    "database",
    "migration",
    "schema",
    "lint",
    "format",
    "python",
    "docker",
    "security",
    "audit",
    "secrets",
    "rotate",
    "incident",
    "benchmark",
    "profile",
    "memory",
    "leak",
    "cache",
    "latency",
    "token",
    "report",
]
FIELDS = {"name": 3.0, "keywords": 3.0, "examples": 2.0, "description": 1.0}


def build(count: int, seed: int, *, skew: float = 0.0) -> SearchIndex:
    """``count`` documents of ten words each; with ``skew``, the words early in ``WORDS`` are that much more
    common than the late ones (a few rare words then outweigh many common ones)."""
    rng = random.Random(seed)
    weights = [1.0 / (rank + 1) ** skew for rank in range(len(WORDS))]
    documents = []
    for i in range(count):
        words = [] if skew else rng.sample(WORDS, 10)
        while len(words) < 10:
            word = rng.choices(WORDS, weights)[0]
            if word not in words:
                words.append(word)
        documents.append(
            (
                f"doc-{i}",
                {
                    "name": f"doc {i}",
                    "keywords": "\n".join(words[:2]),
                    "examples": " ".join(words[2:4]),
                    "description": "Helps with " + " ".join(words[4:9]) + ". " + words[9] * rng.randint(0, 2),
                },
            )
        )
    return SearchIndex.build(FIELDS, documents)


def test_parts_rank_as_the_one_query_does() -> None:
    rng = random.Random(11)
    compared = 0
    for count, seed in ((40, 1), (1500, 2)):
        index = build(count, seed)
        for _ in range(120):
            words = list(dict.fromkeys(rng.sample((*WORDS, "absent"), rng.randint(2, 5))))
            phrases = [_phrase(w) for w in words]
            for limit in (1, 3, 5, 12):
                assert index._ranked(phrases, limit) == index._top(" OR ".join(phrases), limit), (words, limit)
                compared += 1
        index.close()
    assert compared == 960


def test_parts_rank_as_the_one_query_does_when_rare_words_outweigh_common_ones() -> None:
    rng = random.Random(12)
    compared = 0
    for count, seed, skew in ((300, 3, 1.5), (2000, 4, 1.0)):
        index = build(count, seed, skew=skew)
        for _ in range(100):
            words = list(dict.fromkeys(rng.sample((*WORDS, "absent"), rng.randint(2, 6))))
            phrases = [_phrase(w) for w in words]
            for limit in (1, 5, 12):
                assert index._ranked(phrases, limit) == index._top(" OR ".join(phrases), limit), (words, limit)
                compared += 1
        index.close()
    assert compared == 600


def test_search_results_and_explanations_stand() -> None:
    index = build(300, 5)
    hits = index.search(["pull", "request", "coverage"], limit=4, phrases=True)
    single = index._top(" OR ".join(_phrase(w) for w in ("pull", "request", "coverage")), 4)
    assert [(hit.key, -hit.score) for hit in hits] == [(index.keys[rowid - 1], score) for rowid, score in single]
    assert all(hit.terms for hit in hits)
