"""Options that turn a reading command into a write or a program run (attack corpus, class 10): an allow rule
for ``git log*``, ``sort*``, ``find*`` or ``rg*`` vouches for reading, not for ``--output=FILE``, ``-o FILE``,
``-delete``, ``--pre PROGRAM``; and git's ``--git-dir`` / ``--work-tree`` / ``-C DIR`` count as ``GIT_DIR`` /
``GIT_WORK_TREE``: another repository's config can make git run a program (``core.fsmonitor``).

The writes really run through the registry under bubblewrap: the file an allowed line would write keeps its
bytes, the victim a hidden program would remove survives."""

import subprocess
from pathlib import Path

import pytest
from tests.registry._support import ScriptedApprover, settings
from tests.security._support import engine, shell, workspace

from kairox.config import ApprovalPolicy
from kairox.policy import DecisionSource, Rule, Verdict
from kairox.registry import build_registry
from kairox.tools import ToolCall

READERS = (
    "git log*",
    "git diff*",
    "git show*",
    "git status*",
    "sort*",
    "find*",
    "rg*",
    "tar -t*",
    "less*",
    "man*",
    "sed -n*",
    "sed s*",
)
ALLOW_READERS = [("allow", f"shell.exec({r})") for r in READERS]

WRITING = [
    "git log -1 --output=src/main.py --format=x",
    "git log -1 --output src/main.py",
    "git diff --output=src/main.py",
    "git show HEAD --output=src/main.py",
    "sort -o src/main.py src/main.py",
    "sort -osrc/main.py src/main.py",
    "sort --output=src/main.py src/main.py",
    "sort -uo src/main.py src/main.py",
    "find . -delete",
    "find src -name '*.py' -delete",
    "find . -fprint src/main.py",
    "find . -fprint0 src/main.py",
    "find . -fprintf src/main.py %p",
    "find . -fls src/main.py",
    "sed -i s/a/b/ src/main.py",
    "sed -ni p src/main.py",
    "sed --in-place=.bak s/a/b/ src/main.py",
    "sed -n 'w src/out.py' src/main.py",
    "sed -n '/x/w src/out.py' src/main.py",
    "sed -n 's/a/b/w src/out.py' src/main.py",
    "sed -n -e p -e '$W src/out.py' src/main.py",
    "less -o src/main.py README.md",
    "less --log-file=src/main.py README.md",
]


@pytest.mark.parametrize("line", WRITING)
def test_an_allow_rule_for_a_reader_does_not_cover_its_options_that_write(tmp_path: Path, line: str) -> None:
    decision = shell(engine(workspace(tmp_path), *ALLOW_READERS, approval=ApprovalPolicy.UNTRUSTED), line)
    assert decision.verdict is Verdict.ASK, decision.reason


RUNNING = [
    "rg --pre rm TOKEN victim",
    "rg --pre=rm TOKEN victim",
    "rg -z --pre rm TOKEN victim",
    "sort --compress-program=rm victim",
    "sort --compress-program rm victim",
    "git grep -Orm TOKEN",
    "git grep --open-files-in-pager=rm TOKEN",
    "tar -xf a.tar --to-command='rm victim'",
    "tar -x -I 'rm victim' -f a.tar",
    "tar -xIrm -f a.tar",
    "tar --use-compress-prog=rm -xf a.tar",
    "tar -cf a.tar --checkpoint=1 --checkpoint-action=exec='rm victim' src",
    "zip -T -TT 'rm victim' a.zip src",
    "zip --unzip-command='rm victim' -T a.zip src",
    "rsync -e 'rm victim' src host:dst",
    "rsync --rsync-path='rm victim' src host:dst",
    "man -P 'rm victim' ls",
    "man --pager='rm victim' ls",
    "sed -n '1e rm victim' src/main.py",
    "sed -n 's/.*/rm victim/e' src/main.py",
    "sed -n '$!e rm victim' src/main.py",
    "sed -n --expression='/x/,/y/e rm victim' src/main.py",
    "sed -n 's|a|b|ep' src/main.py",
]


@pytest.mark.parametrize("line", RUNNING)
def test_an_option_that_runs_a_program_is_asked_about_under_a_deny_rule(tmp_path: Path, line: str) -> None:
    decision = shell(engine(workspace(tmp_path), ("deny", "shell.exec(rm*)"), *ALLOW_READERS), line)
    assert (decision.verdict, decision.source) == (Verdict.ASK, DecisionSource.RULE), decision.reason
    assert "cannot be checked" in decision.reason


