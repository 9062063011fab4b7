"""A ranked full-text index over small documents with named, weighted fields: SQLite FTS5 with BM25.

Documents are tools (name, server, description, parameters) or skills (name, keywords, trigger examples,
description). FTS5 ranks with BM25 over the fields, each field weighted; its ``porter`` tokenizer lets
``deploying`` meet ``deploy``. A hit says why: for every query word it holds, the fields holding it and the
word's share of the score, both read back from FTS5 itself (the score of the word alone, and that score with
one field weighted at a time) so the explanation is the ranking, not a second opinion.
"""

import itertools
import sqlite3
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from kairox.search._text import index_text, query_words

TOKENIZER = "porter unicode61 remove_diacritics 2"
MIN_DOCUMENTS = 32
"""An index of fewer documents is filled up with empty ones: BM25's idf of a word that most documents hold is about
zero (FTS5 floors it at 1e-6), so with one or two skills every match scored 0.00."""


@dataclass(frozen=True, kw_only=True, slots=True)
class TermMatch:
    """One query word a document holds: where, and how much it added to the document's score."""

    term: str
    fields: tuple[str, ...]
    """The fields holding it, the most heavily weighted first."""
    score: float


@dataclass(frozen=True, kw_only=True, slots=True)
class SearchHit:
    key: str
    score: float
    """BM25 over the weighted fields, higher is better (FTS5's ``bm25()`` negated)."""
    terms: tuple[TermMatch, ...] = ()
    """The query words it matched, the largest share of the score first (empty when not explained)."""
    phrases: tuple[str, ...] = ()
    """Word pairs of the query found together in one field."""


