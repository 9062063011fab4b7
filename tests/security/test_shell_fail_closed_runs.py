"""Shell rules fail closed (attack corpus, class 12), run for real: each line goes through the registry's gate
with ``shell.exec`` under bubblewrap. Under ``deny rm*`` the victim file survives (the line is denied, or asked
about and refused by the person, by ``never`` or by a run without anyone to ask); without the rule the same line
really removes it, so each case is a working attack. An allow rule for ``make test*`` does not run a makefile
given with ``-f``: its marker never appears."""

import shutil
from pathlib import Path

import pytest
from tests.registry._support import ScriptedApprover, settings
from tests.security._support import workspace

from kairox.config import ApprovalPolicy
from kairox.policy import Approver, NonInteractiveApprover, Rule
from kairox.registry import build_registry
from kairox.tools import ToolCall

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(120)]

DENY_RM = Rule(action="deny", pattern="shell.exec(rm*)", layer="user", file="kairox.toml", line=1)
PYTHON = shutil.which("python3", path="/usr/bin:/bin") or "python3"
LOADER = "/lib64/ld-linux-x86-64.so.2"


ATTACKS = [
    f"{PYTHON} -c 'import os; os.remove(\"victim\")'",
    "perl -e 'unlink \"victim\"'",
    'node -e \'require("fs").rmSync("victim")\'',
    "vim -u NONE -es -c '!rm victim' -c 'qa!'",
    "sqlite3 :memory: '.shell rm victim'",
    "make --eval='x: ; rm victim' x",
    "make -f evil.mk",
    "make SHELL=./evil.sh",
    "GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=alias.st GIT_CONFIG_VALUE_0='!rm victim' git st",
    "sed -n -f evil.sed README.md",
    "gdb -batch -nx -ex '!rm victim'",
    "awk 'BEGIN { system(\"rm victim\") }'",
    "sh s.sh",
    "./s.sh",
    "./cleaner victim",
    "r\\\nm victim",
    f"{LOADER} /bin/rm victim",
]
"""Each needs the programs its first word names; all of them are in the test image."""


def _arm(ws: Path) -> None:
    (ws / "victim").write_text("keep me\n")
    (ws / "README.md").write_text("hello\n")
    (ws / "Makefile").write_text("all:\n\t@true\n")
    (ws / "evil.mk").write_text("all:\n\trm victim\n")
    (ws / "evil.sh").write_text("#!/bin/sh\nrm victim\n")
    (ws / "evil.sed").write_text("1e rm victim\n")
    (ws / "s.sh").write_text("#!/bin/sh\necho cleaning\nrm victim\n")
    shutil.copy("/bin/rm", ws / "cleaner")
    for name in ("evil.sh", "s.sh"):
        (ws / name).chmod(0o755)


async def _run(
    ws: Path, line: str, *rules: Rule, approver: Approver, approval: ApprovalPolicy = ApprovalPolicy.ON_REQUEST
) -> bool:
    """Run ``line`` through the gate; whether the call was refused."""
    registry = await build_registry(settings(ws, *rules, approval=approval), approver=approver)
    result = await registry.call(ToolCall(name="shell.exec", arguments={"command": line}))
    return result.is_error and not result.text_content().startswith("exit code:")


@pytest.mark.parametrize("line", ATTACKS)
async def test_the_line_really_removes_the_victim_when_no_rule_is_in_force(tmp_path: Path, line: str) -> None:
    ws = workspace(tmp_path)
    _arm(ws)
    await _run(ws, line, approver=ScriptedApprover())
    assert not (ws / "victim").exists()


@pytest.mark.parametrize("line", ATTACKS)
async def test_under_a_deny_rule_the_victim_survives_when_the_person_says_no(tmp_path: Path, line: str) -> None:
    ws = workspace(tmp_path)
    _arm(ws)
    approver = ScriptedApprover()
    assert await _run(ws, line, DENY_RM, approver=approver)
    assert len(approver.requests) <= 1
    assert (ws / "victim").read_text() == "keep me\n"


@pytest.mark.parametrize("line", [ATTACKS[0], ATTACKS[4], ATTACKS[6], ATTACKS[14]])
async def test_under_never_and_without_anyone_to_ask_the_line_is_refused(tmp_path: Path, line: str) -> None:
    ws = workspace(tmp_path)
    _arm(ws)
    never = ScriptedApprover()
    assert await _run(ws, line, DENY_RM, approver=never, approval=ApprovalPolicy.NEVER)
    assert never.requests == []
    assert await _run(ws, line, DENY_RM, approver=NonInteractiveApprover())
    assert (ws / "victim").read_text() == "keep me\n"


async def test_an_allow_rule_for_make_test_does_not_run_a_makefile_given_with_f(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("MAKELEVEL", "MAKEFLAGS", "MFLAGS"):  # under `make test` a nested make prints its directory
        monkeypatch.delenv(name, raising=False)
    ws = workspace(tmp_path)
    (ws / "Makefile").write_text("test:\n\t@echo tests ran\n")
    (ws / "evil.mk").write_text("test:\n\t@touch marker\n")
    allow = Rule(action="allow", pattern="shell.exec(make test*)", layer="user", file="kairox.toml", line=1)
    approver = ScriptedApprover()
    for line in ("make test -f evil.mk", "make test --eval='test: ; @touch marker'", "make test SHELL=./evil.sh"):
        assert await _run(ws, line, allow, approver=approver, approval=ApprovalPolicy.UNTRUSTED), line
    assert len(approver.requests) == 3
    assert not (ws / "marker").exists()
    registry = await build_registry(settings(ws, allow, approval=ApprovalPolicy.UNTRUSTED), approver=approver)
    result = await registry.call(ToolCall(name="shell.exec", arguments={"command": "make test"}))
    assert result.text_content() == "exit code: 0\ntests ran" and len(approver.requests) == 3
