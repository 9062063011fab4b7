"""``kairox tools`` and ``kairox policy`` as a user runs them: a real process, real config files."""

import io
import re
from pathlib import Path

import pytest
from tests.helpers import Run, kairox

from kairox.config import Layer, resolve_config, trust_workspace
from kairox.policy import ApprovalAnswer, ApprovalRequest
from kairox.registry import build_registry
from kairox.tools import ToolCall


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    (tmp_path / "ws" / ".git").mkdir(parents=True)
    (tmp_path / "tmp").mkdir()
    return tmp_path / "ws"


def run(ws: Path, *args: str) -> Run:
    # a temp dir of its own, so the workspace's parent is not a writable root
    return kairox("-w", ws, *args, env={"TMPDIR": str(ws.parent / "tmp")})


def test_write_outside_the_roots_is_refused_without_a_terminal(ws: Path) -> None:
    result = run(ws, "tools", "call", "fs.write", '{"path": "../outside.txt", "content": "x"}')
    assert result.code == 4
    assert result.stderr.strip() == (
        f"fs.write was not run: approval required: {ws.parent / 'outside.txt'} is outside the writable roots "
        f"({ws}, {ws.parent / 'tmp'}); add the folder to policy.writable_roots to allow writes there "
        "(run the command again with --yes to approve it once)"
    )
    assert not (ws.parent / "outside.txt").exists()


def test_a_user_deny_rule_beats_a_project_allow_rule_and_check_names_its_line(ws: Path, isolated_home: Path) -> None:
    user_file = isolated_home / "kairox.toml"
    user_file.write_text('# my rules\n[policy.rules]\nallow = ["fs.read"]\ndeny = [\n  "shell.exec(git push*)",\n]\n')
    (ws / "kairox.toml").write_text('[policy.rules]\nallow = ["shell.exec(git *)"]\n')
    trust_workspace(ws)
    result = run(ws, "policy", "check", "shell.exec", '{"command": "git push --force"}', "--json")
    assert result.code == 0, result.stderr
    report = result.json()
    assert (report["decision"], report["source"]) == ("deny", "rule")
    assert report["rule"] == {
        "action": "deny",
        "pattern": "shell.exec(git push*)",
        "layer": "user",
        "file": str(user_file),
        "line": 5,
    }
    assert report["where"] == f"{user_file}:5"
    allowed = run(ws, "policy", "check", "shell.exec", '{"command": "git log"}', "--json").json()
    assert (allowed["decision"], allowed["rule"]["layer"], allowed["rule"]["line"]) == ("allow", "project", 2)
    human = run(ws, "policy", "check", "shell.exec", '{"command": "git push"}')
    assert human.stdout.splitlines()[-1] == f"rule: deny 'shell.exec(git push*)' at {user_file}:5"


def test_a_chained_command_does_not_pass_an_allow_rule_for_its_first_part(ws: Path, isolated_home: Path) -> None:
    (isolated_home / "kairox.toml").write_text(
        '[policy]\napproval_policy = "untrusted"\n[policy.rules]\nallow = ["shell.exec(git status*)"]\n'
    )
    alone = run(ws, "policy", "check", "shell.exec", '{"command": "git status"}', "--json").json()
    chained = run(ws, "policy", "check", "shell.exec", '{"command": "git status && rm -rf x"}', "--json").json()
    assert (alone["decision"], alone["source"]) == ("allow", "rule")
    assert (chained["decision"], chained["source"]) == ("ask", "mode")


def test_tools_list_json_has_the_documented_shape(ws: Path) -> None:
    result = run(ws, "tools", "list", "--json")
    data = result.json()
    assert [t["name"] for t in data["tools"]] == [
        "fs.edit",
        "fs.list",
        "fs.read",
        "fs.write",
        "search.ripgrep",
        "shell.exec",
        "web.fetch",
    ]
    assert set(data["tools"][0]) == {"name", "source", "origin", "description", "input_schema", "permission_profile"}
    assert data["tools"][-2]["permission_profile"] == {
        "access": "execute",
        "destructive": True,
        "open_world": False,
        "path_args": [],
        "command_arg": "command",
    }
    assert data["diagnostics"] == []


