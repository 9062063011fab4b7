"""The cost of matching shell commands against allow rules word by word.

Word-bounded: ``allow_matches`` (the program and git's subcommand as whole words, compiled once per rule).
Plain: ``fnmatch.fnmatchcase`` on the same command and glob (how allow rules matched before, and how deny and ask
rules still match). Each round matches every command of a corpus against 30 rules; prints the median over ROUNDS
in microseconds per match, and the word-bounded/plain ratio. For scale, a whole ``PolicyEngine.decide`` of a
three-command line under the same 30 rules, and with a deny rule added: the same line, a line the table of programs
that run code reads (``make -f``), and a line running a 40-line script (read and split at each decision).

Run: .venv/bin/python bench/shell_rules.py [ROUNDS]
"""

import fnmatch
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from kairox.config import ApprovalPolicy, PolicyConfig
from kairox.policy import PolicyEngine, PolicySettings, Rule
from kairox.policy._command_glob import allow_matches
from kairox.tools import BUILTIN_SPECS, ToolSpec

GLOBS = [f"tool{i} sub*" for i in range(20)] + [
    "ls*",
    "git status*",
    "git log*",
    "npm run test*",
    "rm build/*",
    "cat*",
    "tr*",
    "make*",
    "pytest -q*",
    "echo*",
]
COMMANDS = [
    "ls -la src",
    "git status --short",
    "git log --oneline -5",
    "npm run test:unit",
    "lsof -i",
    "truncate -s 0 x",
    "git status-x",
    "make test",
]


def _per_match(match: Callable[[str, str], bool], rounds: int) -> float:
    samples = []
    for _ in range(rounds):
        start = time.perf_counter()
        for command in COMMANDS:
            for glob in GLOBS:
                match(command, glob)
        samples.append((time.perf_counter() - start) / (len(COMMANDS) * len(GLOBS)))
    return statistics.median(samples) * 1e6


def main() -> None:
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 200
    plain = _per_match(lambda command, glob: fnmatch.fnmatchcase(command, " ".join(glob.split())), rounds)
    bounded = _per_match(allow_matches, rounds)
    print(f"plain fnmatch        {plain:8.3f} us/match")
    print(f"word-bounded         {bounded:8.3f} us/match")
    print(f"ratio bounded/plain  {bounded / plain:8.2f}")
    with tempfile.TemporaryDirectory() as folder:
        ws = Path(folder)
        rules = [
            Rule(action="allow", pattern=f"shell.exec({glob})", file="kairox.toml", line=i)
            for i, glob in enumerate(GLOBS, start=1)
        ]
        engine = PolicyEngine(
            PolicySettings.from_config(
                PolicyConfig(approval_policy=ApprovalPolicy.UNTRUSTED), workspace=ws, rules=rules
            )
        )
        shell = next(spec for spec in BUILTIN_SPECS if spec.name == "shell.exec")
        print(
            "decide (3 commands)  "
            f"{_per_call(engine, shell, 'git status --short && ls -la src | cat', rounds):8.1f} us/call"
        )
        # a deny rule on the shell: lines are read against the program table, and scripts a line runs are read
        (ws / "check.sh").write_text(
            "#!/bin/sh\nset -e\n" + "".join(f"echo step {i} && ls -la src | grep -v x{i}\n" for i in range(40))
        )
        denying = PolicyEngine(
            PolicySettings.from_config(
                PolicyConfig(approval_policy=ApprovalPolicy.UNTRUSTED),
                workspace=ws,
                rules=[Rule(action="deny", pattern="shell.exec(rm*)"), *rules],
            )
        )
        for label, line in (
            ("3 commands", "git status --short && ls -la src | cat"),
            ("make -f", "make -j4 -f ci.mk test V=1"),
            ("script 40 lines", "sh check.sh"),
        ):
            print(f"decide, deny rule ({label:15}) {_per_call(denying, shell, line, rounds):8.1f} us/call")


def _per_call(engine: PolicyEngine, spec: ToolSpec, line: str, rounds: int) -> float:
    samples = []
    for _ in range(rounds):
        start = time.perf_counter()
        engine.decide(spec, {"command": line})
        samples.append(time.perf_counter() - start)
    return statistics.median(samples) * 1e6


if __name__ == "__main__":
    main()
