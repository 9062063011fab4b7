"""Code bash runs that the splitter must not miss (attack corpus, class 8): a named coprocess, command
substitutions inside quoted array subscripts (run when bash evaluates the subscript: arithmetic, ``let``,
``printf -v``, ``read``, ``declare -n``) or in quoted text bash later expands as a prompt (``${x@P}``, ``PS4``
under xtrace), and the read-write redirection ``<>``, which creates a file.

Each line really runs through the registry under bubblewrap: a victim file that a denied ``rm`` would remove
must survive, and a file an allowed ``ls`` would create must never appear."""

from pathlib import Path

import pytest
from tests.registry._support import ScriptedApprover, settings
from tests.security._support import engine, shell, workspace

from kairox.config import ApprovalPolicy
from kairox.policy import DecisionSource, Rule, Verdict
from kairox.registry import build_registry
from kairox.tools import ToolCall

pytestmark = pytest.mark.anyio

DENY_RM = Rule(action="deny", pattern="shell.exec(rm*)", layer="user", file="kairox.toml", line=1)

RUNS_RM = [
    "coproc X { rm victim; }; wait",
    "coproc X while true; do rm victim; break; done; wait",
    "x='a[$(rm victim)]'; echo $((x))",
    'x="a[\\$(rm victim)]"; echo $((x))',
    "x='a[`rm victim`]'; echo $((x))",
    "let 'x=a[$(rm victim)]'",
    "printf -v 'a[$(rm victim)]' x",
    "read 'a[$(rm victim)]' <<< x",
    "declare -n r='a[$(rm victim)]'; echo $r",
    "x=$'a[$(rm victim)]'; echo $((x))",
    "x='$(rm victim)'; echo ${x@P}",
    "x='`rm victim`'; printf '%s' \"${x@P}\"",
    "read x <<< '$(rm victim)'; echo ${x@P}",
    "PS4='$(rm victim)'; set -x; true",
    "export PS4='$(rm victim)'; set -o xtrace; true",
    "x=$'\\x24(rm victim)'; echo ${x@P}",
    # quote boundaries bash sees and a plain lexer does not: $'..' with an escaped quote, quotes in here-documents
    "echo $'\\'' ; rm victim ; echo \\'",
    "echo $'a\\'b' ; rm victim ; echo \\'",
    "cat <<EOF\n'\nEOF\nrm victim\ncat <<EOF\n'\nEOF\n",
    "cat <<'EOF'\n\"\nEOF\nrm victim\ncat <<EOF\n\"\nEOF",
    "cat <<-EOF\n\t'\n\tEOF\nrm victim\ncat <<E\"O\"F\n'\nEOF",
    "cat <<A <<B\n'\nA\n'\nB\nrm victim",
    "cat <<EOF\n$(rm victim)\nEOF",
    "cat <<EOF\n`rm victim`\nEOF",
    "echo hi #'\nrm victim\n#'",
    'echo hi #"\nrm victim\n#"',
    "echo hi # it's\nrm victim\n# it's",
    "echo #'\necho $(rm victim)\n#'",
    "echo \"$(echo 'a\"b')\" #'\nrm victim\n#'",
    "true;#'\nrm victim\n#'",
]


@pytest.mark.parametrize("line", RUNS_RM)
async def test_code_bash_runs_later_in_the_line_meets_the_deny_rule(tmp_path: Path, line: str) -> None:
    ws = workspace(tmp_path)
    victim = ws / "victim"
    victim.write_text("keep me\n")
    decision = shell(engine(ws, ("deny", "shell.exec(rm*)")), line)
    assert decision.verdict in (Verdict.DENY, Verdict.ASK) and decision.source is DecisionSource.RULE, decision.reason
    registry = await build_registry(settings(ws, DENY_RM), approver=ScriptedApprover())
    result = await registry.call(ToolCall(name="shell.exec", arguments={"command": line}))
    assert result.is_error
    assert victim.read_text() == "keep me\n"


ALLOW_LS = Rule(action="allow", pattern="shell.exec(ls*)", layer="user", file="kairox.toml", line=1)


@pytest.mark.parametrize(
    "line",
    [
        "ls <> created.txt",
        "ls 3<> created.txt",
        "ls 3<>created.txt",
        "ls #'\ntouch created.txt\n#'",
        'ls #"\ntouch created.txt\n#"',
    ],
)
async def test_an_allow_rule_does_not_cover_a_file_created_by_a_redirection_or_after_a_comment(
    tmp_path: Path, line: str
) -> None:
    ws = workspace(tmp_path)
    decision = shell(engine(ws, ("allow", "shell.exec(ls*)"), approval=ApprovalPolicy.UNTRUSTED), line)
    assert decision.verdict is Verdict.ASK, decision.reason
    registry = await build_registry(
        settings(ws, ALLOW_LS, approval=ApprovalPolicy.UNTRUSTED), approver=ScriptedApprover()
    )
    result = await registry.call(ToolCall(name="shell.exec", arguments={"command": line}))
    assert result.is_error
    assert not (ws / "created.txt").exists()


@pytest.mark.parametrize(
    "line",
    [
        "ls -la",
        "ls < /dev/null",
        "coproc ls",
        "echo 'a[1]' x",
        "echo '$(not run)'",
        "printf -v x '%s' 'a[1]'",
        "awk '{print $(NF-1)}' x",
        "echo ${x@P}",
    ],
)
def test_the_same_rules_still_allow_plain_lines(tmp_path: Path, line: str) -> None:
    allowed = [("allow", f"shell.exec({command}*)") for command in ("ls", "echo", "printf", "awk")]
    decision = shell(engine(workspace(tmp_path), *allowed, approval=ApprovalPolicy.UNTRUSTED), line)
    assert decision.verdict is Verdict.ALLOW, decision.reason