def test_tools_list_for_a_provider_prints_what_it_would_be_sent(ws: Path) -> None:
    openai = run(ws, "tools", "list", "--provider", "openai").json()
    gemini = run(ws, "tools", "list", "--provider", "gemini").json()
    assert [d["function"]["name"] for d in openai] == [
        "fs_edit",
        "fs_list",
        "fs_read",
        "fs_write",
        "search_ripgrep",
        "shell_exec",
        "web_fetch",
    ]
    assert all(d["function"]["strict"] for d in openai)
    assert gemini[2]["parameters"]["required"] == ["path"]
    assert run(ws, "tools", "list", "--provider", "mistral").code == 2


def test_tools_call_reports_errors_with_their_exit_codes(ws: Path) -> None:
    (ws / "a.txt").write_text("hello\n")
    assert run(ws, "tools", "call", "fs.read", '{"path": "a.txt"}').stdout == "hello\n"
    assert run(ws, "tools", "call", "fs.red", "{}").code == 6
    invalid = run(ws, "tools", "call", "fs.read", '{"path": 1}')
    assert (invalid.code, invalid.stderr.strip()) == (
        5,
        "invalid arguments for fs.read: arguments['path']: 1 is not of type 'string'",
    )


def test_yes_approves_what_would_be_asked_but_not_what_is_denied_nor_protected_paths_nor_outside_the_roots(
    ws: Path, isolated_home: Path
) -> None:
    (isolated_home / "kairox.toml").write_text(
        '[policy.rules]\ndeny = ["fs.write(**/*.lock)"]\nask = ["fs.write(asked.txt)"]\n'
    )
    asked = run(ws, "tools", "call", "fs.write", '{"path": "asked.txt", "content": "x"}', "--yes")
    outside = run(ws, "tools", "call", "fs.write", '{"path": "../outside.txt", "content": "x"}', "--yes")
    protected = run(ws, "tools", "call", "fs.write", '{"path": ".git/info", "content": "x"}', "--yes")
    denied = run(ws, "tools", "call", "fs.write", '{"path": "a.lock", "content": "x"}', "--yes")
    assert (asked.code, (ws / "asked.txt").read_text()) == (0, "x")
    assert (outside.code, (ws.parent / "outside.txt").exists()) == (4, False)
    assert "--yes does not approve writes outside the writable roots" in outside.stderr
    assert (protected.code, (ws / ".git" / "info").exists()) == (4, False)
    assert "--yes does not approve writes to protected paths" in protected.stderr
    assert denied.code == 4 and not (ws / "a.lock").exists()


