"""How an allow rule's command glob matches one command: word-bounded where a word picks the program that runs.

``shell.exec(ls*)`` means ``ls`` with any arguments, as Claude Code's ``Bash(ls:*)`` does: a ``*`` glued to the
program name never extends the name (``lsof`` is another program), and a ``*`` glued to the subcommand of a
program that runs ``PROGRAM-SUBCOMMAND`` from ``PATH`` or an alias (``git status*``) never extends the
subcommand (``git status-x`` may be anything). Inside the arguments a glob keeps its plain meaning, ``*``
spanning words (``npm run test*`` covers ``npm run test:unit``): an argument does not change which program runs.

Deny and ask rules do not use this: they keep matching as plain globs, so ``deny rm*`` also refuses ``rmdir``.
"""

import functools
import re

from kairox.policy._wrappers import SUBCOMMAND_PROGRAMS

_GLOB = re.compile(r"[*?\[]")
_ANY_REST = "(?: .*)?"
"""What a ``*`` glued to a program or subcommand word stands for: nothing, or a space and any arguments."""


def _glob_regex(glob: str, *, in_word: bool) -> str:
    """``glob`` as a regular expression; ``in_word``: ``*`` and ``?`` do not match a space."""
    star, one = ("[^ ]*", "[^ ]") if in_word else (".*", ".")
    out: list[str] = []
    index = 0
    while index < len(glob):
        char = glob[index]
        index += 1
        if char == "*":
            out.append(star)
        elif char == "?":
            out.append(one)
        elif char == "[":
            end = index + 1 if index < len(glob) and glob[index] == "!" else index
            end = glob.find("]", end + 1 if end < len(glob) and glob[end] == "]" else end)
            if end < 0:
                out.append(re.escape(char))
                continue
            body = re.sub(r"([\\\[&~|])", r"\\\1", glob[index:end])  # no nested sets or set operations
            index = end + 1
            if body.startswith("!"):
                body = ("^ " if in_word else "^") + body[1:]
            elif body.startswith("^"):
                body = "\\" + body
            out.append(f"[{body}]")
        else:
            out.append(re.escape(char))
    return "".join(out)


def _bounded(word: str) -> str:
    """A program or subcommand word: its glob stays inside the word; a trailing ``*`` means "then any arguments"."""
    if len(word) > 1 and word.endswith("*"):
        return _glob_regex(word[:-1], in_word=True) + _ANY_REST
    return _glob_regex(word, in_word=True)


def _bounded_words(words: list[str]) -> int:
    """How many leading words of a command glob name the program: two for ``git status``, else one."""
    program = words[0].rsplit("/", 1)[-1]  # `/usr/bin/git status*` names git too
    return 2 if len(words) > 1 and program in SUBCOMMAND_PROGRAMS and not words[1].startswith("-") else 1


@functools.lru_cache(maxsize=1024)
def command_regex(specifier: str) -> re.Pattern[str]:
    """The command glob of an allow rule as a regular expression over one command (words joined by spaces)."""
    words = specifier.split()
    if not words:
        return re.compile(r"(?!)")
    bounded = _bounded_words(words)
    regex = " ".join(_bounded(word) for word in words[:bounded])
    if len(words) > bounded:
        regex += " " + _glob_regex(" ".join(words[bounded:]), in_word=False)
    return re.compile(regex + r"\Z", re.DOTALL)


def allow_matches(piece: str, specifier: str) -> bool:
    """Whether an allow rule's command glob covers one command of a line, as written."""
    return command_regex(specifier).match(piece) is not None


def describe_command_glob(specifier: str) -> str:
    """What an allow rule's command glob covers, in words (the approval prompt shows it)."""
    words = specifier.split()
    bounded = _bounded_words(words)
    head = " ".join(words[:bounded])
    kind = "subcommand" if bounded == 2 else "program"
    if len(words) == bounded and len(words[-1]) > 1 and head.endswith("*") and _GLOB.search(head[:-1]) is None:
        name = head[:-1]
        return f"{name!r} with any arguments (not another {kind} whose name starts with {name.split()[-1]!r})"
    return (
        f"commands matching {specifier!r} (the {kind} {words[bounded - 1]!r}"
        " as a whole word, a '*' in the arguments spanning words)"
    )
