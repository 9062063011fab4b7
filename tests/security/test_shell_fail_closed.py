"""Shell rules fail closed (attack corpus, class 12): when a deny or ask rule on the shell could apply and a command
runs code Kairox cannot see through, the call is asked about (refused under ``never``), and an allow rule covers
no option that loads or runs code from elsewhere.

The programs that run code from their options, operands, environment or option files are one table
(``kairox.policy._exec_table.TABLE``): every entry is tried here, each spelling under ``deny rm*``, under
``never``, and against an allow rule for the program. The other classes: inline interpreter code, script files
(read and checked; unreadable, too large or binary ones ask), programs started from a writable folder, and lines
continued with a backslash inside a word. Without a deny or ask rule nothing changes. ``test_shell_fail_closed_runs``
runs the same classes through the registry under bubblewrap."""

import os
import shutil
from pathlib import Path

import pytest
from tests.security._support import engine, shell, workspace

from kairox.config import ApprovalPolicy
from kairox.policy import DecisionSource, Verdict
from kairox.policy._exec_table import GLOBAL_ENV, TABLE, Runs

DENY_RM = ("deny", "shell.exec(rm*)")
LOADER = "/lib64/ld-linux-x86-64.so.2"

TEXT_SAMPLES = {
    "sqlite3": ":memory: '.shell rm victim'",
    "psql": "-c '\\! rm victim'",
    "mysql": "-e 'system rm victim'",
    "awk": "'BEGIN { system(\"rm victim\") }'",
    "gawk": '\'BEGIN { print "x" | "rm victim" }\'',
    "mawk": "'BEGIN { \"rm victim\" | getline x }'",
    "nawk": "'BEGIN { system(\"rm victim\") }'",
    "scp": "-o ProxyCommand='rm victim' a host:b",
    "sftp": "-o 'LocalCommand rm victim' host",
    "socat": "- EXEC:'rm victim'",
    "strace": "-o '|rm victim' true",
    "ltrace": "-o '!rm victim' true",
}
"""A line for each entry that runs a program through text in its arguments (the table's ``text``)."""


def _shown(key: str) -> str:
    return LOADER if key == "ld.so" else key


def _cases() -> list[tuple[str, str]]:
    """``(entry, line)``: every spelling of every entry of the table, as a line that would run ``rm victim``."""
    cases: list[tuple[str, str]] = []
    for key, runs in TABLE.items():
        program = _shown(key)
        for kind in ("code", "files", "programs", "lines"):
            for option in sorted(getattr(runs, kind)):
                value = "evil.file" if kind == "files" else "'rm victim'"
                cases.append((key, f"{program} {option} {value} x"))
        cases += [(key, f"{program} {word} rm victim") for word in sorted(runs.rest)]
        cases += [(key, f"{variable.replace('*', 'X')}='rm victim' {program} x") for variable in sorted(runs.env)]
        cases += [
            (key, f"{program} {'CC' if name == '*' else name}='rm victim' x") for name in sorted(runs.assignments)
        ]
        if runs.text is not None:
            cases.append((key, f"{program} {TEXT_SAMPLES[key]}"))
        if runs.plus:
            cases.append((key, f"{program} +'!rm victim' x"))
        if runs.always is not None:
            cases.append((key, f"{program} now"))
    return cases


TABLE_CASES = _cases()


def test_every_entry_that_runs_text_has_a_sample() -> None:
    assert sorted(k for k, r in TABLE.items() if r.text is not None) == sorted(TEXT_SAMPLES)
    assert all(any(k == key for k, _ in TABLE_CASES) for key, runs in TABLE.items() if runs != Runs(script=True))


@pytest.mark.parametrize(("key", "line"), TABLE_CASES, ids=[f"{k}: {line}" for k, line in TABLE_CASES])
def test_a_program_that_runs_code_from_its_options_environment_or_files_is_asked_about_under_a_deny_rule(
    tmp_path: Path, key: str, line: str
) -> None:
    ws = workspace(tmp_path)
    decision = shell(engine(ws, DENY_RM), line)
    assert decision.verdict in (Verdict.ASK, Verdict.DENY) and decision.source is DecisionSource.RULE, decision.reason
    assert "shell.exec(rm*)" in decision.reason
    assert shell(engine(ws, DENY_RM, approval=ApprovalPolicy.NEVER), line).verdict is Verdict.DENY


# a variable set on the line already keeps every allow rule off it (test_shell_rules), and a program that always
# runs commands from elsewhere (`at`) is vouched for by an allow rule that names it
OPTION_CASES = [
    c
    for c in TABLE_CASES
    if TABLE[c[0]].always is None and not c[1].startswith(tuple(n.replace("*", "X") for n in TABLE[c[0]].env))
]


