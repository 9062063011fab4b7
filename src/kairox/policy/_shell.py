"""Shell commands seen the way a shell runs them: split on operators, wrappers peeled off.

A rule such as ``shell.exec(git status*)`` must hold for every command a line runs, so
``git status && rm -rf x`` is two commands, ``sudo rm x`` is ``rm x`` and ``bash -c 'rm x'`` is ``rm x``.
What the splitter cannot see (a command name built when the line runs, text piped into a shell, ``eval`` of a
variable, ``source``, ``trap``, ``alias``, nesting past its depth) is named in ``ShellCommand.unseen``: the engine
asks about such a line whenever a rule names the shell tool, and no allow rule covers it.
"""

import itertools
import re
import shlex
from dataclasses import dataclass, field

from kairox.policy._exec_reader import read_command
from kairox.policy._exec_table import ASSIGNMENT, env_runs, is_loader
from kairox.policy._wrappers import (
    GIT_FLAGS,
    GIT_VALUE_OPTIONS,
    HIDING_BUILTINS,
    INLINE_CODE_OPTIONS,
    SHELLS,
    STDIN_PROGRAM,
    WRAPPERS,
    Wrapper,
    env_changes_what_runs,
    exec_subcommand,
    git_option_runs_code,
    is_interpreter,
    option_effect,
    ssh_option,
)

_OPERATORS = frozenset({"&&", "||", ";", ";;", "|", "|&", "&", "(", ")", "\n", ";&", ";;&"})
_PIPES = frozenset({"|", "|&"})
_ASSIGNMENT = ASSIGNMENT
_MAX_DEPTH = 8
_FIND_EXEC = frozenset({"-exec", "-execdir", "-ok", "-okdir"})
_RESERVED = frozenset(
    {"{", "}", "!", "if", "then", "else", "elif", "fi", "do", "done", "while", "until", "esac", "coproc"}
)
"""Words of compound commands: the command is what follows them (``then rm x`` runs ``rm x``)."""
_PROCESS_SUBSTITUTIONS = frozenset({"<(", ">("})
_STDIN_REDIRECTS = frozenset({"<", "<<", "<<<", "<&", "<<-", "<>"})
_DATABASE_CLIENTS = frozenset({"sqlite3", "psql", "mysql", "gdb", "lldb"})
_BRACE_EXPANSION = re.compile(r"\{[^{}]*(?:,|\.\.)[^{}]*\}")
_SUBSCRIPT_CODE = re.compile(r"\[[^\]]*(?:\$\(|`|\\(?:x24|x60|0?44|0?140|u0024|u0060|U00000024|U00000060))")
"""A command substitution in an array subscript, quoted so the line does not run it (``'a[$(rm x)]'``, also
spelled ``$'a[\\x24(rm x)]'``): bash runs it when it evaluates the subscript (``$((x))``, ``let``, ``printf -v``,
``read``, ``declare -n``)."""
_LITERAL_CODE = re.compile(r"\$\(|`|\\(?:x24|0?44|u0024|U00000024)\(|\\(?:x60|0?140|u0060|U00000060)")
"""A command substitution written as text the line itself does not run (in single quotes, or escaped)."""
_PROMPT_EXPANSION = re.compile(r"@P\}|\bPS4\b")
"""Text bash expands as a prompt, running the command substitutions in it: ``${x@P}``, and ``PS4`` under xtrace."""
_ANSI_C_ESCAPED_QUOTE = re.compile(r"\$'(?:[^'\\]|\\[^'])*\\'")
"""``$'it\\'s'``: bash ends the string at the last quote, a plain lexer at the escaped one, so the two read the
rest of the line differently (what one takes as quoted text, the other runs)."""
_HEREDOC = re.compile(r"(?<!<)<<(?!<)(-?)[ \t]*((?:'[^'\n]*'|\"[^\"\n]*\"|\\.|[^\s;&|<>()'\"\\])+)")
"""A here-document's operator and delimiter word (``<<EOF``, ``<<-'EOF'``); not a here-string (``<<<``)."""
_COMPOUND_STARTS = frozenset({"{", "while", "until", "if", "for", "select", "case", "[[", "(("})
"""Words that start a compound command: ``coproc NAME { rm x; }`` names its coprocess before one."""
_GLOB = re.compile(r"[*?\[]")
_SSH_REMOTE_COMMAND = re.compile(r"^(?:-o)?\s*remotecommand\s*[=\s]", re.IGNORECASE)
"""``ssh -o RemoteCommand=...``: the remote command is that option's value, not the words after the host."""


