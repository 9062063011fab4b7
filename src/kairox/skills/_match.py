"""Selecting skills for a prompt (S5): a ranked lexical match that says why.

Skills are documents of the shared search index (``kairox.search``: SQLite FTS5, BM25) with four weighted
fields: name, keywords, trigger examples with ``when_to_use``,
description. The prompt's words (``kairox.search.query_words``:
the stopwords and identifier splitting of tool search, lightly stemmed so the explanation names ``test`` for
``tested``) are searched; pairs of adjacent words count
as phrases too, so a skill holding ``pull request`` whole outranks one holding ``pull`` and ``request`` apart.
Each match lists the words it shares with the prompt, the fields holding each, and each word's share of the
score, as FTS5 computed them. The index can be stored in a file beside the skill cache and opened again while
the skills are unchanged.
"""

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from kairox._util import JsonObject
from kairox.search import SearchHit, SearchIndex, query_words
from kairox.skills._model import SkillDef

FIELD_WEIGHTS: dict[str, float] = {"name": 3.0, "keywords": 3.0, "examples": 2.0, "description": 1.0}


def terms(text: str) -> list[str]:
    """The prompt's words as the index is searched for them: ``kairox.search.query_words``, stemmed (the one
    normaliser tool search uses too: same stopwords, same identifier splitting)."""
    return query_words(text, stemmed=True)


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
        index = None
        digest = ""
        if path is not None:
            digest = _digest(by_name)
            index = SearchIndex.open(path, FIELD_WEIGHTS, digest=digest, keys=list(by_name))
        if index is None:
            documents = [(name, _skill_fields(skill)) for name, skill in by_name.items()]
            index = SearchIndex.build(FIELD_WEIGHTS, documents, path=path, digest=digest)
        self._index = index
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


FIELDS_VERSION = "2"
"""Part of the stored index's digest: raise it when ``_skill_fields`` changes what it makes of a skill."""


def _digest(skills: Mapping[str, SkillDef]) -> str:
    """What the stored index must have been built from: every skill, in order, by what ``_skill_fields`` reads
    of it (hashed as one string, without making the fields: 10,000 skills are one call)."""
    parts = [FIELDS_VERSION]
    for name, skill in skills.items():
        fm = skill.frontmatter
        parts.append(
            f"{name}\0{skill.name}\0{skill.plugin or ''}\0{chr(31).join(fm.keywords)}"
            f"\0{fm.when_to_use}\0{chr(31).join(fm.examples)}\0{skill.description}"
        )
    return hashlib.sha256("\1".join(parts).encode("utf-8", "surrogatepass")).hexdigest()
