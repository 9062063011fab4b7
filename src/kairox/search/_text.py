"""Turning names and prose into the words the index holds and a query asks for.

FTS5's ``unicode61`` tokenizer already splits on ``_``, ``-``, ``.`` and ``/``; it keeps ``createPullRequest`` as
one token. Identifiers are therefore also written out split at case changes and digits, so ``pull`` finds
``createPullRequest`` and ``browser_navigate`` alike, and the whole identifier stays findable too.
"""

import re

_CAMEL = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+")
_WORD = re.compile(r"[A-Za-z0-9]+")
_QUERY_WORD = re.compile(r"[^\W_]+", re.UNICODE)

STOPWORDS = frozenset(
    """
    a about all an and any are as at be been but by can could do does for from get give has have how i if in into is
    it its let me my no not of on or our please should show so some tell than that the their them then there these
    they this those to up us use used using want was we were what when where which while who will with would you your
    """.split()
)
"""Words a user's task is full of and a tool's description says nothing distinctive with."""


def split_identifier(name: str) -> list[str]:
    """``createPullRequest`` -> ``create pull request``; ``get_file_contents`` -> ``get file contents``."""
    return [part.lower() for word in _WORD.findall(name) for part in _CAMEL.findall(word)]


def index_text(text: str) -> str:
    """``text`` plus the split form of every identifier in it that has inner capitals."""
    extra = [
        " ".join(split_identifier(word)) for word in _WORD.findall(text) if word.lower() != word and not word.isupper()
    ]
    return text if not extra else text + " \n" + " ".join(extra)


def query_words(text: str) -> list[str]:
    """The words of a query worth looking for: split identifiers, lower case, no stopwords, each once, in order.
    The one normaliser of tool search and skill selection; the index's own ``porter`` tokenizer stems them."""
    words: list[str] = []
    seen: set[str] = set()
    for raw in _QUERY_WORD.findall(text):
        for part in split_identifier(raw) or [raw.lower()]:
            if part in STOPWORDS:
                continue
            if part not in seen:
                seen.add(part)
                words.append(part)
    return words


RELATED: dict[str, tuple[str, ...]] = {
    # verbs of a task -> the verbs tool names use for it
    "make": ("create",),
    "new": ("create",),
    "open": ("create",),
    "add": ("create",),
    "write": ("create",),
    "start": ("launch", "create"),
    "debug": ("debugger", "launch"),
    "debugging": ("debugger", "launch"),
    "display": ("get", "list"),
    "view": ("get", "read"),
    "see": ("get", "list"),
    "remove": ("delete",),
    "erase": ("delete",),
    "drop": ("delete",),
    "delete": ("remove",),
    "change": ("update", "edit"),
    "modify": ("update", "edit"),
    "edit": ("update",),
    "set": ("update",),
    "find": ("search",),
    "look": ("search",),
    "lookup": ("search",),
    "grep": ("search",),
    "query": ("search",),
    "rename": ("move",),
    "run": ("execute",),
    "execute": ("run",),
    "attach": ("upload", "add"),
    "upload": ("attach",),
    "go": ("navigate",),
    "visit": ("navigate",),
    "browse": ("navigate",),
    "approve": ("review",),
    "assign": ("assignees",),
    "remember": ("observations", "memory"),
    # nouns people say -> the nouns tools say
    "ticket": ("issue",),
    "bug": ("issue",),
    "pr": ("pull", "request"),
    "repo": ("repository",),
    "folder": ("directory",),
    "dir": ("directory",),
    "cost": ("pricing", "price"),
    "costs": ("pricing",),
    "price": ("pricing",),
    "much": ("pricing",),
    "big": ("size",),
    "large": ("size",),
}
"""A small thesaurus of task words: the words a user says for an action or a thing, and the words tool names
and descriptions use for it. Used to widen a tool search, never to replace what the user wrote."""


def related_words(words: list[str]) -> list[str]:
    """The thesaurus' words for ``words``, each once, in order."""
    out: list[str] = []
    for word in words:
        for related in RELATED.get(word, ()):
            if related not in out:
                out.append(related)
    return out