@dataclass(frozen=True, slots=True)
class ShellCommand:
    """The simple commands of one command line, each as words joined by single spaces."""

    pieces: tuple[str, ...]
    opaque: bool = False
    """True when the line could not be parsed (unbalanced quotes, nesting past the depth limit)."""
    dynamic: bool = False
    """True when a command's name is only known when the line runs (``$X -rf y``): no rule can see what it is."""
    writes: bool = False
    """True when output is redirected into a file (``> out.txt``) or an option writes one (``sort -o out.txt``): a
    rule for the command does not cover that write."""
    unseen: str | None = None
    """Why part of what the line runs is hidden from rules (None when every command is visible)."""
    tails: tuple[str, ...] = ()
    """Other readings of wrapped commands (every tail after a wrapper's name), which deny and ask rules also see,
    so an option of a wrapper that takes a value the splitter does not know cannot hide the command."""
    privileged: bool = False
    """A command runs under a wrapper that changes its authority (``sudo``, ``setpriv``, ``chroot`` ...)."""
    env: tuple[str, ...] = field(default=())
    """Names of the variables the line sets for its commands (``GIT_DIR=x git status``, ``env PATH=. ls``)."""
    loads: tuple[tuple[str, str], ...] = ()
    """Code a command runs from elsewhere, as ``(why, option)``: an option, operand, variable or text that
    ``kairox.policy._exec_table`` names (``python3 -c``, ``make -f``, ``LESSOPEN``), a script the rules could not
    read, a program in a writable folder. A deny or ask rule on the shell asks about the line; an allow rule covers
    it only when its glob writes each option out."""

    @property
    def hidden(self) -> str | None:
        """Why a rule cannot vouch for this line, or None."""
        if self.unseen is not None:
            return self.unseen
        if self.dynamic:
            return "a command name is only known when the line runs"
        return None

    @property
    def runs_unseen(self) -> str | None:
        """Why the line runs code from elsewhere that the rules cannot read, or None."""
        return "; ".join(dict.fromkeys(why for why, _ in self.loads)) or None

    def allow_vouches_for_loads(self, specifier: str) -> bool:
        """Whether an allow rule's glob writes out every option through which the line runs code from elsewhere
        (``python3 -c*`` vouches for ``-c``; ``make test*`` does not vouch for ``-f x.mk``)."""
        if not self.loads:
            return True
        written = specifier.split()
        return all(any(word.startswith(option) for word in written) for _, option in self.loads)

    @property
    def changes_programs(self) -> tuple[str, ...]:
        """The variables it sets that may change which code a command runs (``GIT_*``, ``LD_*``, ``PATH`` ...)."""
        return tuple(name for name in self.env if env_changes_what_runs(name))


class _Scan:
    def __init__(self) -> None:
        self.pieces: list[str] = []
        self.tails: list[str] = []
        self.unseen: list[str] = []
        self.env: list[str] = []
        self.loads: list[tuple[str, str]] = []
        self.programs: list[str] = []
        self.opaque = False
        self.privileged = False
        self.writes = False
        self.line = ""
        self.known: bool | None = None

    @property
    def expands(self) -> bool:
        """The line being split has a ``$`` outside single quotes: a word holding one may be known only at run time
        (worked out when a command of the table's is met)."""
        if self.known is None:
            self.known = _expands(self.line)
        return self.known

    def hide(self, reason: str) -> None:
        if reason not in self.unseen:
            self.unseen.append(reason)

    def load(self, reason: str, option: str) -> None:
        if (reason, option) not in self.loads:
            self.loads.append((reason, option))


def split_command(command: str) -> ShellCommand:
    scan = _Scan()
    _collect(command, scan, depth=0)
    kept = tuple(p for p in scan.pieces if p)
    for variable in dict.fromkeys(scan.env):
        program = next((p for p in dict.fromkeys(scan.programs) if env_runs(p, variable)), None)
        if program is not None:
            which = "the line's programs" if env_runs("", variable) else program
            scan.load(f"{variable} set on the line can make {which} run code the rules cannot see", variable)
    return ShellCommand(
        pieces=kept,
        opaque=scan.opaque,
        dynamic=any(_computed_name(p) for p in kept),
        writes=scan.writes or any(_redirects_into_a_file(p) for p in kept),
        unseen="; ".join(scan.unseen) or None,
        tails=tuple(dict.fromkeys(t for t in scan.tails if t and t not in kept)),
        privileged=scan.privileged,
        env=tuple(dict.fromkeys(scan.env)),
        loads=tuple(scan.loads),
    )


