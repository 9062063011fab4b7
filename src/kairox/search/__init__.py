"""Ranked full-text search (SQLite FTS5, BM25) shared by tool search and skill selection (R2, S5)."""

from kairox.search._fielded import FieldedSearchIndex
from kairox.search._index import SearchHit, SearchIndex, TermMatch
from kairox.search._semantic import Blended, Embedder, EmbeddingCache, SemanticRanker, blend
from kairox.search._text import (
    RELATED,
    STOPWORDS,
    index_text,
    query_words,
    related_words,
    split_identifier,
)

__all__ = [
    "RELATED",
    "STOPWORDS",
    "Blended",
    "Embedder",
    "EmbeddingCache",
    "FieldedSearchIndex",
    "SearchHit",
    "SearchIndex",
    "SemanticRanker",
    "TermMatch",
    "blend",
    "index_text",
    "query_words",
    "related_words",
    "split_identifier",
]
