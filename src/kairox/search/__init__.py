"""Ranked full-text search (SQLite FTS5, BM25) shared by tool search and skill selection (R2, S5)."""

from kairox.search._fielded import FieldedSearchIndex
from kairox.search._index import SearchHit, SearchIndex, TermMatch
from kairox.search._semantic import Embedder, EmbeddingCache, SemanticRanker, blend
from kairox.search._text import query_words, split_identifier

__all__ = [
    "Embedder",
    "EmbeddingCache",
    "FieldedSearchIndex",
    "SearchHit",
    "SearchIndex",
    "SemanticRanker",
    "TermMatch",
    "blend",
    "query_words",
    "split_identifier",
]