_FILE_REDIRECTS = frozenset({">", ">>", ">|", "&>", "&>>", "<>"})
"""Redirections that write a file; ``<>`` opens it for reading and writing and creates it when it is missing."""


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


def _collect(command: str, scan: _Scan, *, depth: int) -> None:
    if depth > _MAX_DEPTH:
        scan.pieces.append(" ".join(command.split()))
        scan.opaque = True
        scan.hide(f"commands are nested more than {_MAX_DEPTH} levels deep")
        return
    command = _join_continued_lines(command)
    if _ANSI_C_ESCAPED_QUOTE.search(command):
        scan.hide("a $'...' string holds an escaped quote, so where it ends cannot be told for sure")
    command = _plain_comments(_plain_heredoc_bodies(command))
    command, substituted, complete = _cut_substitutions(command)
    # again without the substitutions, whose nested quotes may have hidden a comment from the first pass
    command = _plain_comments(command)
    for inner in substituted:
        _collect(inner, scan, depth=depth + 1)
    if not complete:
        scan.opaque = True
        scan.hide("a command substitution is never closed")
    lexer = shlex.shlex(command, posix=True, punctuation_chars="();<>|&\n")
    lexer.whitespace = " \t\r"
    lexer.whitespace_split = True
    lexer.commenters = ""
    try:
        tokens = list(lexer)
    except ValueError:
        scan.pieces.append(" ".join(command.split()))
        scan.opaque = True
        scan.hide("the line cannot be parsed (unbalanced quotes)")
        return
    if any(_SUBSCRIPT_CODE.search(token) for token in tokens):
        scan.hide(
            "a quoted array subscript holds a command substitution, which bash runs when it evaluates the subscript"
        )
    elif any(_PROMPT_EXPANSION.search(token) for token in tokens) and any(
        _LITERAL_CODE.search(token) for token in tokens
    ):
        scan.hide(
            "quoted text holds a command substitution and the line "
            "expands text as a prompt (${x@P}, PS4), which runs it"
        )
    outer, scan.line, scan.known = (scan.line, scan.known), command, None
    current: list[str] = []
    piped = False
    for token in [*tokens, ";"]:
        if (
            token in _OPERATORS
            or token in _PROCESS_SUBSTITUTIONS
            or (token and set(token) <= set("();&|\n") and token not in ("<", ">"))
        ):
            if current:
                _add_simple(current, scan, depth=depth, piped=piped)
            current = []
            piped = token in _PIPES
        else:
            # `$(`: the `$` is left alone by the lexer and the parenthesis splits the substitution off
            if token == "$":
                continue
            current.append(token.removesuffix("$") if token.endswith("$") and len(token) > 1 else token)
    scan.line, scan.known = outer


def _join_continued_lines(command: str) -> str:
    """The line with each backslash-newline removed, as bash removes it before it splits words (``r\\`` newline
    ``m -rf x`` runs ``rm -rf x``); not inside single quotes, where it is text, nor in a comment, which ends at the
    newline (``# \\`` does not make the next line a comment)."""
    if "\\\n" not in command:
        return command
    out: list[str] = []
    index, quote = 0, None
    while index < len(command):
        char = command[index]
        if quote == "'":
            quote = None if char == "'" else quote
        elif char == "\\":
            if command.startswith("\n", index + 1):
                index += 2
                continue
            out.append(command[index : index + 2])
            index += 2
            continue
        elif quote == "$'":
            quote = None if char == "'" else quote
        elif quote == '"':
            quote = None if char == '"' else quote
        elif char == "'":
            quote = "$'" if index and command[index - 1] == "$" else "'"
        elif char == '"':
            quote = char
        elif char == "#" and (index == 0 or command[index - 1] in _WORD_BREAKS):
            end = command.find("\n", index)
            end = len(command) if end < 0 else end
            out.append(command[index:end].replace("\\", " "))  # nor may its backslash escape the newline for the lexer
            index = end
            continue
        out.append(char)
        index += 1
    return "".join(out)


