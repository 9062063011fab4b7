"""Shell commands seen the way a shell runs them: split on operators, wrappers peeled off.

A rule such as ``shell.exec(git status*)`` must hold for every command a line runs, so
``git status && rm -rf x`` is two commands, ``sudo rm x`` is ``rm x`` and ``bash -c 'rm x'`` is ``rm x``.
"""

import re
import shlex
from dataclasses import dataclass

_OPERATORS = frozenset({"&&", "||", ";", ";;", "|", "|&", "&", "(", ")", "\n", ";&", ";;&"})
_SHELLS = frozenset({"bash", "sh", "zsh", "dash", "ksh", "fish"})
_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
_MAX_DEPTH = 8
# wrappers that run the rest of the line as a command, with the options each one takes a value for
_WRAPPERS: dict[str, frozenset[str]] = {
    "sudo": frozenset({"-u", "-g", "-C", "-D", "-h", "-p", "-r", "-t", "-U", "--user", "--group"}),
    "doas": frozenset({"-u", "-C"}),
    "env": frozenset({"-u", "--unset", "-C", "--chdir", "-S", "--split-string"}),
    "nice": frozenset({"-n", "--adjustment"}),
    "nohup": frozenset(),
    "time": frozenset({"-f", "--format", "-o", "--output"}),
    "command": frozenset(),
    "builtin": frozenset(),
    "exec": frozenset({"-a"}),
    "stdbuf": frozenset({"-i", "-o", "-e"}),
    "ionice": frozenset({"-c", "-n", "-p"}),
    "setsid": frozenset(),
    "xargs": frozenset({"-I", "-n", "-P", "-d", "-L", "-s", "-a", "-E"}),
    "timeout": frozenset({"-s", "--signal", "-k", "--kill-after"}),
    "watch": frozenset({"-n", "--interval", "-d", "--differences"}),
}
_FIND_EXEC = frozenset({"-exec", "-execdir", "-ok", "-okdir"})


@dataclass(frozen=True, slots=True)
class ShellCommand:
    """The simple commands of one command line, each as words joined by single spaces."""

    pieces: tuple[str, ...]
    opaque: bool = False
    """True when the line could not be parsed (unbalanced quotes): no allow rule can vouch for it."""


def split_command(command: str) -> ShellCommand:
    pieces: list[str] = []
    opaque = _collect(command, pieces, depth=0)
    return ShellCommand(pieces=tuple(p for p in pieces if p), opaque=opaque)


def _collect(command: str, out: list[str], *, depth: int) -> bool:
    if depth > _MAX_DEPTH:
        out.append(" ".join(command.split()))
        return True
    # backquoted commands run too: make them pieces of their own
    command = command.replace("`", " ; ")
    lexer = shlex.shlex(command, posix=True, punctuation_chars="();<>|&\n")
    lexer.whitespace = " \t\r"
    lexer.whitespace_split = True
    lexer.commenters = ""
    try:
        tokens = list(lexer)
    except ValueError:
        out.append(" ".join(command.split()))
        return True
    opaque = False
    current: list[str] = []
    for token in [*tokens, ";"]:
        if token in _OPERATORS or (token and set(token) <= set("();&|\n") and token not in ("<", ">")):
            if current:
                opaque |= _add_simple(current, out, depth=depth)
            current = []
        else:
            # `$(`: the `$` is left alone by the lexer and the parenthesis splits the substitution off
            if token == "$":
                continue
            current.append(token.removesuffix("$") if token.endswith("$") and len(token) > 1 else token)
    return opaque


def _add_simple(words: list[str], out: list[str], *, depth: int) -> bool:
    words = _peel(words)
    if not words:
        return False
    name = words[0].rsplit("/", 1)[-1]
    if name in _SHELLS:
        for index, word in enumerate(words[1:], start=1):
            if word.startswith("-") and not word.startswith("--") and "c" in word[1:] and index + 1 < len(words):
                return _collect(words[index + 1], out, depth=depth + 1)
    if name == "eval" and len(words) > 1:
        return _collect(" ".join(words[1:]), out, depth=depth + 1)
    if name == "su":
        for index, word in enumerate(words[1:], start=1):
            if word in ("-c", "--command") and index + 1 < len(words):
                return _collect(words[index + 1], out, depth=depth + 1)
            if word.startswith("--command="):
                return _collect(word.partition("=")[2], out, depth=depth + 1)
    out.append(" ".join(words))
    opaque = False
    if name == "find":
        # `find . -exec rm {} ;` runs rm: the command after -exec is a command of its own
        for index, word in enumerate(words):
            if word in _FIND_EXEC:
                inner = []
                for part in words[index + 1 :]:
                    if part in (";", "+"):
                        break
                    inner.append(part)
                if inner:
                    opaque |= _add_simple(inner, out, depth=depth + 1)
    return opaque


def _peel(words: list[str]) -> list[str]:
    """Drop leading assignments and wrapper commands (``sudo``, ``env X=1``, ``timeout 5`` ...)."""
    changed = True
    while words and changed:
        changed = False
        while words and _ASSIGNMENT.match(words[0]):
            words, changed = words[1:], True
        if not words:
            break
        name = words[0].rsplit("/", 1)[-1]
        takes_value = _WRAPPERS.get(name)
        if takes_value is None:
            break
        index = 1
        while index < len(words):
            word = words[index]
            if word == "--":
                index += 1
                break
            if word.startswith("-"):
                index += 2 if word in takes_value else 1
                continue
            if name == "env" and _ASSIGNMENT.match(word):
                index += 1
                continue
            break
        if name == "timeout" and index < len(words):
            index += 1  # the duration
        words, changed = words[index:], True
    return words