@pytest.mark.anyio
async def test_always_at_the_prompt_writes_an_allow_rule_into_the_user_layer(
    ws: Path, isolated_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from kairox.cli._approver import CliApprover

    user_file = isolated_home / "kairox.toml"
    user_file.write_text('# keep this comment\n[policy]\napproval_policy = "untrusted"\n')
    monkeypatch.setattr("sys.stdin", io.StringIO("a2\n"))  # the second grant: the `ls -a*` rule, not the exact line
    registry = await build_registry(resolve_config(ws), approver=CliApprover())
    result = await registry.call(ToolCall(name="shell.exec", arguments={"command": "ls -a"}))
    assert not result.is_error, result.text_content()
    assert user_file.read_text().startswith("# keep this comment\n")
    again = resolve_config(ws)
    assert [(r.action, r.pattern, r.layer, r.file) for r in again.rules] == [
        ("allow", "shell.exec(ls -a*)", Layer.USER, user_file)
    ]
    assert (await build_registry(again, approver=CliApprover())).check(
        "shell.exec", {"command": "ls -a src"}
    ).verdict == "allow"


@pytest.mark.anyio
async def test_the_prompt_offers_always_only_with_a_rule(monkeypatch: pytest.MonkeyPatch) -> None:
    from kairox.cli._approver import CliApprover
    from kairox.policy import GrantOption, RuleLayer

    monkeypatch.setattr("sys.stdin", io.StringIO("a\ns\na2:local\nd use fs.read instead\n"))
    grants = (
        GrantOption(rule="x", covers="exactly this call", exact=True),
        GrantOption(rule="x(*)", covers="every x", persistable=True),
    )
    request = ApprovalRequest(tool="x", reason="r", rule="x(*)", grants=grants, layers=tuple(RuleLayer))
    without_rule = await CliApprover().request_approval(ApprovalRequest(tool="fs.write", reason="protected"))
    session = await CliApprover().request_approval(request)
    always = await CliApprover().request_approval(request)
    denied = await CliApprover().request_approval(request)
    assert (without_rule.approved, session) == (False, ApprovalAnswer.allow_session("x"))
    assert always == ApprovalAnswer.allow_always("x(*)", layer=RuleLayer.LOCAL)
    assert denied == ApprovalAnswer.deny("use fs.read instead")


def test_trace_records_requested_decided_finished_with_the_rule(ws: Path, isolated_home: Path) -> None:
    import json

    user_file = isolated_home / "kairox.toml"
    user_file.write_text('[policy.rules]\ndeny = ["fs.read(*.env)"]\n')
    (ws / "prod.env").write_text("SECRET=1\n")
    trace = ws.parent / "trace.jsonl"
    result = kairox(
        "-w",
        ws,
        "--trace",
        trace,
        "tools",
        "call",
        "fs.read",
        '{"path": "prod.env"}',
        "--json",
        env={"TMPDIR": str(ws.parent / "tmp")},
    )
    assert result.code == 4
    assert result.json()["is_error"] is True
    events = [json.loads(line) for line in trace.read_text().splitlines()]
    calls = [e for e in events if e["event"].startswith("ToolCall")]
    assert [e["event"] for e in calls] == ["ToolCallRequested", "ToolCallDecided", "ToolCallFinished"]
    decided = calls[1]
    assert (decided["decision"], decided["rule"], decided["file"], decided["line"]) == (
        "deny",
        "fs.read(*.env)",
        str(user_file),
        2,
    )
    assert (calls[2]["is_error"], calls[2]["error"]) == (
        True,
        f"fs.read was not run: denied by deny rule 'fs.read(*.env)' ({user_file}:2)",
    )


def test_the_prompt_names_only_the_layers_always_may_write() -> None:
    from kairox.cli._approver import render_request
    from kairox.policy import GrantOption, RuleLayer

    grants = (GrantOption(rule="x(a)", covers="exactly this call", exact=True, persistable=True),)
    trusted = render_request(ApprovalRequest(tool="x", reason="r", rule="x(a)", grants=grants, layers=tuple(RuleLayer)))
    untrusted = render_request(
        ApprovalRequest(tool="x", reason="r", rule="x(a)", grants=grants, layers=(RuleLayer.USER,))
    )
    assert (
        "  [a1] allow always: save allow rule 'x(a)' in the user "
        "configuration (or project, local); answer a1:project or a1:local"
        " to save it there"
    ) in trusted.splitlines()
    assert "  [a1] allow always: save allow rule 'x(a)' in the user configuration" in untrusted.splitlines()


def test_tools_call_names_an_image_result_with_its_type_and_size(tmp_path: Path, isolated_home: Path) -> None:
    from tests.agent._support import EVERYTHING, NODE

    (isolated_home / "kairox.toml").write_text(
        f'[mcp_servers.everything]\ncommand = "{NODE}"\nargs = ["{EVERYTHING}"]\n'
    )
    shown = kairox("tools", "call", "mcp__everything__get-tiny-image", "--yes", cwd=tmp_path)
    assert shown.code == 0, shown.stderr
    lines = shown.stdout.splitlines()
    assert any(re.fullmatch(r"\[image: image/png, \d+\.\d KB; --json has its data\]", line) for line in lines), lines
