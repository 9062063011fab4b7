"""A grant covers what the person saw (attack corpus, class 9): an exact grant for a path, or for a command run
in a folder, does not follow a symlink re-pointed later in the session,
and the rule "always" saves for "exactly this command line" does not
also cover a line that differs only in quoting (``rm '*'`` is not ``rm *``)."""

from pathlib import Path

import pytest
from tests.registry._support import ScriptedApprover, settings
from tests.security._support import engine, shell, workspace

from kairox.config import ApprovalPolicy
from kairox.policy import ApprovalAnswer, ApprovalRequest, Rule, RuleLayer, Verdict
from kairox.registry import build_registry
from kairox.tools import ToolCall

pytestmark = pytest.mark.anyio


class AlwaysExactly:
    """Answers "always" with the grant of exactly this call, the first one offered, as a person picking it would."""

    def __init__(self) -> None:
        self.requests: list[ApprovalRequest] = []

    async def request_approval(self, request: ApprovalRequest) -> ApprovalAnswer:
        self.requests.append(request)
        assert request.grants[0].exact
        return ApprovalAnswer.allow_always(grant=request.grants[0].rule, layer=RuleLayer.USER)


@pytest.mark.parametrize("relink", ["ln -sfn ../outside-b out", "rm out && ln -s ../outside-b out"])
async def test_a_session_grant_for_a_path_does_not_follow_a_link_re_pointed_later(tmp_path: Path, relink: str) -> None:
    ws = workspace(tmp_path)
    (tmp_path / "outside-a").mkdir()
    (tmp_path / "outside-b").mkdir()
    (ws / "out").symlink_to("../outside-a")
    approver = ScriptedApprover([ApprovalAnswer.allow_session(), ApprovalAnswer.deny("not this one")])
    registry = await build_registry(settings(ws), approver=approver)
    write = ToolCall(name="fs.write", arguments={"path": "out/notes.txt", "content": "seen\n"})

    first = await registry.call(write)
    assert not first.is_error, first.text_content()
    assert (tmp_path / "outside-a" / "notes.txt").read_text() == "seen\n"
    moved = await registry.call(ToolCall(name="shell.exec", arguments={"command": relink}))
    assert not moved.is_error, moved.text_content()
    assert (ws / "out").resolve() == tmp_path / "outside-b"

    second = await registry.call(write)
    assert second.is_error
    assert len(approver.requests) == 2
    assert str(tmp_path / "outside-b" / "notes.txt") in approver.requests[1].reason
    assert not (tmp_path / "outside-b" / "notes.txt").exists()


QUOTED = [
    ("rm '*'", "rm *"),
    ('rm "*.txt"', "rm *.txt"),
    ("rm 'a b'", "rm a b"),
    ("rm \\*", "rm *"),
    ("rm '~/x'", "rm ~/x"),
    ("git -C /tmp/elsewhere log -1", "git log -1"),
]


@pytest.mark.parametrize(("approved", "other"), QUOTED)
async def test_always_for_exactly_this_command_line_saves_no_rule_that_also_covers_it_unquoted(
    tmp_path: Path, approved: str, other: str
) -> None:
    ws = workspace(tmp_path)
    saved: list[str] = []
    approver = AlwaysExactly()
    registry = await build_registry(
        settings(ws, approval=ApprovalPolicy.UNTRUSTED),
        approver=approver,
        persist_rule=lambda rule, layer: saved.append(rule),
    )
    await registry.call(ToolCall(name="shell.exec", arguments={"command": approved}))
    assert len(approver.requests) == 1
    # the next session loads what was saved: the unquoted line, which does something else, is asked about
    rules = [
        Rule(action="allow", pattern=rule, layer="user", file="kairox.toml", line=i)
        for i, rule in enumerate(saved, start=1)
    ]
    policy = engine(ws, *(("allow", r.pattern) for r in rules), approval=ApprovalPolicy.UNTRUSTED)
    assert shell(policy, other).verdict is Verdict.ASK, (saved, shell(policy, other).reason)


async def test_always_for_the_star_file_does_not_later_remove_every_file(tmp_path: Path) -> None:
    ws = workspace(tmp_path)
    (ws / "*").write_text("odd name\n")
    (ws / "keep.txt").write_text("keep\n")
    saved: list[str] = []
    first = await build_registry(
        settings(ws, approval=ApprovalPolicy.UNTRUSTED),
        approver=AlwaysExactly(),
        persist_rule=lambda rule, layer: saved.append(rule),
    )
    assert not (await first.call(ToolCall(name="shell.exec", arguments={"command": "rm '*'"}))).is_error
    assert not (ws / "*").exists()
    rules = [
        Rule(action="allow", pattern=rule, layer="user", file="kairox.toml", line=i)
        for i, rule in enumerate(saved, start=1)
    ]
    later = await build_registry(settings(ws, *rules, approval=ApprovalPolicy.UNTRUSTED), approver=ScriptedApprover())
    result = await later.call(ToolCall(name="shell.exec", arguments={"command": "rm *"}))
    assert result.is_error
    assert (ws / "keep.txt").read_text() == "keep\n"


@pytest.mark.parametrize("line", ["git log -1", "rm build/out.txt", "ls -la src"])
async def test_always_for_an_unquoted_line_still_saves_its_exact_rule(tmp_path: Path, line: str) -> None:
    ws = workspace(tmp_path)
    saved: list[str] = []
    approver = AlwaysExactly()
    registry = await build_registry(
        settings(ws, approval=ApprovalPolicy.UNTRUSTED),
        approver=approver,
        persist_rule=lambda rule, layer: saved.append(rule),
    )
    await registry.call(ToolCall(name="shell.exec", arguments={"command": line}))
    assert saved == [f"shell.exec({line})"]


async def test_a_session_grant_for_a_command_does_not_follow_its_folder_re_pointed_later(tmp_path: Path) -> None:
    ws = workspace(tmp_path)
    marker = tmp_path / "tmp" / "marker"
    for name, recipe in (("a", "@echo built a"), ("b", f"touch {marker}")):
        (ws / name).mkdir()
        (ws / name / "Makefile").write_text(f"all:\n\t{recipe}\n")
    (ws / "build").symlink_to("a")
    approver = ScriptedApprover(
        [ApprovalAnswer.allow_session(), ApprovalAnswer.allow_once(), ApprovalAnswer.deny("not this one")]
    )
    registry = await build_registry(settings(ws, approval=ApprovalPolicy.UNTRUSTED), approver=approver)
    # --no-print-directory: when the suite itself runs under make, the inherited MAKELEVEL would add
    # "Entering directory" lines to the output this test compares.
    make = ToolCall(name="shell.exec", arguments={"command": "make --no-print-directory", "cwd": "build"})

    first = await registry.call(make)
    assert first.text_content() == "exit code: 0\nbuilt a"
    assert not (await registry.call(ToolCall(name="shell.exec", arguments={"command": "ln -sfn b build"}))).is_error
    second = await registry.call(make)
    assert second.is_error
    assert len(approver.requests) == 3
    assert not marker.exists()
