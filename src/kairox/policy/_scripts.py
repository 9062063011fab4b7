"""Scripts and programs a command line starts from files, looked into so deny and ask rules see what runs (Y8).

``sh s.sh``, ``bash ./s.sh`` and ``./s.sh`` run the commands of a file: the file is read (at most
``SCRIPT_LIMIT`` bytes) and its lines split as the line itself is, so ``deny rm*`` refuses a script that runs
``rm``. What cannot be read that way is a load (the engine asks when a deny or ask rule could apply): a script
missing, unreadable, too large or binary, a script in another language kept in a writable folder (``python3
x.py``), a program started from a writable folder (a copy of ``rm`` under another name), a Python module found in
the working folder first (``python3 -m pytest`` with a ``pytest.py`` there), and a script the line may change
before it runs (other commands on the line, a script that writes its own file).

Only the engine calls this, and only when such a rule exists: without one nothing is read.
"""

import functools
from dataclasses import replace
from pathlib import Path

from kairox.policy._exec_table import Runs, entry, program_key
from kairox.policy._host import HostFacts
from kairox.policy._shell import ShellCommand, split_command
from kairox.policy._wrappers import SHELLS

SCRIPT_LIMIT = 64 * 1024
"""The largest script read; a larger one is asked about."""
_MAX_DEPTH = 4
"""Scripts run by scripts, read this deep; deeper ones are asked about."""
_FOLDER_CHANGES = frozenset({"cd", "pushd", "popd"})
_split = functools.lru_cache(maxsize=64)(split_command)
"""Scripts split before, by their text: a call is decided more than once (the decision, the rule to offer), and a
session runs the same script again; the file itself is read each time, so a changed script is split anew."""


class _Found:
    def __init__(self, host: HostFacts) -> None:
        self.host = host
        self.tails: list[str] = []
        self.loads: list[tuple[str, str]] = []
        self.read: set[Path] = set()

    def load(self, why: str, option: str) -> None:
        if (why, option) not in self.loads:
            self.loads.append((why, option))


def look_into(
    command: ShellCommand, *, cwd: Path, roots: tuple[Path, ...], host: HostFacts, entered: int = 0
) -> ShellCommand:
    """``command`` with the commands of the scripts it runs added to its tails, and what could not be looked into
    added to its loads. ``cwd``: the folder the line runs in; ``entered``: how many leading pieces are the
    ``cd DIR`` that puts it there; ``host``: where the scripts are read (the caller's view of the files)."""
    found = _Found(host)
    _look(command, found, cwd=cwd, roots=roots, entered=entered, depth=0)
    if not found.tails and not found.loads:
        return command
    tails = tuple(dict.fromkeys(t for t in (*command.tails, *found.tails) if t not in command.pieces))
    return replace(
        command, tails=tails, loads=(*command.loads, *(load for load in found.loads if load not in command.loads))
    )


def _look(
    command: ShellCommand, found: _Found, *, cwd: Path, roots: tuple[Path, ...], entered: int, depth: int
) -> None:
    pieces = command.pieces[entered:]
    moves = any(p.split(" ", 1)[0] in _FOLDER_CHANGES for p in pieces)
    # what runs before a script may rewrite it: the line's other commands, or a script's own writes
    changing = len(pieces) > 1 if depth == 0 else command.writes
    for piece in pieces:
        words = piece.split(" ")
        head = words[0]
        if head.startswith("#"):
            continue
        name = head.rsplit("/", 1)[-1]
        runs = entry(name)
        if name in SHELLS or (runs is not None and runs.script):
            script = _operand(words, runs)
            if script is not None:
                _script(
                    script, name in SHELLS, found, changing=changing, moves=moves, cwd=cwd, roots=roots, depth=depth
                )
            if program_key(name) == "python":
                _module(words, found, cwd=cwd, changing=changing)
        if "/" in head:
            _program(head, words, found, changing=changing, moves=moves, cwd=cwd, roots=roots, depth=depth)


def _operand(words: list[str], runs: Runs | None) -> str | None:
    """The script an interpreter is given: its first operand, unless its program is given as code or a module."""
    index = 1
    while index < len(words):
        word = words[index]
        if word == "--":
            return words[index + 1] if index + 1 < len(words) else None
        if runs is not None and any(word == c or (not c.startswith("--") and word.startswith(c)) for c in runs.code):
            return None
        if word.startswith("-m") or word in ("-", "-s"):
            return None
        if word.startswith(("-", "+")):
            index += 2 if runs is not None and word in runs.values else 1
            continue
        return word
    return None


def _writable(path: Path, roots: tuple[Path, ...]) -> bool:
    return any(path.is_relative_to(root) for root in roots)


def _resolve(text: str, cwd: Path, host: HostFacts) -> Path:
    path = Path(host.expand_user(text) if text.startswith("~") else text)
    return Path(host.real_path(str(path if path.is_absolute() else cwd / path)))


