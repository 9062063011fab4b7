"""Commands read against the table of programs that run code from elsewhere (``_exec_table``), as getopt reads
their options: ``-c CODE``, ``-cCODE``, ``-Sc CODE`` in a cluster, ``--eval=CODE``, an abbreviated ``--ev``, a
``+CMD`` operand, ``NAME=VALUE`` operands, texts such as ``.shell``; ``python3 -m MODULE`` read with the module's
own entry, ``git SUBCOMMAND`` with the subcommand's."""

import re
from collections.abc import Callable
from typing import Protocol

from kairox.policy._exec_table import ASSIGNMENT, Runs, entry, program_key


class Reading(Protocol):
    """What the splitter keeps of the line being read."""

    programs: list[str]

    @property
    def expands(self) -> bool:
        """The line has a ``$`` outside single quotes, so a word holding one may be known only when it runs."""
        ...

    def load(self, reason: str, option: str) -> None: ...


_PYTHON_MODULE = re.compile(r"^-[A-Za-z]*m(.*)$")


def read_command(name: str, words: list[str], scan: Reading, split: Callable[[str], None]) -> None:
    """Read one command (``words``, its program ``name`` first) against its entry in the table: what the entry
    names is a load (``scan.load``); a shell command line an option gives goes to ``split``."""
    key = program_key(name)
    scan.programs.append(key)
    if key == "python":  # `python3 -m pytest -p x`: the module's own options, as its entry says
        for index, word in enumerate(words[1:], start=1):
            module = _PYTHON_MODULE.match(word) if not word.startswith("--") else None
            if module is not None:
                target = module.group(1) or (words[index + 1] if index + 1 < len(words) else "")
                after = index + (1 if module.group(1) else 2)
                if target:
                    read_command(target.partition(".")[0], [target, *words[after:]], scan, split)
                break
            if not word.startswith("-"):
                break
    runs = entry(name)
    if runs is not None:
        _read_entry(name, runs, words[1:], scan, split)
    if key == "git" and len(words) > 1:
        sub = entry(f"git {words[1]}")
        if sub is not None:
            _read_entry(f"git {words[1]}", sub, words[2:], scan, split)


def _long_kind(runs: Runs, option: str) -> tuple[str, str] | None:
    """A ``--long`` option as GNU getopt reads it: exact, or a prefix of the names (the first, when several)."""
    kind = runs.options.get(option)
    if kind is not None:
        return option, kind
    longer = sorted(n for n in runs.options if n.startswith("--") and n.startswith(option))
    return (longer[0], runs.options[longer[0]]) if longer else None


def _read_entry(name: str, runs: Runs, args: list[str], scan: Reading, split: Callable[[str], None]) -> None:
    if runs.always is not None:
        scan.load(runs.always, name)
    if not runs.reads_arguments:
        return
    index = 0
    while index < len(args):
        word = args[index]
        index += 1
        if scan.expands and (word.startswith("$") or (word.startswith("-") and "$" in word)):
            # `vim $'\x2dc' '!rm x'`, `make $FLAGS`: an option only known when the line runs may be any of the entry's
            scan.load(
                f"an argument of {name} is only known when the line runs and may be an option that runs code", "$"
            )
        if runs.text is not None:
            found = runs.text.search(word)
            if found is not None:
                scan.load(
                    f"{name} is given {found.group(0).strip()!r}, which runs a program the rules cannot see",
                    found.group(0).strip(),
                )
        if word in runs.rest:
            if index < len(args):
                split(" ".join(args[index:]))
            return
        if word == "--":
            continue  # operands follow; their text still counts
        matched: tuple[str, str] | None = None
        value: str | None = None
        if word.startswith("--") and len(word) > 2:
            option, eq, glued = word.partition("=")
            matched = _long_kind(runs, option)
            value = glued if eq else None
        elif word.startswith("-") and len(word) > 1:
            option, eq, glued = word.partition("=")
            kind = runs.options.get(option)
            if kind is not None:
                matched, value = (option, kind), glued if eq else None
            elif runs.clusters:
                for at, letter in enumerate(word[1:], start=2):
                    if f"-{letter}" in runs.values:
                        break
                    kind = runs.options.get(f"-{letter}")
                    if kind is not None:
                        matched, value = (f"-{letter}", kind), word[at:] or None
                        break
        elif word.startswith("+") and runs.plus and not word[1:].isdigit() and word != "+":
            scan.load(f"{name} {word} runs a command the rules cannot see", "+")
            continue
        elif runs.assignments and ASSIGNMENT.match(word):
            variable = word.partition("=")[0]
            if "*" in runs.assignments or variable in runs.assignments:
                scan.load(f"{name} {variable}= sets what it runs, which the rules cannot see", f"{variable}=")
            continue
        if matched is None:
            continue
        option, kind = matched
        if value is None and index < len(args):
            value = args[index]
            index += 1
        shown = f"{word} {value}" if value is not None and value not in word else word
        shown = shown if len(shown) <= 60 else shown[:57] + "..."
        if kind == "lines" or kind == "programs":
            if value:
                split(value)
            if kind == "lines":
                continue
            scan.load(f"{name} {shown} runs a program with arguments the rules cannot see", option)
        elif kind == "code":
            scan.load(f"{name} {shown} runs code the rules cannot see", option)
        else:
            scan.load(f"{name} {shown} loads code or commands from elsewhere, which the rules cannot see", option)
