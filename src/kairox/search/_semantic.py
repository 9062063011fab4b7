"""Optional semantic matching (the seed's ``semantic_match``): embeddings combined with the lexical score.

Off by default and never required: an ``Embedder`` turns texts into vectors (Kairox's is the configured model
provider's OpenAI-compatible ``/v1/embeddings``, in ``kairox.agent``); ``EmbeddingCache`` keeps every vector by
the digest of its model and text under the Kairox home, so a tool's description is embedded once, not once per
session. ``blend`` ranks by ``(1 - weight) * lexical + weight * similarity``, the lexical score scaled to the best
hit's; a hit says both parts. When the embedder fails the caller keeps the lexical ranking and says why.
"""

import contextlib
import hashlib
import math
import operator
import sqlite3
import struct
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

Embedder = Callable[[Sequence[str]], list[list[float]]]
"""Texts -> one vector each, in order; raises on failure (the caller falls back to the lexical ranking)."""


class EmbeddingCache:
    """Vectors by ``sha256(model, text)`` in one SQLite file (``$KAIROX_HOME/cache/embeddings.sqlite``). A folder
    that cannot be written only costs embedding the texts again."""

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self._memory: dict[str, list[float]] = {}
        self._lock = threading.Lock()
        self._db: sqlite3.Connection | None = None
        if path is not None:
            with contextlib.suppress(OSError, sqlite3.Error):
                path.parent.mkdir(parents=True, exist_ok=True)
                db = sqlite3.connect(str(path), check_same_thread=False)
                db.execute("CREATE TABLE IF NOT EXISTS vectors (digest TEXT PRIMARY KEY, vector BLOB)")
                db.commit()
                self._db = db

    @staticmethod
    def key(model: str, text: str) -> str:
        return hashlib.sha256(f"{model}\0{text}".encode("utf-8", "surrogatepass")).hexdigest()

    def get_many(self, model: str, texts: Sequence[str]) -> dict[str, list[float]]:
        """The cached vectors of those ``texts`` that have one, by text."""
        keys = {self.key(model, t): t for t in texts}
        found = {keys[k]: v for k, v in ((k, self._memory.get(k)) for k in keys) if v is not None}
        missing = [k for k in keys if keys[k] not in found]
        if missing and self._db is not None:
            with self._lock, contextlib.suppress(sqlite3.Error):
                for start in range(0, len(missing), 500):
                    chunk = missing[start : start + 500]
                    rows = self._db.execute(
                        f"SELECT digest, vector FROM vectors WHERE digest IN ({', '.join('?' * len(chunk))})", chunk
                    )
                    for digest, blob in rows:
                        vector = list(struct.unpack(f"<{len(blob) // 4}f", blob))
                        self._memory[digest] = vector
                        found[keys[digest]] = vector
        return found

    def put_many(self, model: str, vectors: Mapping[str, Sequence[float]]) -> None:
        rows = []
        for text, vector in vectors.items():
            key = self.key(model, text)
            self._memory[key] = list(vector)
            rows.append((key, struct.pack(f"<{len(vector)}f", *vector)))
        if self._db is not None and rows:
            with self._lock, contextlib.suppress(sqlite3.Error):
                self._db.executemany("INSERT OR REPLACE INTO vectors VALUES (?, ?)", rows)
                self._db.commit()

    def close(self) -> None:
        if self._db is not None:
            self._db.close()
            self._db = None


class SemanticRanker:
    """Embeds texts through ``embedder`` (model ``model``), the cache first; one call for every text missing."""

    def __init__(self, embedder: Embedder, *, model: str, cache: EmbeddingCache, weight: float = 0.5) -> None:
        if not 0.0 <= weight <= 1.0:
            raise ValueError("the semantic weight must be from 0 to 1")
        self.embedder, self.model, self.cache, self.weight = embedder, model, cache, weight
        self.embedded = 0
        """Texts sent to the embedder so far (the cache answered the others)."""

    def vectors(self, texts: Sequence[str]) -> list[list[float]]:
        known = self.cache.get_many(self.model, texts)
        missing = list(dict.fromkeys(t for t in texts if t not in known))
        if missing:
            fresh = self.embedder(missing)
            if len(fresh) != len(missing):
                raise ValueError(f"the embeddings endpoint returned {len(fresh)} vectors for {len(missing)} texts")
            self.embedded += len(missing)
            made = {text: _unit(vector) for text, vector in zip(missing, fresh, strict=True)}  # kept as unit vectors
            self.cache.put_many(self.model, made)
            known.update(made)
        return [known[t] for t in texts]

    def similarities(self, query: str, documents: Mapping[str, str]) -> dict[str, float]:
        """key -> cosine similarity of the query and each document's text (the vectors are kept unit length)."""
        keys = list(documents)
        vectors = self.vectors([query, *(documents[k] for k in keys)])
        q = vectors[0]
        return {key: _dot(q, v) for key, v in zip(keys, vectors[1:], strict=True)}


@dataclass(frozen=True, kw_only=True, slots=True)
class Blended:
    key: str
    score: float
    """``(1 - weight) * lexical + weight * similarity``."""
    lexical: float
    """The BM25 score scaled to the best lexical hit's (0 when the words did not match)."""
    similarity: float


def blend(lexical: Mapping[str, float], similarity: Mapping[str, float], *, weight: float, limit: int) -> list[Blended]:
    """The best ``limit`` keys by the weighted sum of both scores (ties: the lexical score, then the key)."""
    best = max(lexical.values(), default=0.0)
    scaled = {k: (v / best if best > 0 else 0.0) for k, v in lexical.items()}
    keys = set(scaled) | set(similarity)
    rows = [
        Blended(
            key=k,
            score=(1 - weight) * scaled.get(k, 0.0) + weight * similarity.get(k, 0.0),
            lexical=scaled.get(k, 0.0),
            similarity=similarity.get(k, 0.0),
        )
        for k in keys
    ]
    rows.sort(key=lambda b: (-b.score, -b.lexical, b.key))
    return rows[:limit]


def _unit(vector: Sequence[float]) -> list[float]:
    norm = math.sqrt(_dot(vector, vector))
    return [x / norm for x in vector] if norm > 0 else list(vector)


def _dot(a: Sequence[float], b: Sequence[float]) -> float:
    return float(sum(map(operator.mul, a, b)))