def _script(
    text: str,
    shell: bool,
    found: _Found,
    *,
    changing: bool,
    moves: bool,
    cwd: Path,
    roots: tuple[Path, ...],
    depth: int,
) -> None:
    relative = not Path(text).is_absolute() and not text.startswith("~")
    if moves and relative:
        found.load(f"the line changes folder, so which file {text} is cannot be told", text)
        return
    path = _resolve(text, cwd, found.host)
    if not shell:
        if _writable(path, roots):
            found.load(
                f"the script {text} is in a writable folder and its code is not a shell's, so the rules cannot read it",
                text,
            )
        return
    _read(text, path, found, changing=changing, cwd=cwd, roots=roots, depth=depth)


def _read(
    text: str, path: Path, found: _Found, *, changing: bool, cwd: Path, roots: tuple[Path, ...], depth: int
) -> None:
    """Split a shell script's lines and add them to what deny and ask rules see."""
    if path in found.read:
        return
    if depth >= _MAX_DEPTH:
        found.load(f"the script {text} is run by scripts nested more than {_MAX_DEPTH} deep", text)
        return
    try:
        data = found.host.read_start(path, SCRIPT_LIMIT + 1)
    except OSError as exc:
        found.load(f"the script {text} cannot be read ({exc.strerror or exc})", text)
        return
    if len(data) > SCRIPT_LIMIT:
        found.load(f"the script {text} is larger than {SCRIPT_LIMIT // 1024} KiB, the most the rules read", text)
        return
    if b"\0" in data:
        found.load(f"the script {text} is not text", text)
        return
    found.read.add(path)
    if changing:
        found.load(f"other commands of the line may change {text} before it runs", text)
    content = data.decode("utf-8", errors="replace")
    inner = _split(content)
    found.tails += [*inner.pieces, *inner.tails]
    if inner.hidden is not None:
        found.load(f"in {text}: {inner.hidden}", text)
    for why, option in inner.loads:
        found.load(f"in {text}: {why}", option)
    if inner.writes and path.name in content:
        found.load(f"{text} writes a file that may be itself, and a shell reads a script as it runs it", text)
    _look(inner, found, cwd=cwd, roots=roots, entered=0, depth=depth + 1)


def _program(
    head: str,
    words: list[str],
    found: _Found,
    *,
    changing: bool,
    moves: bool,
    cwd: Path,
    roots: tuple[Path, ...],
    depth: int,
) -> None:
    """A program started by its path: one in a writable folder may be anything (a copy of ``rm`` under another
    name) unless it is a shell script the rules can read; one elsewhere is seen under its real name too."""
    relative = not head.startswith(("/", "~"))
    if moves and relative:
        found.load(f"the line changes folder, so which program {head} is cannot be told", head)
        return
    path = _resolve(head, cwd, found.host)
    if not _writable(path, roots):
        real = path.name
        if real != head.rsplit("/", 1)[-1]:  # a link to another program: rules see the program it runs
            found.tails.append(" ".join([real, *words[1:]]))
        return
    try:
        start = found.host.read_start(path, 256)
    except OSError:
        start = b"\0"
    if start.startswith(b"#!"):
        interpreter = start[2:].split(b"\n", 1)[0].split()
        names = [Path(w.decode(errors="replace")).name for w in interpreter[:2]]
        shell = bool(names) and (names[0] in SHELLS or (names[0] == "env" and len(names) > 1 and names[1] in SHELLS))
    else:  # a text file without `#!`: the shell runs it as a script when the kernel cannot
        shell = bool(start) and b"\0" not in start and not start.startswith(b"\x7fELF")
    if shell:
        _read(head, path, found, changing=changing, cwd=cwd, roots=roots, depth=depth)
    elif start.startswith(b"#!"):
        found.load(
            f"the script {head} is in a writable folder and its code is not a shell's, so the rules cannot read it",
            head,
        )
    else:
        found.load(f"the program {head} is started from a writable folder, so its name does not say what it runs", head)


def _module(words: list[str], found: _Found, *, cwd: Path, changing: bool) -> None:
    """``python3 -m NAME``: the working folder comes first on the module path, so a ``NAME.py`` there runs instead,
    one the line's other commands may write first included (``printf ... > x.py; python3 -m x``)."""
    index = 1
    while index < len(words):
        word = words[index]
        if word in ("-W", "-X"):
            index += 2
            continue
        if not word.startswith("-") or word.startswith("--"):
            return
        if "m" in word[1:]:
            at = word.index("m", 1)
            module = word[at + 1 :] or (words[index + 1] if index + 1 < len(words) else "")
            top = module.partition(".")[0]
            if top and found.host.has_module(cwd, top):
                found.load(
                    f"{words[0]} -m {module} finds {top} in the working folder first, code the rules cannot read", "-m"
                )
            elif top and changing:
                found.load(
                    f"other commands of the line may write {top}.py, which {words[0]} -m {module} would run first", "-m"
                )
            return
        index += 1
