"""Selecting skills for a prompt (S5): a ranked lexical match that says why.

Each skill is indexed once by term and field (name, keywords, trigger examples and ``when_to_use``,
description). A query scores each skill by the rarest-first weight of the terms it shares (idf) times the
weight of the best field each term was found in, plus a bonus for every multi-word keyword the prompt holds
as a phrase. Only skills sharing a term are touched, so a query costs the size of its posting lists, not the
number of skills.
"""

import heapq
import math
import re
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

from kairox._util import JsonObject
from kairox.skills._model import SkillDef

FIELD_WEIGHTS: dict[str, float] = {"name": 3.0, "keywords": 3.0, "examples": 2.0, "description": 1.0}
PHRASE_BONUS = 1.5
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
        "keywords": " ".join(fm.keywords),
        "examples": " ".join((fm.when_to_use, *fm.examples)),
        "description": skill.description,
    }


class SkillIndex:
    """An inverted index over skills; build once, query many times."""

    def __init__(self, skills: Sequence[SkillDef]) -> None:
        self.skills = list(skills)
        self._names = [skill.qualified_name for skill in self.skills]
        self._postings: dict[str, dict[int, tuple[str, ...]]] = defaultdict(dict)
        self._phrases: dict[int, list[str]] = {}
        """Each skill's multi-word keywords as `` word word `` strings, to look for in the padded prompt."""
        for index, skill in enumerate(self.skills):
            where: dict[str, list[str]] = defaultdict(list)
            for field_name, text in _skill_fields(skill).items():
                for term in set(terms(text)):
                    where[term].append(field_name)
            for term, field_names in where.items():
                self._postings[term][index] = tuple(sorted(field_names, key=lambda f: -FIELD_WEIGHTS[f]))
            phrases = [tuple(terms(k)) for k in skill.keywords]
            padded = [" " + " ".join(p) + " " for p in phrases if len(p) > 1]
            if padded:
                self._phrases[index] = padded
        # Scoring reads, per term, the skills grouped by the weight of their best field: one multiplication per
        # group instead of one per skill, and no tuple lookups in the loop.
        self._by_weight: dict[str, list[tuple[float, list[int]]]] = {}
        for term, posting in self._postings.items():
            groups: dict[float, list[int]] = defaultdict(list)
            for index, best_first in posting.items():
                groups[FIELD_WEIGHTS[best_first[0]]].append(index)
            self._by_weight[term] = list(groups.items())

    def __len__(self) -> int:
        return len(self.skills)

    def match(self, prompt: str, *, limit: int = 5, min_score: float = 0.0) -> list[SkillMatch]:
        query = terms(prompt)
        unique = list(dict.fromkeys(query))
        total = max(len(self.skills), 1)
        weights = {term: math.log(1.0 + total / len(self._postings[term])) for term in unique if term in self._postings}
        scores: dict[int, float] = {}
        get = scores.get
        for term, idf in weights.items():  # first pass: numbers only; the explanation is built for the winners
            for weight, indices in self._by_weight[term]:
                add = idf * weight
                for index in indices:
                    scores[index] = get(index, 0.0) + add
        joined = " " + " ".join(query) + " "
        found_phrases: dict[int, list[str]] = {}
        for index in scores.keys() & self._phrases.keys():
            for padded in self._phrases[index]:
                if padded in joined:
                    scores[index] += PHRASE_BONUS * (padded.count(" ") - 1)
                    found_phrases.setdefault(index, []).append(padded[1:-1])
        # The best ``limit`` by score, ties broken by name: the names are compared only for the skills scoring
        # at least the ``limit``-th best score, not for every skill sharing a term.
        kept = [(score, index) for index, score in scores.items() if score > min_score]
        if len(kept) > limit > 0:
            floor = heapq.nlargest(limit, [score for score, _ in kept])[-1]
            kept = [pair for pair in kept if pair[0] >= floor]
        names = self._names
        ranked = [index for _, index in sorted(kept, key=lambda pair: (-pair[0], names[pair[1]], pair[1]))[: max(limit, 0)]]
        results: list[SkillMatch] = []
        for index in ranked:
            hits = [
                TermHit(term=term, fields=fields, score=idf * FIELD_WEIGHTS[fields[0]])
                for term, idf in weights.items()
                if (fields := self._postings[term].get(index)) is not None
            ]
            results.append(
                SkillMatch(
                    skill=self.skills[index],
                    score=scores[index],
                    hits=tuple(sorted(hits, key=lambda h: -h.score)),
                    phrases=tuple(found_phrases.get(index, ())),
                )
            )
        return results