class SearchIndex:
    """Documents ``key -> {field: text}``; ``search()`` ranks them for a query."""

    def __init__(self, connection: sqlite3.Connection, fields: Mapping[str, float], keys: Sequence[str]) -> None:
        self._db = connection
        self.fields = dict(fields)
        self.keys = list(keys)
        weights = ", ".join(str(float(w)) for w in (0.0, *self.fields.values()))
        self._rank = f"bm25(docs, {weights})"
        self._order = sorted(self.fields, key=lambda n: -self.fields[n])
        """The fields by weight, heaviest first: the order a word's fields are named in."""
        self._held = ", ".join(
            f"bm25(docs, 0.0, {', '.join('1.0' if other == name else '0.0' for other in self.fields)}) < 0"
            for name in self._order
        )
        """Per field in ``_order``: whether it holds the searched words (their BM25 counted in that field alone)."""

    # --- building and opening -------------------------------------------------------------------------------

    @classmethod
    def build(cls, fields: Mapping[str, float], documents: Iterable[tuple[str, Mapping[str, str]]]) -> "SearchIndex":
        """Index ``documents`` in memory."""
        names = list(fields)
        rows = [(key, *(index_text(doc.get(name, "")) for name in names)) for key, doc in documents]
        keys = [row[0] for row in rows]
        rows += [("", *[""] * len(names))] * (MIN_DOCUMENTS - len(rows))  # they hold no word: never found
        db = sqlite3.connect(":memory:", check_same_thread=False)
        columns = ", ".join(_column(n) for n in names)
        db.execute(f"CREATE VIRTUAL TABLE docs USING fts5(key UNINDEXED, {columns}, tokenize='{TOKENIZER}')")
        db.executemany(f"INSERT INTO docs VALUES ({', '.join('?' * (len(names) + 1))})", rows)
        db.commit()
        return cls(db, fields, keys)

    def close(self) -> None:
        self._db.close()

    def __len__(self) -> int:
        return len(self.keys)

    # --- searching ------------------------------------------------------------------------------------------

    def search(self, query: str | Sequence[str], *, limit: int = 5, phrases: bool = False) -> list[SearchHit]:
        """The best ``limit`` documents for ``query`` (text, or words already chosen), best first. Any query
        word may match (OR); BM25 rewards the rare ones and the weighted fields. Each hit lists its words (and,
        with ``phrases``, the pairs of adjacent query words it holds together)."""
        words = query_words(query) if isinstance(query, str) else list(dict.fromkeys(w for w in query if w))
        if not words or limit <= 0:
            return []
        try:
            ranked = self._top(" OR ".join(_phrase(w) for w in words), limit)
        except sqlite3.OperationalError:  # a word FTS5 cannot parse as a phrase; nothing to find with it
            return []
        rowids = [rowid for rowid, _ in ranked]
        found = self._explain(rowids, words)
        pairs: dict[int, list[str]] = {}
        if phrases:
            # only pairs whose two words share a field of some hit can be adjacent there: ask FTS5 about those
            for a, b in itertools.pairwise(words):
                if any(_share_field(found.get(r, []), a, b) for r in rowids):
                    for rowid in self._holding(rowids, f"{a} {b}"):
                        pairs.setdefault(rowid, []).append(f"{a} {b}")
        hits = []
        for rowid, score in ranked:
            matches = sorted(found.get(rowid, []), key=lambda m: (-m.score, m.term))
            hits.append(
                SearchHit(
                    key=self.keys[rowid - 1], score=-score, terms=tuple(matches), phrases=tuple(pairs.get(rowid, ()))
                )
            )
        return hits

    def _top(self, expression: str, limit: int) -> list[tuple[int, float]]:
        return self._db.execute(
            f"SELECT rowid, {self._rank} AS score FROM docs WHERE docs MATCH ? ORDER BY score, rowid LIMIT ?",
            (expression, limit),
        ).fetchall()

    def _explain(self, rowids: list[int], words: list[str]) -> dict[int, list[TermMatch]]:
        """Per document, the words it holds: each word searched alone among these documents gives its share of
        BM25 and, by ``bm25()`` weighted on one field at a time (below zero where that field holds the word), the
        fields it is in.

        ``+rowid`` keeps the documents from being handed to FTS5 one by one: FTS5 would run the word's search
        again for each (and ``bm25()`` count the documents holding it again), where here it runs once, over the
        stretch of rowids from the first of these documents to the last, and SQLite keeps only these; ``bm25()``
        and its per-field calls share that count and run for them alone."""
        if not rowids or not words:
            return {}
        sql = f"SELECT rowid, {self._rank}, {self._held} FROM docs WHERE docs MATCH ? AND {_among(rowids)}"
        found: dict[int, list[TermMatch]] = {}
        for word in words:
            for rowid, score, *held in self._db.execute(sql, (_phrase(word), *_among_args(rowids))):
                fields = tuple(name for name, flag in zip(self._order, held, strict=True) if flag)
                found.setdefault(rowid, []).append(TermMatch(term=word, fields=fields, score=-score))
        return found

    def _holding(self, rowids: list[int], words: str) -> list[int]:
        """Which of these documents hold ``words`` as a phrase (no score: nothing for ``bm25()`` to count)."""
        sql = f"SELECT rowid FROM docs WHERE docs MATCH ? AND {_among(rowids)}"
        return [rowid for (rowid,) in self._db.execute(sql, (_phrase(words), *_among_args(rowids)))]


def _among(rowids: list[int]) -> str:
    """A condition keeping only ``rowids``: FTS5 reads the rowids from the least to the greatest of them (its
    rowid range), SQLite keeps these (``+rowid``: not handed to FTS5 one at a time). Arguments: ``_among_args``."""
    return f"rowid BETWEEN ? AND ? AND +rowid IN ({', '.join('?' * len(rowids))})"


def _among_args(rowids: list[int]) -> tuple[int, ...]:
    return (min(rowids), max(rowids), *rowids)


def _share_field(matches: list[TermMatch], first: str, second: str) -> bool:
    fields = {m.term: set(m.fields) for m in matches}
    return bool(fields.get(first, set()) & fields.get(second, set()))


def _column(name: str) -> str:
    if not name.isidentifier():
        raise ValueError(f"search field {name!r} is not an identifier")
    return f'"{name}"'


def _phrase(text: str) -> str:
    """A word (or words) as one FTS5 phrase: quoted, so ``AND``, ``NEAR`` or ``-`` in it are just text."""
    return '"' + text.replace('"', '""') + '"'
