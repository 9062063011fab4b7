"""Rule prefixes that must not reach other programs, and commands run on another host or in a container (attack
corpus, class 11).

An allow rule ``tr*`` means ``tr`` with any arguments, not ``truncate``; ``git status*`` means ``git status``,
not a ``git status-x`` alias that runs anything. ``ssh host rm x``, ``docker exec box rm x`` and ``kubectl exec
pod -- rm x`` run ``rm x``: deny rules see it, a remote command the splitter cannot see is asked about, and no
allow rule vouches for a command run under another host's or container's authority.

Each line really runs through the registry under bubblewrap: a victim file survives, a marker file never appears,
and the lines the rules do allow still run."""

import subprocess
from pathlib import Path

import pytest
from tests.registry._support import ScriptedApprover, settings
from tests.security._support import engine, shell, workspace

from kairox.config import ApprovalPolicy
from kairox.policy import DecisionSource, Rule, Verdict
from kairox.registry import build_registry
from kairox.tools import ToolCall

pytestmark = pytest.mark.anyio

ALLOWED = ("ls*", "tr*", "sh*", "cat*", "git status*", "git log:*", "npm run test*")


def _rules(*globs: str, action: str = "allow") -> list[Rule]:
    return [
        Rule(action=action, pattern=f"shell.exec({glob})", layer="user", file="kairox.toml", line=i)
        for i, glob in enumerate(globs, start=1)
    ]


def _repository(ws: Path) -> None:
    """The workspace as a git repository whose own aliases run a program (``git status-marker``)."""
    subprocess.run(["git", "init", "-q", str(ws)], check=True)
    for alias in ("status-marker", "log-marker"):
        subprocess.run(["git", "-C", str(ws), "config", f"alias.{alias}", "!touch marker"], check=True)


# hole 1: a `*` glued to the program name or to git's subcommand reaches another program
OTHER_PROGRAMS = [
    "truncate -s 0 victim",
    "shred -u victim",
    "git status-marker",
    "git log-marker",
    "git -C . status-marker --short",
    "truncate --size=0 victim",
]


@pytest.mark.parametrize("line", OTHER_PROGRAMS)
async def test_an_allow_rule_prefix_does_not_reach_another_program(tmp_path: Path, line: str) -> None:
    ws = workspace(tmp_path)
    _repository(ws)
    victim = ws / "victim"
    victim.write_text("keep me\n")
    decision = shell(
        engine(ws, *(("allow", f"shell.exec({g})") for g in ALLOWED), approval=ApprovalPolicy.UNTRUSTED), line
    )
    assert (decision.verdict, decision.source) == (Verdict.ASK, DecisionSource.MODE), decision.reason
    approver = ScriptedApprover()
    registry = await build_registry(
        settings(ws, *_rules(*ALLOWED), approval=ApprovalPolicy.UNTRUSTED), approver=approver
    )
    result = await registry.call(ToolCall(name="shell.exec", arguments={"command": line}))
    assert result.is_error and len(approver.requests) == 1
    assert victim.read_text() == "keep me\n"
    assert not (ws / "marker").exists()


@pytest.mark.parametrize(
    ("line", "shown"),
    [
        ("ls -la", "victim"),
        ("git status --short", "victim"),
        ("git -C . log --all --oneline", ""),
        ("tr a-z A-Z < victim", "KEEP ME"),
        ("cat victim", "keep me"),
    ],
)
async def test_the_same_rules_still_run_their_own_programs_with_any_arguments(
    tmp_path: Path, line: str, shown: str
) -> None:
    ws = workspace(tmp_path)
    _repository(ws)
    (ws / "victim").write_text("keep me\n")
    approver = ScriptedApprover()
    registry = await build_registry(
        settings(ws, *_rules(*ALLOWED), approval=ApprovalPolicy.UNTRUSTED), approver=approver
    )
    result = await registry.call(ToolCall(name="shell.exec", arguments={"command": line}))
    assert not result.is_error and approver.requests == [], result.text_content()
    assert shown in result.text_content()