@pytest.mark.parametrize(("key", "line"), OPTION_CASES, ids=[f"{k}: {line}" for k, line in OPTION_CASES])
def test_an_allow_rule_for_the_program_does_not_cover_what_it_runs_from_elsewhere(
    tmp_path: Path, key: str, line: str
) -> None:
    decision = shell(
        engine(workspace(tmp_path), ("allow", f"shell.exec({_shown(key)}*)"), approval=ApprovalPolicy.UNTRUSTED), line
    )
    assert decision.verdict is Verdict.ASK, decision.reason


@pytest.mark.parametrize("variable", sorted(GLOBAL_ENV))
def test_a_variable_that_changes_what_every_program_runs_is_asked_about(tmp_path: Path, variable: str) -> None:
    decision = shell(engine(workspace(tmp_path), DENY_RM), f"{variable.replace('*', 'X')}=/tmp/evil ls")
    assert (decision.verdict, decision.source) == (Verdict.ASK, DecisionSource.RULE), decision.reason


# inline interpreter code, and the issue's own examples of each class
INLINE_AND_OPTIONS = [
    "python3 -c 'import os; os.system(\"rm victim\")'",
    "python3 -Ic 'import os; os.remove(\"victim\")'",
    "python3.12 -c 'import os'",
    'node -e \'require("fs").rmSync("victim")\'',
    "perl -e 'unlink \"victim\"'",
    "ruby -e 'File.delete(\"victim\")'",
    "php -r 'unlink(\"victim\");'",
    "vim -es -c '!rm victim' -c 'qa!'",
    "ex -c '!rm victim' -c q",
    "vim +'!rm victim' +q",
    "nvim --cmd '!rm victim'",
    "sqlite3 :memory: '.shell rm victim'",
    "sqlite3 -cmd '.system rm victim' db",
    "sqlite3 db '.once |rm victim'",
    "make --eval='x: ; rm victim' x",
    "make --ev='x: ; rm victim' x",
    "make -f evil.mk",
    "make -sf evil.mk",
    "make SHELL=./evil.sh",
    "make test RM='rm victim' clean",
    "GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=alias.st GIT_CONFIG_VALUE_0='!rm victim' git st",
    "env GIT_CONFIG_PARAMETERS=\"'alias.st=!rm victim'\" git st",
    "GIT_EXTERNAL_DIFF=./evil.sh git diff",
    "export GIT_PAGER='rm victim'; git log",
    "sed -f evil.sed README.md",
    "sed --file=evil.sed README.md",
    "LESSOPEN='|rm victim; cat %s' less README.md",
    "PAGER='rm victim' man ls",
    "MANPAGER='rm victim' man ls",
    "gdb -batch -ex '!rm victim'",
    "gdb -x evil.gdb",
    "lldb -o 'platform shell rm victim'",
    "LD_PRELOAD=./evil.so ls",
    f"{LOADER} --preload ./evil.so /bin/ls",
    "awk 'BEGIN { system(\"rm victim\") }'",
    "awk -f evil.awk README.md",
    "TAR_OPTIONS=--to-command=./evil.sh tar -xf a.tar",
    "npm --script-shell=./evil.sh run test",
    "npm_config_script_shell=./evil.sh npm run test",
    "pytest -p evilplugin",
    "python3 -m pytest -p evilplugin -q",
    "PYTEST_PLUGINS=evilplugin python3 -m pytest",
    "at now",
    # an option or variable only known when the line runs may be any of the table's
    "vim $'\\x2dc' '!rm victim'",
    "F=-f; make $F evil.mk",
    "make -$F evil.mk",
    "read LD_PRELOAD <<< ./evil.so; export LD_PRELOAD; ls",
    "export $V; ls",
    "make -C /tmp/evil",
    "npm --prefix /tmp/evil run test",
]


@pytest.mark.parametrize("line", INLINE_AND_OPTIONS)
def test_inline_code_and_code_loaded_by_options_are_asked_about_under_a_deny_rule(tmp_path: Path, line: str) -> None:
    decision = shell(engine(workspace(tmp_path), DENY_RM), line)
    assert (decision.verdict, decision.source) == (Verdict.ASK, DecisionSource.RULE), decision.reason
    assert "cannot be checked" in decision.reason


WRAPPED_BY_TOOLS = [
    "perf record rm victim",
    "perf stat -e cycles rm victim",
    "perf sched record rm victim",
    f"{LOADER} /bin/rm victim",
    "/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2 --library-path /lib rm victim",
    "gdb --args rm victim",
    "git submodule foreach 'rm victim'",
    "git rebase -x 'rm victim' HEAD~1",
    "git bisect run rm victim",
    "npx -c 'rm victim'",
    "ncat --sh-exec 'rm victim' -l 1",
    "go test -exec 'rm victim' ./...",
    "valgrind --db-command='rm victim' ls",
]