def _expands(command: str) -> bool:
    """Whether the line holds a ``$`` outside single quotes (a variable, ``$'...'``, a substitution's place): the
    lexer drops quotes, so ``sed '$p'`` and ``sed $p`` give the same word, and only the line tells them apart."""
    if "$" not in command:
        return False
    index, quote = 0, None
    while index < len(command):
        char = command[index]
        if quote == "'":
            quote = None if char == "'" else quote
        elif char == "\\":
            index += 2
            continue
        elif char == "$":
            return True
        elif char == '"':
            quote = None if quote == '"' else '"'
        elif char == "'" and quote is None:
            quote = "'"
        index += 1
    return False


def _plain_heredoc_bodies(command: str) -> str:
    """The line with the quotes of here-document bodies blanked out: a body is text, whatever quotes it holds, and
    a quote in it must not make the lexer read the commands after the body as quoted text. The body's words are
    still seen as commands, and its substitutions as what they are (they run when the delimiter is unquoted)."""
    if "<<" not in command:
        return command
    pending: list[tuple[str, bool]] = []
    lines = command.split("\n")
    for index, line in enumerate(lines):
        if pending:
            delimiter, tabs = pending[0]
            if (line.lstrip("\t") if tabs else line) == delimiter:
                pending.pop(0)
            else:
                lines[index] = line.replace("'", " ").replace('"', " ")
            continue
        pending += [(re.sub(r"[\"'\\]", "", word), dash == "-") for dash, word in _HEREDOC.findall(line)]
    return "\n".join(lines)


_WORD_BREAKS = frozenset(" \t\n;&|()<>")


def _plain_comments(command: str) -> str:
    """The line with the quotes inside its comments blanked out: ``# it's`` is a comment to bash, and its quote must
    not make the lexer read the next lines as quoted text (``echo #'`` / ``rm x`` / ``#'`` runs ``rm x``)."""
    if "#" not in command:
        return command
    chars = list(command)
    quote: str | None = None
    index = 0
    while index < len(chars):
        char = chars[index]
        if quote == "'":
            quote = None if char == "'" else quote
        elif char == "\\":
            index += 2
            continue
        elif quote == '"':
            quote = None if char == '"' else quote
        elif char in "'\"":
            quote = char
        elif char == "#" and (index == 0 or chars[index - 1] in _WORD_BREAKS):
            end = command.find("\n", index)
            end = len(chars) if end < 0 else end
            for at in range(index, end):
                if chars[at] in "'\"`":
                    chars[at] = " "
            index = end
            continue
        index += 1
    return "".join(chars)


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


_GIT_LOCATIONS = {"--git-dir": "GIT_DIR", "--work-tree": "GIT_WORK_TREE", "-C": "GIT_DIR"}
"""git options that pick another repository (its config can run programs: ``core.fsmonitor``), as the variables do."""
_HERE = frozenset({".", "./"})

_PLACEHOLDER = "$SUBST"
"""What a command substitution leaves in its place: a word known only when the line runs."""


def _cut_substitutions(command: str) -> tuple[str, list[str], bool]:
    """``$(cmd)`` and backquoted ``cmd`` (unquoted or inside double quotes) run before the line does: each is cut
    out, returned to be split on its own, and replaced by a word that is only known when the line runs (so
    ``$(echo rm) x`` is a command whose name is computed). The flag is False when one is never closed."""
    if "$(" not in command and "`" not in command:
        return command, [], True
    kept: list[str] = []
    inner: list[str] = []
    index, quote = 0, None
    while index < len(command):
        char = command[index]
        if char == "\\" and quote != "'":
            kept.append(command[index : index + 2])
            index += 2
            continue
        if quote != "'" and command.startswith("$(", index) and not command.startswith("$((", index):
            end = _closing(command, index + 2)
            inner.append(command[index + 2 : end])
            kept.append(_PLACEHOLDER)
            if end is None:
                return "".join(kept), inner, False
            index = end + 1
            continue
        if quote != "'" and char == "`":
            close = command.find("`", index + 1)
            inner.append(command[index + 1 : None if close < 0 else close])
            kept.append(_PLACEHOLDER)
            if close < 0:
                return "".join(kept), inner, False
            index = close + 1
            continue
        if quote is None and char in "'\"":
            quote = char
        elif char == quote:
            quote = None
        kept.append(char)
        index += 1
    return "".join(kept), inner, True


