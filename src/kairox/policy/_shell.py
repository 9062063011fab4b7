"""Shell commands seen the way a shell runs them: split on operators, wrappers peeled off.

A rule such as ``shell.exec(git status*)`` must hold for every command a line runs, so
``git status && rm -rf x`` is two commands, ``sudo rm x`` is ``rm x`` and ``bash -c 'rm x'`` is ``rm x``.
"""

import itertools
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
_RESERVED = frozenset({"{", "}", "!", "if", "then", "else", "elif", "fi", "do", "done", "while", "until", "esac", "coproc"})
"""Words of compound commands: the command is what follows them (``then rm x`` runs ``rm x``)."""
_PROCESS_SUBSTITUTIONS = frozenset({"<(", ">("})


@dataclass(frozen=True, slots=True)
class ShellCommand:
    """The simple commands of one command line, each as words joined by single spaces."""

    pieces: tuple[str, ...]
    opaque: bool = False
    """True when the line could not be parsed (unbalanced quotes): no allow rule can vouch for it."""
    dynamic: bool = False
    """True when a command's name is only known when the line runs (``$X -rf y``): no rule can see what it is."""
    writes: bool = False
    """True when output is redirected into a file (``> out.txt``): a rule for the command does not cover that write."""


def split_command(command: str) -> ShellCommand:
    pieces: list[str] = []
    opaque = _collect(command, pieces, depth=0)
    kept = tuple(p for p in pieces if p)
    return ShellCommand(
        pieces=kept, opaque=opaque, dynamic=any(_computed_name(p) for p in kept), writes=any(_redirects_into_a_file(p) for p in kept)
    )


_FILE_REDIRECTS = frozenset({">", ">>", ">|", "&>", "&>>"})


def _redirects_into_a_file(piece: str) -> bool:
    words = piece.split(" ")
    for word, target in itertools.pairwise(words):
        if word in _FILE_REDIRECTS and target != "/dev/null":
            return True
        if word == ">&" and not target.isdigit() and target not in ("-", "/dev/null"):
            return True
    return False


def _computed_name(piece: str) -> bool:
    """``$X -rf y``, and ``-rf y`` left over where a substitution stood in the command's place."""
    head = piece.split(" ", 1)[0]
    return "$" in head or head.startswith("-")


def _collect(command: str, out: list[str], *, depth: int) -> bool:
    if depth > _MAX_DEPTH:
        out.append(" ".join(command.split()))
        return True
    # a backslash before a newline continues the line
    command = command.replace("\\\n", " ")
    # backquoted commands run too: make them pieces of their own
    command = command.replace("`", " ; ")
    command, substituted = _quoted_substitutions(command)
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
        if token in _OPERATORS or token in _PROCESS_SUBSTITUTIONS or (token and set(token) <= set("();&|\n") and token not in ("<", ">")):
            if current:
                opaque |= _add_simple(current, out, depth=depth)
            current = []
        else:
            # `$(`: the `$` is left alone by the lexer and the parenthesis splits the substitution off
            if token == "$":
                continue
            current.append(token.removesuffix("$") if token.endswith("$") and len(token) > 1 else token)
    for inner in substituted:
        opaque |= _collect(inner, out, depth=depth + 1)
    return opaque


def _closing(text: str, start: int) -> int | None:
    """Index of the ``)`` that closes the substitution whose body starts at ``start`` (quotes respected)."""
    depth, index, quote = 1, start, None
    while index < len(text):
        char = text[index]
        if char == "\\" and quote != "'":
            index += 2
            continue
        if quote is not None:
            if char == quote:
                quote = None
        elif char in "'\"":
            quote = char
        elif char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
            if depth == 0:
                return index
        index += 1
    return None


def _quoted_substitutions(command: str) -> tuple[str, list[str]]:
    """``"... $(cmd) ..."``: bash runs ``cmd`` although it is double-quoted, so it is cut out of the line and
    returned to be split on its own (unquoted substitutions are split off by the lexer)."""
    if "$(" not in command:
        return command, []
    kept: list[str] = []
    inner: list[str] = []
    index, quote = 0, None
    while index < len(command):
        char = command[index]
        if char == "\\" and quote != "'":
            kept.append(command[index : index + 2])
            index += 2
            continue
        if quote == '"' and command.startswith("$(", index) and not command.startswith("$((", index):
            end = _closing(command, index + 2)
            inner.append(command[index + 2 : end])
            if end is None:
                break
            index = end + 1
            continue
        if quote is None and char in "'\"":
            quote = char
        elif char == quote:
            quote = None
        kept.append(char)
        index += 1
    return "".join(kept), inner


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
    out.append(" ".join(word for word in words if word))
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
        while words and (_ASSIGNMENT.match(words[0]) or words[0] in _RESERVED):
            words, changed = words[1:], True
        if words and words[0] == "function":  # `function name {`
            words, changed = words[2:], True
            continue
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