# hole 2: the command a remote shell or a container runs
REMOTE_RM = [
    "ssh host rm -rf victim",
    "ssh -p 22 -i ~/.ssh/id user@host rm victim",
    "ssh -tt host -- rm victim",
    "ssh host 'cd /srv && rm -rf victim'",
    "ssh host echo 'done; rm victim'",
    "ssh -o ProxyCommand='rm victim' host true",
    "ssh -o RemoteCommand='rm victim' host",
    "sudo ssh host rm victim",
    "sshpass -p pw ssh host rm victim",
    "docker exec box rm victim",
    "docker exec -it -u root -w / box rm -rf victim",
    "docker -H unix:///run/docker.sock exec box rm victim",
    "docker container exec box sh -c 'rm victim'",
    "docker run --rm -v $PWD:/w alpine rm /w/victim",
    "docker run --entrypoint rm alpine -rf /w/victim",
    "docker run --entrypoint=rm alpine /w/victim",
    "docker compose exec web rm victim",
    "docker-compose -f compose.yml run --rm web rm victim",
    "podman exec box rm victim",
    "kubectl exec pod -- rm victim",
    "kubectl -n prod exec -it pod -c app -- rm -rf victim",
    "oc exec pod -- rm victim",
    "kubectl run tmp --image=busybox --restart=Never -- rm victim",
]


@pytest.mark.parametrize("line", REMOTE_RM)
async def test_a_deny_rule_reaches_the_command_run_on_another_host_or_in_a_container(tmp_path: Path, line: str) -> None:
    ws = workspace(tmp_path)
    victim = ws / "victim"
    victim.write_text("keep me\n")
    decision = shell(engine(ws, ("deny", "shell.exec(rm*)")), line)
    assert (decision.verdict, decision.source) == (Verdict.DENY, DecisionSource.RULE), decision.reason
    registry = await build_registry(settings(ws, *_rules("rm*", action="deny")), approver=ScriptedApprover())
    result = await registry.call(ToolCall(name="shell.exec", arguments={"command": line}))
    assert result.is_error and "denied by deny rule 'shell.exec(rm*)'" in result.text_content()
    assert victim.read_text() == "keep me\n"


REMOTE_HIDDEN = [
    'ssh host "$CMD"',
    'ssh host "$(cat commands.txt)"',
    "ssh host",
    "echo 'rm victim' | ssh -T host",
    "ssh host bash < script.sh",
    "ssh host sh -s < script.sh",
    "docker exec -i box sh < script.sh",
    'kubectl exec pod -- sh -c "$CMD"',
    "ssh -F ./ssh_config host true",
    "ssh -o PKCS11Provider=./token.so host true",
]


@pytest.mark.parametrize("line", REMOTE_HIDDEN)
async def test_a_remote_command_the_splitter_cannot_see_is_asked_about(tmp_path: Path, line: str) -> None:
    ws = workspace(tmp_path)
    victim = ws / "victim"
    victim.write_text("keep me\n")
    decision = shell(engine(ws, ("deny", "shell.exec(rm*)")), line)
    assert (decision.verdict, decision.source) == (Verdict.ASK, DecisionSource.RULE), decision.reason
    assert "deny rule 'shell.exec(rm*)' (kairox.toml:1) cannot be checked" in decision.reason
    approver = ScriptedApprover()
    registry = await build_registry(settings(ws, *_rules("rm*", action="deny")), approver=approver)
    result = await registry.call(ToolCall(name="shell.exec", arguments={"command": line}))
    assert result.is_error and len(approver.requests) == 1
    assert victim.read_text() == "keep me\n"


@pytest.mark.parametrize(
    "line", ["ssh host ls", "ssh host touch marker", "docker exec box ls", "kubectl exec pod -- ls"]
)
async def test_no_allow_rule_vouches_for_a_command_run_under_another_authority(tmp_path: Path, line: str) -> None:
    ws = workspace(tmp_path)
    decision = shell(
        engine(
            ws,
            *(("allow", f"shell.exec({g})") for g in ("ssh*", "docker*", "kubectl*", "ls*", "touch*")),
            approval=ApprovalPolicy.UNTRUSTED,
        ),
        line,
    )
    assert (decision.verdict, decision.source) == (Verdict.ASK, DecisionSource.MODE), decision.reason
    approver = ScriptedApprover()
    registry = await build_registry(
        settings(ws, *_rules("ssh*", "docker*", "kubectl*", "ls*", "touch*"), approval=ApprovalPolicy.UNTRUSTED),
        approver=approver,
    )
    result = await registry.call(ToolCall(name="shell.exec", arguments={"command": line}))
    assert result.is_error and len(approver.requests) == 1
    assert not (ws / "marker").exists()