def _add_simple(words: list[str], scan: _Scan, *, depth: int, piped: bool) -> None:
    peeled = _peel(words, scan, depth=depth)
    if peeled is None:
        return
    words, from_input = peeled
    if not words:
        return
    head = words[0]
    if head.startswith("#"):  # a comment (`#!/bin/sh` atop a script): its words name no program
        scan.pieces.append(" ".join(words))
        return
    name = head.rsplit("/", 1)[-1]
    if head == "{}":  # `find -exec {}` / `xargs -I{} {}`: the command is a file name or input
        scan.hide("the command is a name substituted when the line runs")
    elif _GLOB.search(head) or _BRACE_EXPANSION.search(head):
        scan.hide(f"the command name {head!r} is expanded by the shell when the line runs")
    stdin_redirect = any(w in _STDIN_REDIRECTS for w in words[1:])
    if name in _SETTERS:  # `export LESSOPEN=...; less x`: the variable holds for the commands after it
        scan.env += [m.group(1) for m in map(_ASSIGNMENT.match, words[1:]) if m is not None]
        scan.env += [w for w in words[1:] if _NAME.match(w)]  # `read LD_PRELOAD; export LD_PRELOAD`
        if any(w.startswith("$") for w in words[1:]):
            scan.load(f"{name} sets variables named only when the line runs", name)
    if name != "git":  # git's own options are read once its global options are dropped
        _runs(name, words, scan, depth=depth)
    if name in SHELLS:
        if _shell_inline(words, scan, depth=depth):
            return
        if from_input or _reads_program_from_input(words):
            scan.hide(f"{name} runs commands from its input, which the rules cannot see")
    elif is_interpreter(name) and (
        from_input or (name in _DATABASE_CLIENTS and (piped or stdin_redirect)) or _reads_program_from_input(words)
    ):
        scan.hide(f"{name} runs a program from its input, which the rules cannot see")
    if name == "eval" and len(words) > 1:
        rest = words[1:]
        if any("$" in w for w in rest):
            scan.hide("eval runs text that is only known when the line runs")
            scan.pieces.append(" ".join(words))
            return
        _collect(" ".join(rest), scan, depth=depth + 1)
        return
    if name in HIDING_BUILTINS or (name in ("mapfile", "readarray") and "-C" in words):
        scan.hide(f"`{name}` runs or redefines commands from text the rules cannot see")
    if name == "git":
        scan.tails.append(" ".join(words))
        words = _git(words, scan)
        _runs(name, words, scan, depth=depth)
    scan.pieces.append(" ".join(word for word in words if word))
    effect = option_effect(name, words)
    if effect is not None:
        if effect[0] == "writes":
            scan.writes = True
        else:
            scan.hide(f"{name} {effect[1]} runs a program the rules cannot see")
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
                    _add_simple(inner, scan, depth=depth + 1, piped=False)


def _shell_inline(words: list[str], scan: _Scan, *, depth: int) -> bool:
    """``bash -c 'cmd'``: the command string is split as a line of its own. True when it was."""
    for index, word in enumerate(words[1:], start=1):
        if word.startswith("-") and not word.startswith("--") and "c" in word[1:]:
            if index + 1 < len(words):
                _collect(words[index + 1], scan, depth=depth + 1)
            else:
                scan.hide(f"{words[0]} {word} gets its command from input, which the rules cannot see")
                scan.pieces.append(" ".join(words))
            return True
    return False


def _reads_program_from_input(words: list[str]) -> bool:
    """An interpreter with no program on its command line reads one from its input (``| bash``, ``bash <<< x``,
    ``python3 -``)."""
    arguments = _without_redirects(words[1:])
    if any(w in INLINE_CODE_OPTIONS for w in arguments):
        return False
    if any(w in STDIN_PROGRAM for w in arguments):
        return True
    return not any(not w.startswith("-") for w in arguments)


_REDIRECT_WORD = re.compile(r"^[0-9]*(?:<|<<|<<<|<<-|<&|<>|>|>>|>\||>&|&>|&>>)$")


