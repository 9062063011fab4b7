"""A ranked full-text index over small documents with named, weighted fields: SQLite FTS5 with BM25.

Documents are tools (name, server, description, parameters) or skills (name, keywords, trigger examples,
description). FTS5 ranks with BM25 over the fields, each field weighted; its ``porter`` tokenizer lets
``deploying`` meet ``deploy``. A hit says why: for every query word it holds, the fields holding it and the
word's share of the score, both read back from FTS5 itself (the score of the word alone, and that score with
one field weighted at a time) so the explanation is the ranking, not a second opinion.

An index is built in memory, or stored in a file with a digest of its documents so that a later process
opens it instead of building it again (``SearchIndex.open``).
"""

import contextlib
import itertools
import math
import os
import sqlite3
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from kairox.search._text import index_text, query_words

TOKENIZER = "porter unicode61 remove_diacritics 2"
SCHEMA_VERSION = "1"
_BM25_K1 = 1.2
"""FTS5's ``bm25()`` constant k1: a word adds at most ``idf * (k1 + 1)`` to a document's score."""
MIN_DOCUMENTS = 32
"""An index of fewer documents is filled up with empty ones: BM25's idf of a word that most documents hold is about
zero (FTS5 floors it at 1e-6), so with one or two skills every match scored 0.00."""
_MAX_PARTS = 5
"""Up to this many query words (held by some document) the ranking goes in parts (``_ranked``); past it, one
query: each part costs a pass over every word's list, and six words make ten parts of three or more, which cost
as much as the one query on the skills bench."""


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
        self._total = connection.execute("SELECT count(*) FROM docs").fetchone()[0]
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
    def build(
        cls,
        fields: Mapping[str, float],
        documents: Iterable[tuple[str, Mapping[str, str]]],
        *,
        path: Path | None = None,
        digest: str = "",
    ) -> "SearchIndex":
        """Index ``documents``; with ``path``, also store the index there under ``digest`` (written whole, then
        renamed, so a reader never opens half an index)."""
        names = list(fields)
        rows = [(key, *(index_text(doc.get(name, "")) for name in names)) for key, doc in documents]
        keys = [row[0] for row in rows]
        rows += [("", *[""] * len(names))] * (MIN_DOCUMENTS - len(rows))  # they hold no word: never found
        db = sqlite3.connect(":memory:", check_same_thread=False)
        columns = ", ".join(_column(n) for n in names)
        db.execute(f"CREATE VIRTUAL TABLE docs USING fts5(key UNINDEXED, {columns}, tokenize='{TOKENIZER}')")
        db.executemany(f"INSERT INTO docs VALUES ({', '.join('?' * (len(names) + 1))})", rows)
        db.execute("CREATE TABLE meta (name TEXT PRIMARY KEY, value TEXT)")
        db.executemany(
            "INSERT INTO meta VALUES (?, ?)",
            [("digest", digest), ("schema", SCHEMA_VERSION), ("fields", " ".join(names))],
        )
        db.commit()
        if path is not None:
            _store(db, path)
        return cls(db, fields, keys)

    @classmethod
    def open(
        cls, path: Path, fields: Mapping[str, float], *, digest: str, keys: Sequence[str] | None = None
    ) -> "SearchIndex | None":
        """The index stored at ``path`` if it holds these fields and documents (``digest``), else ``None``.
        ``keys``: the documents' keys in the order they were built, when the digest covers them (not read back)."""
        if not path.is_file():
            return None
        try:
            db = sqlite3.connect(f"file:{path}?mode=ro", uri=True, check_same_thread=False)
            meta = dict(db.execute("SELECT name, value FROM meta").fetchall())
            if (
                meta.get("digest") != digest
                or meta.get("schema") != SCHEMA_VERSION
                or meta.get("fields") != " ".join(fields)
            ):
                db.close()
                return None
            if keys is None:
                keys = [row[0] for row in db.execute("SELECT key FROM docs WHERE key != '' ORDER BY rowid")]
            memory = sqlite3.connect(":memory:", check_same_thread=False)
            db.backup(memory)  # queries read pages from memory, not through the file's page cache
            db.close()
        except sqlite3.Error:  # a damaged or foreign file is rebuilt, not reported
            return None
        return cls(memory, fields, keys)

    def close(self) -> None:
        self._db.close()

    def __len__(self) -> int:
        return len(self.keys)

    # --- searching ------------------------------------------------------------------------------------------

    def search(
        self,
        query: str | Sequence[str],
        *,
        limit: int = 5,
        explain: bool = True,
        phrases: bool = False,
    ) -> list[SearchHit]:
        """The best ``limit`` documents for ``query`` (text, or words already chosen), best first. Any query
        word may match (OR); BM25 rewards the rare ones and the weighted fields. With ``explain``, each hit
        lists its words (and, with ``phrases``, the pairs of adjacent query words it holds together)."""
        words = query_words(query) if isinstance(query, str) else list(dict.fromkeys(w for w in query if w))
        if not words or limit <= 0:
            return []
        try:
            ranked = self._ranked([_phrase(w) for w in words], limit)
        except sqlite3.OperationalError:  # a word FTS5 cannot parse as a phrase; nothing to find with it
            return []
        if not explain:
            return [SearchHit(key=self.keys[rowid - 1], score=-score) for rowid, score in ranked]
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

    def _ranked(self, phrases: list[str], limit: int) -> list[tuple[int, float]]:
        """The best ``limit`` (rowid, bm25) for ``phrases`` OR-ed: what one ``ORDER BY bm25 LIMIT`` over every
        document holding any of them gives, without scoring each of those documents.

        A query of common words holds most documents (8,000 of 10,000 skills), and BM25 of each is the cost. Here
        the documents are ranked in parts that do not overlap, each by BM25 over all the words and cut to
        ``limit`` inside SQLite: past three words, the documents holding three or more of them, by the last two
        they hold, then those holding exactly two (up to three words, those holding two or more, by the last
        one); then those holding exactly one. A word adds less than ``idf * (k1 + 1)`` to a score, so a part
        whose words together cannot reach the ``limit``-th score found so far is not ranked at all; the parts go
        best bound first, so the first such part ends the ranking (on the skills bench, the documents holding
        fewer than three of five common words are never scored). Words no document holds are left out. Every
        part names each word once, and the words a document may hold three or more of in the query's order, so
        each score is the very sum BM25 of the whole query gives (a word a document lacks adds exactly zero; two
        words add up the same in either order), and ties fall by rowid as there."""
        if len(phrases) < 2:
            return self._top(" OR ".join(phrases), limit)
        total = self._total
        held: list[tuple[str, float]] = []
        for phrase in phrases:
            holding = self._db.execute("SELECT count(*) FROM docs WHERE docs MATCH ?", (phrase,)).fetchone()[0]
            if holding:  # a word no document holds adds nothing anywhere: it is left out
                idf = max(math.log((total - holding + 0.5) / (holding + 0.5)), 1e-6)  # as FTS5's bm25() takes it
                held.append((phrase, idf * (_BM25_K1 + 1.0) * (1.0 + 1e-9)))
        phrases, bounds = [p for p, _ in held], [b for _, b in held]
        count = len(phrases)
        if count < 2 or count > _MAX_PARTS:
            return self._top(" OR ".join(phrases), limit) if phrases else []
        parts: list[tuple[float, str]] = []
        if count <= 3:  # documents holding two or more words, by the last one they hold (j)
            for j in range(1, count):
                expression = f"({' OR '.join(phrases[:j])}) AND {phrases[j]}"
                if j + 1 < count:
                    expression += f" NOT ({' OR '.join(phrases[j + 1 :])})"
                parts.append((sum(bounds[: j + 1]), expression))
        else:  # three or more, by the last two they hold (i, j); then exactly two
            for j in range(2, count):
                for i in range(1, j):
                    # at least one word before i, word i, none between i and j, word j, none after j
                    expression = f"({' OR '.join(phrases[:i])}) AND {phrases[i]}"
                    if i + 1 < j:
                        expression += f" NOT ({' OR '.join(phrases[i + 1 : j])})"
                    expression = f"({expression}) AND {phrases[j]}"
                    if j + 1 < count:
                        expression += f" NOT ({' OR '.join(phrases[j + 1 :])})"
                    parts.append((sum(bounds[: i + 1]) + bounds[j], expression))
            for i, j in itertools.combinations(range(count), 2):
                others = " OR ".join(p for k, p in enumerate(phrases) if k not in (i, j))
                parts.append((bounds[i] + bounds[j], f"{phrases[i]} AND {phrases[j]} NOT ({others})"))
        for j, phrase in enumerate(phrases):
            others = " OR ".join(p for i, p in enumerate(phrases) if i != j)
            parts.append((bounds[j], f"{phrase} NOT ({others})"))
        parts.sort(key=lambda part: -part[0])  # stable: among equal bounds, more words first
        found: list[tuple[int, float]] = []
        for bound, expression in parts:
            bar = -found[limit - 1][1] if len(found) >= limit else -math.inf
            if bound < bar:
                break
            found += self._top(expression, limit)
            found.sort(key=lambda row: (row[1], row[0]))
            del found[limit:]
        return found

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


def _store(db: sqlite3.Connection, path: Path) -> None:
    """Write the index whole to a temporary file, then rename it, so a reader never opens half an index. A
    folder that cannot be written only costs the next process a rebuild."""
    target = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with contextlib.suppress(FileNotFoundError):
            target.unlink()
        stored = sqlite3.connect(str(target))
        try:
            db.backup(stored)
        finally:
            stored.close()
        os.replace(target, path)
    except (OSError, sqlite3.Error):
        with contextlib.suppress(OSError):
            target.unlink()


def _column(name: str) -> str:
    if not name.isidentifier():
        raise ValueError(f"search field {name!r} is not an identifier")
    return f'"{name}"'


def _phrase(text: str) -> str:
    """A word (or words) as one FTS5 phrase: quoted, so ``AND``, ``NEAR`` or ``-`` in it are just text."""
    return '"' + text.replace('"', '""') + '"'
