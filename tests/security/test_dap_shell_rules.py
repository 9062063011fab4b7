"""``dap.launch`` runs a written program as ``shell.exec`` runs a command (attack corpus): the user's ``shell.exec``
deny and ask rules decide it too, on ``[cd DIR &&] [env NAME=VALUE ...] PROGRAM ARG ...`` and on the interpreter
line (``python3 app.py ...``), so ``deny = ["shell.exec(*)"]`` ("no commands") or a deny of the interpreter refuses
the launch. A real debugpy launch whose program would leave a marker file is refused and the marker never appears."""

from pathlib import Path

import pytest
from tests.dap._fixtures import debugpy_config
from tests.registry._support import settings
from tests.security._support import engine, workspace

from kairox.dap import DapToolProvider
from kairox.dap._specs import dap_tool_specs
from kairox.policy import NonInteractiveApprover, Rule, Verdict
from kairox.registry import ToolRegistry
from kairox.tools import ToolCall

LAUNCH = next(spec for spec in dap_tool_specs() if spec.name == "dap.launch")
PLAIN = {"program": "app.py"}
FULL = {"program": "app.py", "args": ["--wipe"], "env": {"MODE": "prod"}, "cwd": "src"}

REFUSED = (
    ("no-commands", ("deny", "shell.exec(*)"), PLAIN, Verdict.DENY),
    ("no-commands-bare", ("deny", "shell.exec"), PLAIN, Verdict.DENY),
    ("the-interpreter", ("deny", "shell.exec(python*)"), PLAIN, Verdict.DENY),
    ("the-interpreter-3", ("deny", "shell.exec(python3 *)"), PLAIN, Verdict.DENY),
    ("the-program", ("deny", "shell.exec(app.py*)"), PLAIN, Verdict.DENY),
    ("an-argument", ("deny", "shell.exec(*--wipe*)"), FULL, Verdict.DENY),
    ("a-variable", ("deny", "shell.exec(*MODE=prod*)"), FULL, Verdict.DENY),
    ("the-folder", ("deny", "shell.exec(cd src*)"), FULL, Verdict.DENY),
    ("ask-on-the-interpreter", ("ask", "shell.exec(python*)"), PLAIN, Verdict.ASK),
    ("ask-everything", ("ask", "shell.exec(*)"), PLAIN, Verdict.ASK),
)
UNTOUCHED = (
    ("another-program", ("deny", "shell.exec(rm*)"), FULL),
    ("another-argument", ("deny", "shell.exec(*--force*)"), FULL),
    ("another-interpreter", ("deny", "shell.exec(node*)"), PLAIN),
)


def _ids(cases: tuple[tuple[object, ...], ...]) -> list[str]:
    return [str(case[0]) for case in cases]


@pytest.mark.parametrize(("case", "rule", "arguments", "verdict"), REFUSED, ids=_ids(REFUSED))
def test_a_shell_exec_rule_decides_the_launch(
    tmp_path: Path, case: str, rule: tuple[str, str], arguments: dict[str, object], verdict: Verdict
) -> None:
    ws = workspace(tmp_path)
    decision = engine(ws, rule).decide(LAUNCH, arguments)
    assert (decision.verdict, decision.source) == (verdict, "rule"), decision.reason
    assert decision.rule is not None and decision.rule.pattern == rule[1]
    assert "holds for it as for shell.exec" in decision.reason


@pytest.mark.parametrize(("case", "rule", "arguments"), UNTOUCHED, ids=_ids(UNTOUCHED))
def test_a_rule_on_other_commands_leaves_the_launch_alone(
    tmp_path: Path, case: str, rule: tuple[str, str], arguments: dict[str, object]
) -> None:
    decision = engine(workspace(tmp_path), rule).decide(LAUNCH, arguments)
    assert (decision.verdict, decision.source) == (Verdict.ALLOW, "mode")


@pytest.mark.anyio
@pytest.mark.timeout(120)
@pytest.mark.parametrize("pattern", ["shell.exec(*)", "shell.exec(python*)"])
async def test_a_real_launch_is_refused_and_its_program_never_runs(tmp_path: Path, pattern: str) -> None:
    ws = workspace(tmp_path)
    marker = tmp_path / "ws" / "ran.txt"
    (ws / "app.py").write_text(f"open({str(marker)!r}, 'w').write('ran')\n")
    rule = Rule(action="deny", pattern=pattern, layer="user", file="kairox.toml", line=1)
    gate = ToolRegistry(settings(ws, rule), approver=NonInteractiveApprover())
    async with DapToolProvider({"debugpy": debugpy_config()}, workspace=ws) as dap:
        await gate.add_provider(dap)
        refused = await gate.call(ToolCall(name="dap.launch", arguments={"program": "app.py"}))
        assert not marker.exists()
        allowed_gate = ToolRegistry(settings(ws), approver=NonInteractiveApprover())
        await allowed_gate.add_provider(dap)
        control = await allowed_gate.call(ToolCall(name="dap.launch", arguments={"program": "app.py"}))
    assert refused.is_error and f"deny rule {pattern!r}" in refused.text_content()
    # the same launch without the rule runs the program: the marker is what the refused call would have left
    assert not control.is_error, control.text_content()
    assert marker.read_text() == "ran"