def _without_redirects(words: list[str]) -> list[str]:
    """The arguments of a command without its redirections (``2>`` ``err``, ``<<<`` ``text``)."""
    kept: list[str] = []
    skip = False
    for index, word in enumerate(words):
        if skip:
            skip = False
            continue
        if _REDIRECT_WORD.match(word):
            skip = True
            continue
        if word.isdigit() and index + 1 < len(words) and _REDIRECT_WORD.match(words[index + 1]):
            continue
        kept.append(word)
    return kept


def _git(words: list[str], scan: _Scan) -> list[str]:
    """``git -C . -c k=v --no-pager push`` is ``git push``: rules match the subcommand after git's global options;
    an option that can make git run a program (``-c core.fsmonitor=...``, ``-c alias.x=!...``) hides the line."""
    index = 1
    while index < len(words):
        word = words[index]
        option, eq, value = word.partition("=")
        if option in GIT_VALUE_OPTIONS:
            if eq and option.startswith("--"):
                given: str | None = value
                index += 1
            elif option == "--exec-path":  # alone, it prints the path
                given = None
                index += 1
            else:
                given = words[index + 1] if index + 1 < len(words) else None
                index += 2
            if option in _GIT_LOCATIONS and given not in _HERE:  # another repository's config, as GIT_DIR=... picks
                scan.env.append(_GIT_LOCATIONS[option])
            if git_option_runs_code(option, given):
                scan.hide(
                    f"git {option} {given or ''} can make git run a program the line does not show".replace("  ", " ")
                )
            continue
        if word in GIT_FLAGS:
            index += 1
            continue
        break
    return [words[0], *words[index:]]


def _peel(words: list[str], scan: _Scan, *, depth: int) -> tuple[list[str], bool] | None:
    """Drop leading assignments and wrapper commands (``sudo``, ``env X=1``, ``timeout 5`` ...).

    Returns the command that is left and whether its arguments come from input (``xargs``), or None when a
    wrapper's command string was split as a line of its own (``su -c '...'``, ``watch '...'``).
    """
    from_input = False
    while words:
        while words and (_ASSIGNMENT.match(words[0]) or words[0] in _RESERVED):
            if words[0] == "coproc" and len(words) > 2 and words[2] in _COMPOUND_STARTS:
                words = words[2:]  # `coproc NAME { rm x; }`: the coprocess's name, then its command
                continue
            assigned = _ASSIGNMENT.match(words[0])
            if assigned:
                scan.env.append(assigned.group(1))
            words = words[1:]
        if words and words[0] == "function":  # `function name {`
            words = words[2:]
            continue
        if not words:
            break
        name = words[0].rsplit("/", 1)[-1]
        wrapper = WRAPPERS.get(name) or (WRAPPERS["ld.so"] if is_loader(name) else None)
        rest = words[1:]
        if wrapper is None:
            # `docker exec CONTAINER cmd`, `kubectl -n ns exec POD -- cmd`: the subcommand is the wrapper
            found = exec_subcommand(name, rest)
            if found is None:
                break
            wrapper, skipped = found
            rest = rest[skipped:]
        scan.privileged |= wrapper.privileged
        from_input |= wrapper.input_arguments
        _runs(
            name, words, scan, depth=depth
        )  # a wrapper's own options may load code (`strace -o '|cmd'`, `ld.so --preload`)
        # an option taking a value the table does not know must not hide the command: deny rules see every tail
        scan.tails.extend(" ".join(rest[i:]) for i in range(len(rest)))
        index, positionals, restart, program = 0, wrapper.positionals, None, None
        while index < len(rest):
            word = rest[index]
            if word == "--":  # the end of the options; a wrapper's positional words (`timeout -- 5 cmd`) may follow
                index += 1 + positionals
                break
            option, eq, value = word.partition("=")
            if word.startswith("-") and len(word) > 1:
                if option in wrapper.command_options or (
                    not word.startswith("--") and f"-{word[-1]}" in wrapper.command_options and "=" not in word
                ):
                    given = value if eq else (rest[index + 1] if index + 1 < len(rest) else None)
                    if given is None:
                        scan.hide(f"{name} {word} gets its command from input, which the rules cannot see")
                        scan.pieces.append(" ".join(words))
                    else:
                        _collect(given, scan, depth=depth + 1)
                    return None
                # as getopt reads it: `-iu NAME` and `--uns NAME` give NAME to --unset, `-vS'STRING'` splits STRING
                option, glued = _spelled_option(word, _ENV_VALUES if name == "env" else wrapper.takes_value)
                if name == "env" and option in ("-S", "--split-string"):
                    given = glued if glued is not None else (rest[index + 1] if index + 1 < len(rest) else "")
                    after = index + (1 if glued is not None else 2)
                    try:
                        restart = shlex.split(given) + rest[after:]
                    except ValueError:
                        scan.hide("env -S is given a string that cannot be parsed")
                        scan.pieces.append(" ".join(words))
                        return None
                    break
                if option in wrapper.program_options:
                    program = glued if glued is not None else (rest[index + 1] if index + 1 < len(rest) else "")
                if wrapper.remote and wrapper.joins_rest:  # ssh
                    index += _ssh_option(rest, index, wrapper, scan, depth=depth)
                    continue
                index += 2 if option in wrapper.takes_value and glued is None else 1
                continue
            if name == "env" and _ASSIGNMENT.match(word):
                assigned = _ASSIGNMENT.match(word)
                assert assigned is not None
                scan.env.append(assigned.group(1))
                index += 1
                continue
            if positionals:
                positionals -= 1
                index += 1
                if not positionals and program is not None:
                    break  # `docker run --entrypoint rm IMAGE -rf x`: every word after the image goes to the program
                continue
            break
        if restart is not None:
            words = restart
            continue
        if wrapper.joins_rest:
            if index < len(rest):
                _collect(" ".join(rest[index:]), scan, depth=depth + 1)
            elif wrapper.remote and not any(_SSH_REMOTE_COMMAND.match(word) for word in rest):
                scan.hide(
                    f"{name} without a remote command runs a login shell on the host, reading commands from its input"
                )
                scan.pieces.append(" ".join(words))
            return None
        words = rest[index:] if program is None else [program, *rest[index:]]
    return words, from_input