@pytest.mark.parametrize("line", WRAPPED_BY_TOOLS)
def test_tracers_profilers_the_loader_and_programs_that_exec_their_arguments_are_wrappers(
    tmp_path: Path, line: str
) -> None:
    decision = shell(engine(workspace(tmp_path), DENY_RM), line)
    assert (decision.verdict, decision.source) == (Verdict.DENY, DecisionSource.RULE), decision.reason


# an allow rule never covers options of its command that load or run code from elsewhere
ALLOWS = [
    ("allow", "shell.exec(make test*)"),
    ("allow", "shell.exec(npm run test*)"),
    ("allow", "shell.exec(python3 -m pytest*)"),
]
WIDENED = [
    "make test -f evil.mk",
    "make test --file=evil.mk",
    "make test --eval='test: ; rm victim'",
    "make test SHELL=./evil.sh",
    "make test -I evil",
    "npm run test --script-shell=./evil.sh",
    "npm run test:unit --script-shell ./evil.sh",
    "npm run test --node-options='--require ./evil.js'",
    "python3 -m pytest -p evilplugin",
    "python3 -m pytest -q -pevilplugin",
    "python3 -m pytest -c evil.ini",
    "python3 -m pytest --rootdir=/tmp/evil",
    "python3 -m pytest -o addopts='-p evilplugin'",
    "python3 -m pytest -W error::evilplugin.Warning",
]


@pytest.mark.parametrize("line", WIDENED)
def test_an_allow_rule_does_not_cover_an_option_that_loads_code_from_elsewhere(tmp_path: Path, line: str) -> None:
    decision = shell(engine(workspace(tmp_path), *ALLOWS, approval=ApprovalPolicy.UNTRUSTED), line)
    assert decision.verdict is Verdict.ASK, decision.reason


@pytest.mark.parametrize(
    "line",
    [
        "make test",
        "make test -j4",
        "npm run test",
        "npm run test:unit -- --watch=false",
        "python3 -m pytest -q",
        "python3 -m pytest -x tests/unit",
        "python3 -m pytest -k smoke",
    ],
)
def test_the_same_allow_rules_still_cover_the_plain_commands(tmp_path: Path, line: str) -> None:
    decision = shell(engine(workspace(tmp_path), *ALLOWS, approval=ApprovalPolicy.UNTRUSTED), line)
    assert (decision.verdict, decision.source) == (Verdict.ALLOW, DecisionSource.RULE), decision.reason


def test_an_allow_rule_that_writes_the_option_out_vouches_for_it(tmp_path: Path) -> None:
    policy = engine(
        workspace(tmp_path),
        ("allow", "shell.exec(python3 -c*)"),
        ("allow", "shell.exec(make -f ci.mk*)"),
        approval=ApprovalPolicy.UNTRUSTED,
    )
    assert shell(policy, "python3 -c 'print(1)'").verdict is Verdict.ALLOW
    assert shell(policy, "make -f ci.mk lint").verdict is Verdict.ALLOW
    assert shell(policy, "make -f ci.mk lint --eval=x").verdict is Verdict.ASK


# script files: read and checked; what cannot be read asks
def _scripts(ws: Path) -> None:
    (ws / "s.sh").write_text("#!/bin/sh\n# clean up\necho cleaning\nrm victim\n")
    (ws / "ok.sh").write_text("#!/bin/sh\necho fine\nls -la\n")
    (ws / "outer.sh").write_text("echo outer\nsh ./s.sh\n")
    (ws / "big.sh").write_text("echo padding\n" * 6000)
    (ws / "blob.sh").write_bytes(b"\x7fELF\0\0\0rm victim")
    (ws / "self.sh").write_text("echo 'rm victim' >> self.sh\n")
    (ws / "t.py").write_text("import os\nos.remove('victim')\n")
    (ws / "folder.sh").mkdir()
    (ws / "pytest.py").write_text("import os\nos.remove('victim')\n")
    for name in ("s.sh", "ok.sh", "outer.sh"):
        (ws / name).chmod(0o755)


SCRIPT_DENIED = [
    "sh s.sh",
    "bash ./s.sh",
    "./s.sh",
    "bash -e s.sh arg",
    "dash -x -- s.sh",
    "sh outer.sh",
    "nice ./s.sh",
    "sudo sh s.sh",
]


@pytest.mark.parametrize("line", SCRIPT_DENIED)
def test_a_script_is_read_and_its_lines_meet_the_deny_rule(tmp_path: Path, line: str) -> None:
    ws = workspace(tmp_path)
    _scripts(ws)
    decision = shell(engine(ws, DENY_RM), line)
    assert (decision.verdict, decision.source) == (Verdict.DENY, DecisionSource.RULE), decision.reason


