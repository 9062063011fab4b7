"""Selecting skills for a prompt (S5): a ranked lexical match that says why.

Skills are documents of the shared search index (``kairox.search``: SQLite FTS5, BM25) with four weighted
fields: name, keywords, trigger examples with ``when_to_use``, description. The prompt's words (stopwords out,
lightly stemmed, so the explanation names ``test`` for ``tested``) are searched; pairs of adjacent words count
as phrases too, so a skill holding ``pull request`` whole outranks one holding ``pull`` and ``request`` apart.
Each match lists the words it shares with the prompt, the fields holding each, and each word's share of the
score, as FTS5 computed them. The index can be stored in a file beside the skill cache and opened again while
the skills are unchanged.
"""

import hashlib
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from kairox._util import JsonObject
from kairox.search import SearchHit, SearchIndex
from kairox.skills._model import SkillDef

FIELD_WEIGHTS: dict[str, float] = {"name": 3.0, "keywords": 3.0, "examples": 2.0, "description": 1.0}

_WORD = re.compile(r"[a-z0-9]+")
STOPWORDS = frozenset(
    ["a", "an", "and", "are", "as", "at", "be", "been", "but", "by", "can", "do", "does", "for", "from", "has", "have", "how", "i", "if", "in", "into", "is", "it", "its", "me", "my", "no", "not", "of", "on", "or", "our", "please", "should", "so", "some", "than", "that", "the", "their", "them", "then", "there", "these", "they", "this", "those", "to", "up", "us", "use", "used", "using", "was", "we", "were", "what", "when", "where", "which", "while", "who", "will", "with", "would", "you", "your"]
)


def stem(word: str) -> str:
    """A light suffix stripper, enough for ``tests``/``testing``/``tested`` to meet ``test`` and
    ``debugging`` to meet ``debug``."""
    if len(word) > 6 and word.endswith("ically"):
        return word[:-4]
    if len(word) > 5 and word.endswith("ly") and not word.endswith("ply"):
        return word[:-2]
    if len(word) > 5 and word.endswith("ing"):
        return _undouble(word[:-3])
    if len(word) > 4 and word.endswith(("ied", "ies")):
        return word[:-3] + "y"
    if len(word) > 4 and word.endswith("ed") and not word.endswith("eed"):
        return _undouble(word[:-2])
    if len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is")):
        return word[:-1]
    return word


def _undouble(word: str) -> str:
    """``debugg`` -> ``debug``, ``stopp`` -> ``stop`` (but ``install`` and ``pass`` keep theirs)."""
    if len(word) > 2 and word[-1] == word[-2] and word[-1] not in "aeiouls":
        return word[:-1]
    return word


def terms(text: str) -> list[str]:
    """Stemmed words of ``text`` without stopwords, in order."""
    return [stem(w) for w in _WORD.findall(text.lower()) if w not in STOPWORDS]


@dataclass(frozen=True, kw_only=True, slots=True)
class TermHit:
    term: str
    fields: tuple[str, ...]
    """Where the skill holds the term, best field first."""
    score: float


@dataclass(frozen=True, kw_only=True, slots=True)
class SkillMatch:
    """One skill a prompt matched: which, what score, and which terms made it."""

    skill: SkillDef
    score: float
    hits: tuple[TermHit, ...]
    phrases: tuple[str, ...] = ()
    """Multi-word keywords found whole in the prompt."""

    @property
    def terms(self) -> tuple[str, ...]:
        return tuple(hit.term for hit in self.hits)

    def explain(self) -> str:
        parts = [f"{hit.term} ({', '.join(hit.fields)})" for hit in self.hits]
        if self.phrases:
            parts.append("phrase " + ", ".join(repr(p) for p in self.phrases))
        return f"{self.skill.qualified_name} scored {self.score:.2f}: matched " + "; ".join(parts)

    def to_json(self) -> JsonObject:
        return {
            "name": self.skill.qualified_name,
            "score": round(self.score, 4),
            "terms": [{"term": h.term, "fields": list(h.fields), "score": round(h.score, 4)} for h in self.hits],
            "phrases": list(self.phrases),
            "path": str(self.skill.path),
            "why": self.explain(),
        }


def _skill_fields(skill: SkillDef) -> dict[str, str]:
    fm = skill.frontmatter
    return {
        "name": skill.name.replace("-", " ").replace("_", " ") + " " + (skill.plugin or ""),
        "keywords": "\n".join(fm.keywords),
        "examples": "\n".join((fm.when_to_use, *fm.examples)),
        "description": skill.description,
    }


class SkillIndex:
    """The skills as a search index; build once (or open it from ``path``), query many times."""

    def __init__(self, skills: Sequence[SkillDef], *, path: Path | None = None) -> None:
        self.skills = list(skills)
        by_name = {skill.qualified_name: skill for skill in self.skills}
        documents = [(skill.qualified_name, _skill_fields(skill)) for skill in by_name.values()]
        index = None
        digest = ""
        if path is not None:
            digest = _digest(documents)
            index = SearchIndex.open(path, FIELD_WEIGHTS, digest=digest)
        self._index = index or SearchIndex.build(FIELD_WEIGHTS, documents, path=path, digest=digest)
        self._by_name = by_name

    def __len__(self) -> int:
        return len(self.skills)

    def match(self, prompt: str, *, limit: int = 5, min_score: float = 0.0) -> list[SkillMatch]:
        hits = self._index.search(terms(prompt), limit=limit, phrases=True)
        return [_skill_match(self._by_name[hit.key], hit) for hit in hits if hit.score > min_score]


def _skill_match(skill: SkillDef, hit: SearchHit) -> SkillMatch:
    return SkillMatch(
        skill=skill,
        score=hit.score,
        hits=tuple(TermHit(term=t.term, fields=t.fields, score=t.score) for t in hit.terms),
        phrases=hit.phrases,
    )


def _digest(documents: list[tuple[str, dict[str, str]]]) -> str:
    """What the stored index must have been built from: every skill's name and indexed text."""
    digest = hashlib.sha256()
    for key, fields in documents:
        digest.update(key.encode())
        for text in fields.values():
            digest.update(b"\0" + text.encode())
        digest.update(b"\1")
    return digest.hexdigest()