_ENV_VALUES = frozenset({"-u", "--unset", "-C", "--chdir", "-S", "--split-string"})
"""env's options that take a value (``-S``'s is the command line it splits)."""


def _spelled_option(word: str, takes_value: frozenset[str]) -> tuple[str, str | None]:
    """The option an option word gives, as getopt reads it, and its value when the word holds it (None: the next
    word is its value, or it takes none).

    A short cluster gives its first letter that takes a value, the rest of the word being that value (``-iu`` is
    ``-u`` and the next word, ``-vSrm`` is ``-S`` with ``rm``). A long option may be abbreviated (``--uns`` is
    ``--unset``); a prefix of several is read as the first (getopt refuses it as ambiguous: nothing runs)."""
    option, eq, value = word.partition("=")
    if option in takes_value:
        return option, value if eq else None
    if word.startswith("--"):
        longer = sorted(k for k in takes_value if k.startswith(option) and len(option) > 2)
        return (longer[0], value if eq else None) if longer else (option, value if eq else None)
    for at, letter in enumerate(word[1:], start=2):
        if f"-{letter}" in takes_value:
            return f"-{letter}", word[at:] or None
    return option, value if eq else None


def _ssh_option(rest: list[str], index: int, wrapper: Wrapper, scan: _Scan, *, depth: int) -> int:
    """Read one of ssh's option words (a cluster such as ``-tp 22`` or ``-oProxyCommand=...``); returns how many
    words it took. The command line of ``-o ProxyCommand=`` / ``LocalCommand=`` / ``RemoteCommand=`` is split as a
    line of its own."""
    letters = rest[index][1:]
    for at, letter in enumerate(letters):
        if f"-{letter}" not in wrapper.takes_value:
            continue
        value = letters[at + 1 :] or (rest[index + 1] if index + 1 < len(rest) else "")
        command, hidden = ssh_option(letter, value)
        if command is not None:
            _collect(command, scan, depth=depth + 1)
        if hidden is not None:
            scan.hide(hidden)
        return 1 if letters[at + 1 :] else 2
    return 1


_SETTERS = frozenset({"export", "declare", "typeset", "local", "readonly"})
_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def _runs(name: str, words: list[str], scan: _Scan, *, depth: int) -> None:
    """Read one command against the table of programs that run code from elsewhere (``_exec_reader``)."""
    read_command(name, words, scan, lambda line: _collect(line, scan, depth=depth + 1))
