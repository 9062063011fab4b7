"""Selecting skills for a prompt (S5): a ranked lexical match that says why.

Skills are documents of the shared search index (``kairox.search``: SQLite FTS5, BM25) with four weighted
fields: name, keywords, trigger examples with ``when_to_use``,
description. The prompt's words (``kairox.search.query_words``:
the stopwords and identifier splitting of tool search; FTS5's ``porter`` stemming lets ``tested`` meet
``test``) are searched; pairs of adjacent words count
as phrases too, so a skill holding ``pull request`` whole outranks one holding ``pull`` and ``request`` apart.
Each match lists the words it shares with the prompt, the fields holding each, and each word's share of the
score, as FTS5 computed them.
"""

from collections.abc import Sequence
from dataclasses import dataclass

from kairox._util._json import JsonObject
from kairox.search import SearchHit, SearchIndex, TermMatch, query_words
from kairox.skills._model import SkillDef

FIELD_WEIGHTS: dict[str, float] = {"name": 3.0, "keywords": 3.0, "examples": 2.0, "description": 1.0}


@dataclass(frozen=True, kw_only=True, slots=True)
class SkillMatch:
    """One skill a prompt matched: which, what score, and which terms made it."""

    skill: SkillDef
    score: float
    hits: tuple[TermMatch, ...]
    """The prompt's words it holds: where, best field first, and each one's share of the score."""
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
    """The skills as a search index; build once, query many times."""

    def __init__(self, skills: Sequence[SkillDef]) -> None:
        self.skills = list(skills)
        self._by_name = {skill.qualified_name: skill for skill in self.skills}
        documents = [(name, _skill_fields(skill)) for name, skill in self._by_name.items()]
        self._index = SearchIndex.build(FIELD_WEIGHTS, documents)

    def __len__(self) -> int:
        return len(self.skills)

    def match(self, prompt: str, *, limit: int = 5, min_score: float = 0.0) -> list[SkillMatch]:
        hits = self._index.search(query_words(prompt), limit=limit, phrases=True)
        return [_skill_match(self._by_name[hit.key], hit) for hit in hits if hit.score > min_score]


def _skill_match(skill: SkillDef, hit: SearchHit) -> SkillMatch:
    return SkillMatch(
        skill=skill,
        score=hit.score,
        hits=hit.terms,
        phrases=hit.phrases,
    )