SCRIPT_ASKED = [
    "sh big.sh",
    "sh missing.sh",
    "sh folder.sh",
    "sh blob.sh",
    "sh self.sh",
    "echo 'rm victim' > ok.sh; sh ok.sh",
    "cp s.sh ok.sh && ./ok.sh",
    "cd src && sh ../ok.sh",
    "python3 t.py",
    "perl t.py",
    "node ./t.py",
    "python3 -m pytest -q",
    # the line writes the module it then runs (held-out round c)
    """printf 'import os\\nos.system("rm victim")\\n' > x.py; python3 -m x""",
    "cat other.py > helper.py && python3 -m helper",
    "run-parts ./hooks.d",
    "dpkg-architecture -c sh ok.sh",
]


@pytest.mark.parametrize("line", SCRIPT_ASKED)
def test_a_script_that_cannot_be_read_or_may_change_first_is_asked_about(tmp_path: Path, line: str) -> None:
    ws = workspace(tmp_path)
    _scripts(ws)
    decision = shell(engine(ws, DENY_RM), line)
    assert (decision.verdict, decision.source) == (Verdict.ASK, DecisionSource.RULE), decision.reason


@pytest.mark.parametrize(
    "line", ["sh ok.sh", "./ok.sh", "bash ok.sh -v", "python3 /usr/lib/python3/dist-packages/x.py"]
)
def test_a_readable_script_the_rules_let_through_still_runs_without_a_question(tmp_path: Path, line: str) -> None:
    ws = workspace(tmp_path)
    _scripts(ws)
    decision = shell(engine(ws, DENY_RM), line)
    assert decision.verdict is Verdict.ALLOW, decision.reason


# a program started from a writable folder
def test_a_copy_of_a_denied_program_under_another_name_is_asked_about(tmp_path: Path) -> None:
    ws = workspace(tmp_path)
    shutil.copy("/bin/rm", ws / "cleaner")
    shutil.copy("/bin/rm", tmp_path / "tmp" / "cleaner")
    policy = engine(ws, DENY_RM)
    for line in (
        "./cleaner victim",
        "src/../cleaner victim",
        f"{tmp_path}/tmp/cleaner victim",
        "./not-there victim",
        "exec ./cleaner victim",
    ):
        decision = shell(policy, line)
        assert (decision.verdict, decision.source) == (Verdict.ASK, DecisionSource.RULE), (line, decision.reason)
        assert "writable folder" in decision.reason
    assert shell(engine(ws, DENY_RM, approval=ApprovalPolicy.NEVER), "./cleaner victim").verdict is Verdict.DENY


def test_a_link_to_a_denied_program_meets_the_deny_rule_under_the_program_s_name(tmp_path: Path) -> None:
    ws = workspace(tmp_path)
    os.symlink(os.path.realpath("/bin/rm"), ws / "tidy")
    decision = shell(engine(ws, DENY_RM), "./tidy victim")
    assert (decision.verdict, decision.source) == (Verdict.DENY, DecisionSource.RULE), decision.reason


# line continuations, as bash reads them
CONTINUED = [
    "r\\\nm victim",
    "r\\\nm -rf victim",
    '"r\\\nm" victim',
    "echo x # \\\nrm victim",
    "sudo r\\\nm victim",
    'bash -c "r\\\nm victim"',
]


@pytest.mark.parametrize("line", CONTINUED)
def test_a_backslash_newline_inside_a_word_joins_it_as_bash_does(tmp_path: Path, line: str) -> None:
    decision = shell(engine(workspace(tmp_path), DENY_RM), line)
    assert (decision.verdict, decision.source) == (Verdict.DENY, DecisionSource.RULE), decision.reason


def test_a_backslash_newline_in_single_quotes_stays_text(tmp_path: Path) -> None:
    decision = shell(
        engine(workspace(tmp_path), DENY_RM, ("allow", "shell.exec(echo*)"), approval=ApprovalPolicy.UNTRUSTED),
        "echo 'r\\\nm victim'",
    )
    assert decision.verdict is Verdict.ALLOW, decision.reason


# without a deny or ask rule nothing changes: the sandbox is the boundary
UNCHANGED = [
    "python3 -c 'print(1)'",
    "vim -es -c '!rm victim'",
    "make -f evil.mk",
    "sh s.sh",
    "./cleaner victim",
    "LESSOPEN='|x %s' less README.md",
]


@pytest.mark.parametrize("line", UNCHANGED)
def test_without_a_deny_or_ask_rule_nothing_is_asked(tmp_path: Path, line: str) -> None:
    ws = workspace(tmp_path)
    _scripts(ws)
    shutil.copy("/bin/rm", ws / "cleaner")
    for policy in (
        engine(ws),
        engine(ws, ("allow", "shell.exec(git status*)")),
        engine(ws, ("deny", "fs.read(secrets/**)")),
    ):
        decision = shell(policy, line)
        assert (decision.verdict, decision.source) == (Verdict.ALLOW, DecisionSource.MODE), decision.reason
