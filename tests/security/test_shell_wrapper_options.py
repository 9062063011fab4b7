"""A wrapper's options spelled as its option parser reads them (attack corpus, class 11): a short option that takes
a value at the end of a cluster (``env -iu NAME``, ``env -vS'STRING'``) and a long option abbreviated
(``env --uns NAME``, as getopt accepts a unique prefix) take the next word or the rest of the word as their value,
so the word after them is not the program. Read otherwise, ``env -iu cat rm -rf victim`` looked like ``cat`` to
an allow rule ``cat*`` while env ran ``rm``.

Each line really runs through the registry under bubblewrap: the victim survives, and the lines the rule does
allow still run."""

from pathlib import Path

import pytest
from tests.registry._support import ScriptedApprover, settings
from tests.security._support import engine, shell, workspace

from kairox.config import ApprovalPolicy
from kairox.policy import DecisionSource, Rule, Verdict
from kairox.registry import build_registry
from kairox.tools import ToolCall

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(60)]

ALLOW_CAT = Rule(action="allow", pattern="shell.exec(cat*)", layer="user", file="kairox.toml", line=1)

HIDDEN_PROGRAM = [
    "env -iu cat rm -f victim",
    "env -0u cat rm -f victim",
    "env --uns cat rm -f victim",
    "env --unse=x --uns cat rm -f victim",
    "env -vS'rm -f victim' cat",
    "env -iS 'rm -f victim' cat",
    "env -vi --split-str='rm -f victim' cat",
]


@pytest.mark.parametrize("line", HIDDEN_PROGRAM)
async def test_a_wrapper_option_spelled_as_getopt_reads_it_does_not_pass_for_the_program(
    tmp_path: Path, line: str
) -> None:
    ws = workspace(tmp_path)
    victim = ws / "victim"
    victim.write_text("keep me\n")
    decision = shell(engine(ws, ("allow", "shell.exec(cat*)"), approval=ApprovalPolicy.UNTRUSTED), line)
    assert decision.verdict is Verdict.ASK, decision.reason
    approver = ScriptedApprover()
    registry = await build_registry(settings(ws, ALLOW_CAT, approval=ApprovalPolicy.UNTRUSTED), approver=approver)

    result = await registry.call(ToolCall(name="shell.exec", arguments={"command": line}))

    assert result.is_error and len(approver.requests) == 1, result.text_content()
    assert victim.read_text() == "keep me\n"


@pytest.mark.parametrize(
    "line",
    [
        "env -i cat victim",
        "env -iu HOME cat victim",
        "env -u HOME -i cat victim",
        "env --unset HOME cat victim",
        "env --ignore-env cat victim",
    ],
)
async def test_the_wrapped_program_the_rule_names_still_runs(tmp_path: Path, line: str) -> None:
    ws = workspace(tmp_path)
    (ws / "victim").write_text("keep me\n")
    decision = shell(engine(ws, ("allow", "shell.exec(cat*)"), approval=ApprovalPolicy.UNTRUSTED), line)
    assert (decision.verdict, decision.source) == (Verdict.ALLOW, DecisionSource.RULE), decision.reason
    approver = ScriptedApprover()
    registry = await build_registry(settings(ws, ALLOW_CAT, approval=ApprovalPolicy.UNTRUSTED), approver=approver)

    result = await registry.call(ToolCall(name="shell.exec", arguments={"command": line}))

    assert not result.is_error and approver.requests == [], result.text_content()
    assert "keep me" in result.text_content()
