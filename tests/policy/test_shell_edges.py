"""The splitter's edge branches, each pinned by a test that fails when the branch is broken."""

from pathlib import Path

import pytest
from tests.registry._support import ScriptedApprover
from tests.security._support import SHELL, engine, shell, workspace

from kairox.config import ApprovalPolicy
from kairox.policy import ApprovalAnswer, ApprovalScope, Decision, DecisionSource, Verdict
from kairox.policy._shell import split_command
from kairox.registry import SessionApprovals


def test_eval_of_a_variable_is_unseen_and_eval_of_literal_text_is_split() -> None:
    assert split_command("eval $X").unseen == "eval runs text that is only known when the line runs"
    assert split_command("eval 'rm -rf x'").pieces == ("rm -rf x",)


def test_nesting_past_the_depth_limit_is_opaque_and_unseen(tmp_path: Path) -> None:
    line = "eval " * 10 + "curl x"
    command = split_command(line)
    assert (command.opaque, command.unseen) == (True, "commands are nested more than 8 levels deep")
    assert shell(engine(workspace(tmp_path), ("deny", "shell.exec(rm*)")), line).verdict is Verdict.ASK


def test_an_unclosed_substitution_is_unseen() -> None:
    assert split_command("echo $(curl x").unseen == "a command substitution is never closed"


def test_output_redirected_with_an_ampersand_is_a_write(tmp_path: Path) -> None:
    assert (
        split_command("ls >& out.txt").writes,
        split_command("ls >&2").writes,
        split_command("ls >& /dev/null").writes,
    ) == (True, False, False)
    policy = engine(workspace(tmp_path), ("allow", "shell.exec(ls*)"), approval=ApprovalPolicy.UNTRUSTED)
    assert (shell(policy, "ls >& out.txt").verdict, shell(policy, "ls >&2").verdict) == (Verdict.ASK, Verdict.ALLOW)


def test_double_dash_ends_a_wrappers_options_and_its_positional_words_follow() -> None:
    assert split_command("timeout -- 5 rm x").pieces == ("rm x",)
    assert split_command("sudo -- -dash-named-tool arg").pieces == ("-dash-named-tool arg",)


def test_su_takes_its_command_from_an_option_with_an_equals_sign() -> None:
    command = split_command("su --command='rm -rf /' root")
    assert (command.pieces, command.privileged) == (("rm -rf /",), True)


def test_an_escaped_substitution_inside_double_quotes_is_text(tmp_path: Path) -> None:
    policy = engine(workspace(tmp_path), ("deny", "shell.exec(rm*)"))
    assert shell(policy, 'echo "\\$(rm x)"').verdict is Verdict.ALLOW
    assert shell(policy, 'echo "$(rm x)"').verdict is Verdict.DENY


def test_a_wrapper_option_whose_value_the_table_does_not_know_cannot_hide_the_command(tmp_path: Path) -> None:
    command = split_command("firejail --net eth0 rm victim")
    assert command.pieces == ("eth0 rm victim",)  # the misreading the table leads to
    assert "rm victim" in command.tails
    assert (
        shell(engine(workspace(tmp_path), ("deny", "shell.exec(rm*)")), "firejail --net eth0 rm victim").verdict
        is Verdict.DENY
    )


@pytest.mark.anyio
async def test_a_grant_never_answers_an_ask_that_a_hook_raised(tmp_path: Path) -> None:
    policy = engine(workspace(tmp_path), approval=ApprovalPolicy.UNTRUSTED)
    approver = ScriptedApprover([ApprovalAnswer(approved=True, scope=ApprovalScope.SESSION), ApprovalAnswer.deny("no")])
    approvals = SessionApprovals(approver, persist_rule=None, emit=lambda event: None)
    arguments = {"command": "git push origin main"}
    first = await approvals.resolve("a", SHELL, arguments, policy.decide(SHELL, arguments), policy)
    hooked = Decision.ask("the release guard asks", source=DecisionSource.HOOK)
    second = await approvals.resolve("b", SHELL, arguments, hooked, policy)
    assert (first.verdict, second.verdict, len(approver.requests)) == (Verdict.ALLOW, Verdict.DENY, 2)
