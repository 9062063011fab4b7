"""A search index that ranks each field by BM25 of its own, for documents whose fields differ a lot in length.

FTS5's ``bm25()`` normalises by the length of the whole row, so in one table a tool with a long parameter list
loses on every field, its name included. Here each field is its own FTS5 table: BM25 per field, with that
field's own average length, and a document's score is the weighted sum (the "BM25 per field, summed" scheme).
Query words are also widened by a small thesaurus of task words (``kairox.search._text.RELATED``), counted at
``RELATED_WEIGHT`` of a word the user wrote. Built in memory: a few thousand tools index in milliseconds.
"""

import sqlite3
from collections.abc import Iterable, Mapping, Sequence

from kairox.search._index import TOKENIZER, SearchHit, TermMatch, _column, _phrase
from kairox.search._text import index_text, query_words, related_words

RELATED_WEIGHT = 0.8
"""What a thesaurus word counts for, against 1 for a word of the query."""


class FieldedSearchIndex:
    """Documents ``key -> {field: text}``, each field ranked on its own; ``search()`` sums the weighted fields."""

    def __init__(self, fields: Mapping[str, float], documents: Iterable[tuple[str, Mapping[str, str]]]) -> None:
        self.fields = dict(fields)
        docs = list(documents)
        self.keys = [key for key, _ in docs]
        self._db = sqlite3.connect(":memory:", check_same_thread=False)
        for name in self.fields:
            table = _column("f_" + name)
            self._db.execute(f"CREATE VIRTUAL TABLE {table} USING fts5(body, tokenize='{TOKENIZER}')")
            self._db.executemany(
                f"INSERT INTO {table} (rowid, body) VALUES (?, ?)",
                [(rowid, index_text(doc.get(name, ""))) for rowid, (_, doc) in enumerate(docs, 1) if doc.get(name)],
            )
        self._db.commit()

    def __len__(self) -> int:
        return len(self.keys)

    def close(self) -> None:
        self._db.close()

    def _scores(self, words: Sequence[str], factor: float, rowids: Sequence[int] = ()) -> dict[int, dict[str, float]]:
        """rowid -> field -> weighted BM25 of ``words`` in that field (only ``rowids`` when given)."""
        out: dict[int, dict[str, float]] = {}
        if not words:
            return out
        expression = " OR ".join(_phrase(w) for w in words)
        only = f" AND rowid IN ({', '.join('?' * len(rowids))})" if rowids else ""
        for name, weight in self.fields.items():
            table = _column("f_" + name)
            try:
                rows = self._db.execute(
                    f"SELECT rowid, bm25({table}) FROM {table} WHERE {table} MATCH ?{only}", (expression, *rowids)
                )
                for rowid, score in rows:
                    out.setdefault(rowid, {})[name] = -score * weight * factor
            except sqlite3.OperationalError:  # a word FTS5 cannot read as a phrase finds nothing
                continue
        return out

    def search(self, query: str | Sequence[str], *, limit: int = 5) -> list[SearchHit]:
        words = query_words(query) if isinstance(query, str) else list(dict.fromkeys(w for w in query if w))
        if not words or limit <= 0:
            return []
        related = [w for w in related_words(words) if w not in words]
        totals: dict[int, float] = {}
        for factor, group in ((1.0, words), (RELATED_WEIGHT, related)):
            for rowid, by_field in self._scores(group, factor).items():
                totals[rowid] = totals.get(rowid, 0.0) + sum(by_field.values())
        ranked = sorted(totals.items(), key=lambda item: (-item[1], item[0]))[:limit]
        rowids = [rowid for rowid, _ in ranked]
        found: dict[int, list[TermMatch]] = {}
        order = sorted(self.fields, key=lambda n: -self.fields[n])
        for word in (*words, *related):
            factor = 1.0 if word in words else RELATED_WEIGHT
            for rowid, by_field in self._scores([word], factor, rowids).items():
                term = word if word in words else f"~{word}"
                found.setdefault(rowid, []).append(
                    TermMatch(term=term, fields=tuple(n for n in order if n in by_field), score=sum(by_field.values()))
                )
        return [
            SearchHit(
                key=self.keys[rowid - 1],
                score=score,
                terms=tuple(sorted(found.get(rowid, []), key=lambda m: (-m.score, m.term))),
            )
            for rowid, score in ranked
        ]