@pytest.mark.parametrize(
    "line",
    [
        "git --git-dir=/tmp/evil status",
        "git --git-dir /tmp/evil status",
        "git --work-tree=/tmp status",
        "git --work-tree /tmp --git-dir .git status",
        "git -C vendor/lib.git status",
        "git -C /tmp/evil log -1",
        "git -C . -C vendor/lib.git status",
    ],
)
def test_git_pointed_at_another_repository_counts_as_its_environment_variable(tmp_path: Path, line: str) -> None:
    policy = engine(workspace(tmp_path), *ALLOW_READERS, approval=ApprovalPolicy.UNTRUSTED)
    assert shell(policy, line).verdict is Verdict.ASK
    assert shell(policy, "GIT_DIR=/tmp/evil git status").verdict is Verdict.ASK


@pytest.mark.parametrize(
    "line",
    [
        "git log -1 --format=%H",
        "git log --stat -3",
        "git diff --stat",
        "sort -u src/main.py",
        "sort -n -k2 src/main.py",
        "find . -name '*.py' -print",
        "find . -type f -newer src/main.py",
        "rg -n TOKEN src",
        "rg --no-ignore -z TOKEN",
        "tar -tzf a.tgz",
        "tar -tf a.tar -C src",
        "less -R README.md",
        "man -k ls",
        "sed -n 1p src/main.py",
        "sed -n '/e/p' src/main.py",
        "sed 's/e/w/g' src/main.py",
        "sed -n '$p' src/main.py",
        "sed -n -E 's/(we)/\\1/p' src/main.py",
        "sed -n '1,/end/p' src/main.py",
        "git -C . status",
        "git --no-pager log -1",
    ],
)
def test_the_same_rules_still_allow_reading(tmp_path: Path, line: str) -> None:
    decision = shell(engine(workspace(tmp_path), *ALLOW_READERS, approval=ApprovalPolicy.UNTRUSTED), line)
    assert decision.verdict is Verdict.ALLOW, decision.reason


def _repository(ws: Path) -> None:
    def git(*args: str) -> None:
        subprocess.run(["git", *args], cwd=ws, check=True, capture_output=True, timeout=30)

    git("init", "-q")
    git("-c", "user.name=k", "-c", "user.email=k@example.invalid", "commit", "-q", "--allow-empty", "-m", "first")


@pytest.mark.anyio
async def test_an_allowed_git_log_cannot_write_a_file_with_content_of_its_choosing(tmp_path: Path) -> None:
    ws = workspace(tmp_path)
    _repository(ws)
    main = ws / "src" / "main.py"
    main.write_text("print('hello')\n")
    rules = [Rule(action="allow", pattern="shell.exec(git log*)", layer="user", file="kairox.toml", line=1)]
    registry = await build_registry(
        settings(ws, *rules, approval=ApprovalPolicy.UNTRUSTED), approver=ScriptedApprover()
    )
    line = "git log -1 --output=src/main.py --format='import os%nos.remove(\"victim\")'"
    result = await registry.call(ToolCall(name="shell.exec", arguments={"command": line}))
    assert result.is_error
    assert main.read_text() == "print('hello')\n"
    allowed = await registry.call(ToolCall(name="shell.exec", arguments={"command": "git log -1 --format=%s"}))
    assert allowed.text_content() == "exit code: 0\nfirst"


@pytest.mark.anyio
async def test_ripgrep_with_a_preprocessor_does_not_run_a_denied_program(tmp_path: Path) -> None:
    ws = workspace(tmp_path)
    victim = ws / "victim"
    victim.write_text("TOKEN\n")
    rules = [Rule(action="deny", pattern="shell.exec(rm*)", layer="user", file="kairox.toml", line=1)]
    registry = await build_registry(settings(ws, *rules), approver=ScriptedApprover())
    result = await registry.call(ToolCall(name="shell.exec", arguments={"command": "rg --pre rm TOKEN victim"}))
    assert result.is_error
    assert victim.read_text() == "TOKEN\n"


@pytest.mark.anyio
async def test_an_allowed_git_status_does_not_run_the_config_of_a_repository_shipped_in_the_workspace(
    tmp_path: Path,
) -> None:
    ws = workspace(tmp_path)
    _repository(ws)
    shipped = ws / "vendor" / "lib.git"
    subprocess.run(["git", "init", "-q", "--bare", str(shipped)], check=True, capture_output=True, timeout=30)
    marker = tmp_path / "tmp" / "marker"
    (shipped / "config").write_text(
        f'[core]\n\trepositoryformatversion = 0\n\tbare = false\n\tworktree = ..\n\tfsmonitor = "touch {marker}"\n'
    )
    rules = [Rule(action="allow", pattern="shell.exec(git status*)", layer="user", file="kairox.toml", line=1)]
    registry = await build_registry(
        settings(ws, *rules, approval=ApprovalPolicy.UNTRUSTED), approver=ScriptedApprover()
    )
    result = await registry.call(ToolCall(name="shell.exec", arguments={"command": "git -C vendor/lib.git status"}))
    assert result.is_error
    assert not marker.exists()
    assert not (
        await registry.call(ToolCall(name="shell.exec", arguments={"command": "git -C . status --short"}))
    ).is_error
