"""The policy engine decides from plain data; every test builds real paths in a temp dir."""

import getpass
import os
from pathlib import Path

import pytest

from kairox.config import ApprovalPolicy, PolicyConfig, SandboxPolicy
from kairox.dap._specs import dap_tool_specs
from kairox.errors import Severity
from kairox.policy import (
    Decision,
    DecisionSource,
    PolicyEngine,
    PolicySettings,
    Rule,
    RuleRef,
    Verdict,
    effective_profile,
    parse_rule,
    starts_sandboxed,
)
from kairox.policy._facts import runs_unsandboxed
from kairox.policy._rules import RuleAction
from kairox.tools import (
    BUILTIN_SPECS,
    Access,
    HookDecision,
    PermissionProfile,
    ToolAnnotations,
    ToolSource,
    ToolSpec,
)

SPECS = {spec.name: spec for spec in BUILTIN_SPECS}


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    (tmp_path / "ws" / "src").mkdir(parents=True)
    (tmp_path / "home").mkdir()
    (tmp_path / "tmp").mkdir()
    return tmp_path / "ws"


def engine(
    ws: Path,
    *rules: Rule,
    approval: ApprovalPolicy = ApprovalPolicy.ON_REQUEST,
    sandbox: SandboxPolicy = SandboxPolicy.WORKSPACE_WRITE,
    network: bool = False,
) -> PolicyEngine:
    config = PolicyConfig(approval_policy=approval, sandbox_policy=sandbox, network_access=network)
    settings = PolicySettings.from_config(
        config, workspace=ws, rules=rules, home=ws.parent / "home", temp_dir=ws.parent / "tmp"
    )
    return PolicyEngine(settings)


def mcp_spec(
    name: str = "mcp__github__create_issue",
    annotations: ToolAnnotations | None = None,
    access: Access = Access.READ,
    *,
    trusted: bool = False,
) -> ToolSpec:
    return ToolSpec(
        name=name,
        description="",
        input_schema={"type": "object"},
        source=ToolSource.MCP,
        origin="github",
        permission=PermissionProfile(access=access),
        annotations=annotations or ToolAnnotations(),
        annotations_trusted=trusted,
    )


def test_deny_rule_in_user_layer_beats_allow_rule_in_project_layer(ws: Path) -> None:
    deny = Rule(
        action="deny", pattern="shell.exec(git push*)", layer="user", file="/home/u/.kairox/kairox.toml", line=7
    )
    allow = Rule(action="allow", pattern="shell.exec(git *)", layer="project", file=str(ws / "kairox.toml"), line=2)
    for rules in ((deny, allow), (allow, deny)):
        decision = engine(ws, *rules).decide(SPECS["shell.exec"], {"command": "git push origin main"})
        assert decision == Decision.deny(
            "denied by deny rule 'shell.exec(git push*)' (/home/u/.kairox/kairox.toml:7)",
            source=DecisionSource.RULE,
            rule=RuleRef(
                action=RuleAction.DENY,
                pattern="shell.exec(git push*)",
                layer="user",
                file="/home/u/.kairox/kairox.toml",
                line=7,
            ),
        )
        assert decision.where == "/home/u/.kairox/kairox.toml:7"


def test_chained_command_does_not_pass_a_prefix_allow_rule(ws: Path) -> None:
    policy = engine(
        ws,
        Rule(action="allow", pattern="shell.exec(git status*)", file="k.toml", line=1),
        approval=ApprovalPolicy.UNTRUSTED,
    )
    assert policy.decide(SPECS["shell.exec"], {"command": "git status --short"}).verdict is Verdict.ALLOW
    for line in (
        "git status && rm -rf x",
        "git status; rm -rf x",
        "git status | sh",
        "git status $(rm -rf x)",
        "git status\nrm -rf x",
        'git status "$(rm -rf x)"',
        "git status <(rm -rf x)",
    ):
        decision = policy.decide(SPECS["shell.exec"], {"command": line})
        # a pipe into a shell is not visible to any rule: it is asked about because of the rule, every time
        expected = DecisionSource.RULE if line.endswith("| sh") else DecisionSource.MODE
        assert (line, decision.verdict, decision.source) == (line, Verdict.ASK, expected)


@pytest.mark.parametrize(
    "line",
    [
        "rm -rf x",
        "sudo rm -rf x",
        "env A=1 rm -rf x",
        "bash -c 'rm -rf x'",
        "/bin/rm -rf x",
        "true && rm -rf x",
        "echo `rm -rf x`",
        "A=1 rm -rf x",
        "{ rm -rf x; }",
        "if true; then rm -rf x; fi",
        "for f in a; do rm -rf x; done",
        "! rm -rf x",
        'echo "$(rm -rf x)"',
        "cat <(rm -rf x)",
    ],
)
def test_deny_rule_sees_through_wrappers_and_chains(ws: Path, line: str) -> None:
    decision = engine(ws, Rule(action="deny", pattern="shell.exec(rm *)")).decide(
        SPECS["shell.exec"], {"command": line}
    )
    assert decision.verdict is Verdict.DENY


def test_claude_style_prefix_rule_works(ws: Path) -> None:
    policy = engine(ws, Rule(action="ask", pattern="shell.exec(git push:*)"))
    assert policy.decide(SPECS["shell.exec"], {"command": "git push --force"}).verdict is Verdict.ASK
    assert policy.decide(SPECS["shell.exec"], {"command": "git pull"}).verdict is Verdict.ALLOW


def test_home_deny_rule_holds_for_absolute_relative_and_symlinked_paths(ws: Path) -> None:
    home = ws.parent / "home"
    (home / ".ssh").mkdir()
    (home / ".ssh" / "id_rsa").write_text("secret")
    (ws / "innocent").symlink_to(home / ".ssh")
    policy = engine(ws, Rule(action="deny", pattern="fs.read(~/.ssh/**)"))
    for path in (
        str(home / ".ssh" / "id_rsa"),
        "~/.ssh/id_rsa",
        "../home/.ssh/id_rsa",
        "src/../../home/./.ssh/id_rsa",
        "innocent/id_rsa",
    ):
        assert (path, policy.decide(SPECS["fs.read"], {"path": path}).verdict) == (path, Verdict.DENY)
    # fs.read rules hold for every built-in that reads paths
    assert policy.decide(SPECS["fs.list"], {"path": "innocent"}).verdict is Verdict.DENY
    assert policy.decide(SPECS["search.ripgrep"], {"pattern": "x", "path": "~/.ssh"}).verdict is Verdict.DENY
    assert policy.decide(SPECS["fs.read"], {"path": "src/a.py"}).verdict is Verdict.ALLOW


def test_relative_path_rule_is_anchored_at_the_workspace(ws: Path) -> None:
    policy = engine(ws, Rule(action="allow", pattern="fs.write(./src/**)"), approval=ApprovalPolicy.UNTRUSTED)
    assert policy.decide(SPECS["fs.write"], {"path": "src/a/b.py", "content": ""}).verdict is Verdict.ALLOW
    assert policy.decide(SPECS["fs.write"], {"path": "README.md", "content": ""}).verdict is Verdict.ASK
    assert policy.decide(SPECS["fs.write"], {"path": "src/../README.md", "content": ""}).verdict is Verdict.ASK
    # fs.write rules hold for fs.edit too
    assert (
        policy.decide(SPECS["fs.edit"], {"path": "src/a.py", "old_string": "a", "new_string": "b"}).verdict
        is Verdict.ALLOW
    )


def test_name_glob_rule_matches_anywhere(ws: Path) -> None:
    policy = engine(ws, Rule(action="deny", pattern="fs.read(*.env)"))
    assert policy.decide(SPECS["fs.read"], {"path": "deploy/prod.env"}).verdict is Verdict.DENY
    assert policy.decide(SPECS["fs.read"], {"path": "deploy/prod.txt"}).verdict is Verdict.ALLOW


def test_write_outside_the_writable_roots_asks_and_names_the_roots(ws: Path) -> None:
    decision = engine(ws).decide(SPECS["fs.write"], {"path": "../outside.txt", "content": "x"})
    outside, tmp = ws.parent / "outside.txt", ws.parent / "tmp"
    assert decision == Decision.ask(
        f"{outside} is outside the writable roots ({ws}, {tmp}); add "
        "the folder to policy.writable_roots to allow writes there",
        source=DecisionSource.SANDBOX,
    )


def test_configured_writable_root_allows_writes_there(ws: Path) -> None:
    config = PolicyConfig(writable_roots=["../shared"])
    settings = PolicySettings.from_config(config, workspace=ws, home=ws.parent / "home", temp_dir=ws.parent / "tmp")
    decision = PolicyEngine(settings).decide(SPECS["fs.write"], {"path": "../shared/x", "content": ""})
    assert decision.verdict is Verdict.ALLOW


def test_read_only_sandbox_asks_before_any_write(ws: Path) -> None:
    decision = engine(ws, sandbox=SandboxPolicy.READ_ONLY).decide(
        SPECS["fs.edit"], {"path": "src/a.py", "old_string": "a", "new_string": "b"}
    )
    assert (decision.verdict, decision.source) == (Verdict.ASK, DecisionSource.SANDBOX)


@pytest.mark.parametrize(
    "path",
    [
        ".git/config",
        "sub/.git/hooks/pre-commit",
        ".kairox/kairox.toml",
        "~/.bashrc",
        "~/.zshrc",
        "~/.config/fish/config.fish",
        "kairox.toml",
        ".mcp.json",
    ],
)
def test_protected_paths_always_ask_even_with_an_allow_rule_and_full_access(ws: Path, path: str) -> None:
    policy = engine(ws, Rule(action="allow", pattern="fs.write"), sandbox=SandboxPolicy.DANGER_FULL_ACCESS)
    decision = policy.decide(SPECS["fs.write"], {"path": path, "content": ""})
    assert (decision.verdict, decision.source) == (Verdict.ASK, DecisionSource.PROTECTED_PATH)


def test_hook_deny_beats_an_allow_rule(ws: Path) -> None:
    policy = engine(ws, Rule(action="allow", pattern="fs.read"))
    decision = policy.decide(
        SPECS["fs.read"], {"path": "a"}, hook=HookDecision.DENY, hook_reason="blocked by audit hook"
    )
    assert decision == Decision.deny("blocked by audit hook", source=DecisionSource.HOOK)


def test_hook_ask_tightens_an_allowed_call(ws: Path) -> None:
    decision = engine(ws).decide(SPECS["fs.read"], {"path": "a"}, hook=HookDecision.ASK, hook_reason="check this")
    assert decision == Decision.ask("check this", source=DecisionSource.HOOK)


def test_hook_allow_never_skips_a_deny_or_ask_rule_or_the_sandbox(ws: Path) -> None:
    policy = engine(
        ws, Rule(action="deny", pattern="shell.exec(rm*)"), Rule(action="ask", pattern="shell.exec(git push*)")
    )
    shell = SPECS["shell.exec"]
    assert policy.decide(shell, {"command": "rm x"}, hook=HookDecision.ALLOW).verdict is Verdict.DENY
    assert policy.decide(shell, {"command": "git push"}, hook=HookDecision.ALLOW).verdict is Verdict.ASK
    outside = policy.decide(SPECS["fs.write"], {"path": "/etc/x", "content": ""}, hook=HookDecision.ALLOW)
    assert (outside.verdict, outside.source) == (Verdict.ASK, DecisionSource.SANDBOX)


def test_hook_allow_skips_the_modes_ask(ws: Path) -> None:
    policy = engine(ws, approval=ApprovalPolicy.UNTRUSTED)
    decision = policy.decide(SPECS["shell.exec"], {"command": "make"}, hook=HookDecision.ALLOW)
    assert decision == Decision.allow("a pre_tool_use hook allowed the call", source=DecisionSource.HOOK)


def test_never_turns_every_ask_into_a_deny(ws: Path) -> None:
    decision = engine(ws, approval=ApprovalPolicy.NEVER).decide(SPECS["fs.write"], {"path": "../x", "content": ""})
    assert decision.verdict is Verdict.DENY
    assert decision.reason.endswith("the approval policy is never, so what would be asked is denied")


def test_untrusted_runs_only_read_only_tools_without_asking(ws: Path) -> None:
    policy = engine(ws, approval=ApprovalPolicy.UNTRUSTED)
    verdicts = {
        name: policy.decide(spec, {"path": "a", "command": "ls", "content": "", "pattern": "x"}).verdict
        for name, spec in SPECS.items()
    }
    assert verdicts == {
        "fs.read": Verdict.ALLOW,
        "fs.list": Verdict.ALLOW,
        "search.ripgrep": Verdict.ALLOW,
        "fs.write": Verdict.ASK,
        "fs.edit": Verdict.ASK,
        "shell.exec": Verdict.ASK,
        "web.fetch": Verdict.ASK,  # it reads, but from the network (policy.network_access is false)
    }


def test_unannotated_mcp_tool_counts_as_destructive_and_open_world(ws: Path) -> None:
    spec = mcp_spec()
    assert effective_profile(spec) == PermissionProfile(access=Access.EXTERNAL, destructive=True, open_world=True)
    decision = engine(ws).decide(spec, {})
    assert (decision.verdict, decision.source) == (Verdict.ASK, DecisionSource.MODE)


def test_mcp_tool_annotated_read_only_and_closed_world_runs_only_when_its_annotations_are_trusted(ws: Path) -> None:
    notes = ToolAnnotations(read_only_hint=True, open_world_hint=False)
    assert engine(ws).decide(mcp_spec(annotations=notes, trusted=True), {}).verdict is Verdict.ALLOW
    untrusted = engine(ws, network=True).decide(mcp_spec(annotations=notes), {})
    assert (untrusted.verdict, untrusted.source) == (Verdict.ASK, DecisionSource.MODE)
    assert "annotations of server 'github' are not trusted" in untrusted.reason


def test_mcp_tool_reaching_the_world_asks_while_the_network_is_off(ws: Path) -> None:
    spec = mcp_spec(annotations=ToolAnnotations(read_only_hint=True), trusted=True)
    assert engine(ws).decide(spec, {}).verdict is Verdict.ASK
    assert engine(ws, network=True).decide(spec, {}).verdict is Verdict.ALLOW


def test_a_declared_profile_wider_than_the_policy_is_still_held_to_it(ws: Path) -> None:
    # a plugin tool that declares it writes anywhere and is harmless
    spec = ToolSpec(
        name="deploy",
        description="",
        input_schema={"type": "object"},
        source=ToolSource.PLUGIN,
        origin="plugin:ops",
        permission=PermissionProfile(access=Access.WRITE, path_args=("target",)),
    )
    assert effective_profile(spec).access is Access.EXECUTE  # plugins run commands: the floor wins over the claim
    assert (
        engine(ws, sandbox=SandboxPolicy.READ_ONLY, approval=ApprovalPolicy.NEVER)
        .decide(spec, {"target": "src/x"})
        .verdict
        is Verdict.DENY
    )
    assert engine(ws, approval=ApprovalPolicy.UNTRUSTED).decide(spec, {"target": "src/x"}).verdict is Verdict.ASK
    # an MCP tool claiming read access is still an external tool
    assert effective_profile(mcp_spec(access=Access.READ)).access is Access.EXTERNAL


def test_annotations_can_only_add_caution(ws: Path) -> None:
    spec = ToolSpec(
        name="fs.read",
        description="",
        input_schema={"type": "object"},
        source=ToolSource.BUILTIN,
        permission=PermissionProfile(access=Access.READ),
        annotations=ToolAnnotations(destructive_hint=True, open_world_hint=True),
    )
    assert effective_profile(spec) == PermissionProfile(access=Access.READ, destructive=True, open_world=True)


def test_server_plugin_and_skill_rules(ws: Path) -> None:
    policy = engine(
        ws,
        Rule(action="deny", pattern="mcp__github"),
        Rule(action="deny", pattern="plugin:ops"),
        Rule(action="deny", pattern="skill(pr-review)"),
    )
    plugin_tool = ToolSpec(
        name="ops_deploy",
        description="",
        input_schema={"type": "object"},
        source=ToolSource.PLUGIN,
        origin="plugin:ops",
        permission=PermissionProfile(access=Access.EXECUTE),
    )
    skill = ToolSpec(
        name="skill.run",
        description="",
        input_schema={"type": "object"},
        source=ToolSource.SKILL,
        origin="pr-review",
        permission=PermissionProfile(access=Access.READ),
    )
    other_skill = ToolSpec(
        name="skill.run",
        description="",
        input_schema={"type": "object"},
        source=ToolSource.SKILL,
        origin="lint",
        permission=PermissionProfile(access=Access.READ),
    )
    assert policy.decide(mcp_spec(), {}).verdict is Verdict.DENY
    assert policy.decide(mcp_spec(name="mcp__gitlab__x"), {}).verdict is Verdict.ASK
    assert policy.decide(plugin_tool, {}).verdict is Verdict.DENY
    assert policy.decide(skill, {}).verdict is Verdict.DENY
    assert policy.decide(other_skill, {}).verdict is Verdict.ALLOW
    assert policy.denied_by_name(mcp_spec()) == RuleRef(action=RuleAction.DENY, pattern="mcp__github")


def test_a_malformed_rule_is_reported_with_its_file_and_line(ws: Path) -> None:
    policy = engine(
        ws,
        Rule(action="deny", pattern="shell.exec(rm", file="/u/kairox.toml", line=4),
        Rule(action="forbid", pattern="x"),
    )
    assert [(d.severity, d.source, d.line, d.name) for d in policy.diagnostics] == [
        (Severity.ERROR, "/u/kairox.toml", 4, "shell.exec(rm"),
        (Severity.ERROR, None, None, "x"),
    ]


def test_suggested_rules_cover_calls_like_this_one(ws: Path) -> None:
    policy = engine(ws)
    assert policy.suggest_rule(SPECS["shell.exec"], {"command": "git push origin main"}) == "shell.exec(git push*)"
    assert policy.suggest_rule(SPECS["fs.write"], {"path": "src/a.py"}) == f"fs.write({ws / 'src' / 'a.py'})"
    assert policy.suggest_rule(mcp_spec(), {}) == "mcp__github__create_issue"


def test_a_symlink_out_of_the_workspace_does_not_make_a_write_inside(ws: Path) -> None:
    outside = ws.parent / "elsewhere"
    outside.mkdir()
    (ws / "link").symlink_to(outside)
    decision = engine(ws).decide(SPECS["fs.write"], {"path": "link/x.txt", "content": ""})
    assert (decision.verdict, decision.source) == (Verdict.ASK, DecisionSource.SANDBOX)
    assert decision.reason.startswith(f"{outside / 'x.txt'} is outside the writable roots")


def test_a_tilde_user_path_is_resolved_where_the_tools_write_it(ws: Path) -> None:
    # `~name/...` is the home of user `name` for the built-in tools (os.path.expanduser), so the policy must
    # see the same place, not a folder called `~name` inside the workspace
    user = getpass.getuser()
    target = Path(os.path.expanduser(f"~{user}"))
    write = engine(ws).decide(SPECS["fs.write"], {"path": f"~{user}/kairox-probe.txt", "content": "x"})
    assert (write.verdict, write.source) == (Verdict.ASK, DecisionSource.SANDBOX)
    assert write.reason.startswith(
        f"{Path(os.path.realpath(target)) / 'kairox-probe.txt'} is outside the writable roots"
    )
    deny = engine(ws, Rule(action="deny", pattern=f"fs.read({target}/.ssh/**)"))
    assert deny.decide(SPECS["fs.read"], {"path": f"~{user}/.ssh/id_rsa"}).verdict is Verdict.DENY


DAP = {spec.name: spec for spec in dap_tool_specs()}


def test_debugging_runs_in_the_sandbox_and_attaching_to_an_unconfined_program_asks(ws: Path) -> None:
    launch = {"program": "main.py"}
    attach = {"port": 5678}
    # the adapter and the debuggee run in the sandbox shell.exec commands run in: allowed like shell.exec
    for sandbox in SandboxPolicy:
        assert engine(ws, sandbox=sandbox).decide(DAP["dap.launch"], launch).verdict is Verdict.ALLOW
        assert engine(ws, sandbox=sandbox).decide(DAP["dap.continue"], {}).verdict is Verdict.ALLOW
    assert engine(ws).decide(DAP["dap.launch"], launch) == Decision.allow(
        "dap.launch runs in the workspace_write sandbox", source=DecisionSource.MODE
    )
    # a program Kairox did not start is in no sandbox: asked in every mode, unless an allow rule covers it
    for sandbox in (SandboxPolicy.WORKSPACE_WRITE, SandboxPolicy.DANGER_FULL_ACCESS):
        asked = engine(ws, sandbox=sandbox).decide(DAP["dap.attach"], attach)
        assert asked == Decision.ask(
            "dap.attach works on a program that Kairox did not start "
            "and no Kairox sandbox holds, so what it makes that "
            "program do runs with the program's full authority",
            source=DecisionSource.MODE,
            suggested_rule="dap.attach",
        )
    assert (
        engine(ws, Rule(action="allow", pattern="dap.attach")).decide(DAP["dap.attach"], attach).verdict
        is Verdict.ALLOW
    )
    never = engine(ws, approval=ApprovalPolicy.NEVER).decide(DAP["dap.attach"], attach)
    assert never.verdict is Verdict.DENY and never.reason.endswith(
        "the approval policy is never, so what would be asked is denied"
    )
    untrusted = engine(ws, approval=ApprovalPolicy.UNTRUSTED).decide(DAP["dap.launch"], launch)
    assert (untrusted.verdict, untrusted.suggested_rule) == (Verdict.ASK, f"dap.launch({ws / 'main.py'})")


def test_read_only_denies_attaching_whatever_allows_it(ws: Path) -> None:
    allow_all = (Rule(action="allow", pattern="dap.*"), Rule(action="allow", pattern="shell.exec"))
    policy = engine(ws, *allow_all, sandbox=SandboxPolicy.READ_ONLY)
    # neither an allow rule nor a hook's allow gets a program no sandbox holds past read_only
    for hook in (None, HookDecision.ALLOW):
        assert policy.decide(DAP["dap.attach"], {"port": 5678}, hook=hook) == Decision.deny(
            "dap.attach runs a program outside Kairox's OS sandbox, which the read_only sandbox policy forbids",
            source=DecisionSource.SANDBOX,
        )
    # shell.exec, plugin command tools and dap.launch run inside bubblewrap, which holds them to read_only itself
    assert policy.decide(SPECS["shell.exec"], {"command": "make"}).verdict is Verdict.ALLOW
    assert policy.decide(DAP["dap.launch"], {"program": "main.py"}).verdict is Verdict.ALLOW
    plugin_tool = ToolSpec(
        name="p__t",
        description="",
        input_schema={"type": "object"},
        source=ToolSource.PLUGIN,
        origin="p",
        permission=PermissionProfile(access=Access.EXECUTE),
    )
    assert engine(ws, sandbox=SandboxPolicy.READ_ONLY).decide(plugin_tool, {}).verdict is Verdict.ALLOW
    # a deny rule still names itself
    denied = engine(ws, Rule(action="deny", pattern="dap.attach"), sandbox=SandboxPolicy.READ_ONLY).decide(
        DAP["dap.attach"], {}
    )
    assert denied.source is DecisionSource.RULE


def test_only_a_tool_that_starts_its_program_in_the_sandbox_is_retried_outside_it() -> None:
    assert [name for name, spec in {**SPECS, **DAP}.items() if starts_sandboxed(spec)] == ["shell.exec", "dap.launch"]
    assert [name for name, spec in {**SPECS, **DAP}.items() if runs_unsandboxed(spec)] == ["dap.attach"]


def test_the_command_line_of_a_launch_names_the_program_its_arguments_variables_and_folder(ws: Path) -> None:
    policy = engine(ws)
    assert policy.command_line(DAP["dap.launch"], {"program": "main.py"}) == "main.py"
    call = {"program": "tools/run me.py", "args": ["--out", "/tmp/x y"], "env": {"MODE": "a b"}, "cwd": "tools"}
    assert (
        policy.command_line(DAP["dap.launch"], call) == "cd tools && env 'MODE=a b' 'tools/run me.py' --out '/tmp/x y'"
    )
    assert policy.command_line(DAP["dap.attach"], {"port": 5678}) is None


def test_a_suggested_rule_for_a_path_with_glob_characters_covers_only_that_path(ws: Path) -> None:
    policy = engine(ws, approval=ApprovalPolicy.UNTRUSTED)
    suggestion = policy.suggest_rule(SPECS["fs.write"], {"path": "out/*[1]?.txt"})
    assert suggestion == f"fs.write({ws / 'out'}/[*][[]1][?].txt)"
    grant = parse_rule(Rule(action="allow", pattern=suggestion))
    assert policy.matches_any([grant], SPECS["fs.write"], {"path": "out/*[1]?.txt"}) is grant
    assert policy.matches_any([grant], SPECS["fs.write"], {"path": "out/secret1x.txt"}) is None


def test_read_rules_hold_for_language_server_tools_that_open_files(ws: Path) -> None:
    hover = ToolSpec(
        name="lsp.hover",
        description="",
        input_schema={"type": "object"},
        source=ToolSource.LSP,
        origin="lsp",
        permission=PermissionProfile(access=Access.READ, path_args=("path",)),
    )
    policy = engine(ws, Rule(action="deny", pattern="fs.read(~/.ssh/**)"))
    assert policy.decide(hover, {"path": "~/.ssh/config", "line": 1, "column": 1}).verdict is Verdict.DENY
    assert policy.decide(hover, {"path": "src/a.py", "line": 1, "column": 1}).verdict is Verdict.ALLOW


@pytest.mark.parametrize("line", ["X=rm; $X -rf y", "$(echo rm) -rf y", "`echo rm` -rf y", "${CMD:-rm} -rf y"])
def test_a_command_whose_name_is_computed_when_it_runs_is_asked_about_under_deny_rules(ws: Path, line: str) -> None:
    decision = engine(ws, Rule(action="deny", pattern="shell.exec(rm *)", file="k.toml", line=4)).decide(
        SPECS["shell.exec"], {"command": line}
    )
    assert (decision.verdict, decision.source) == (Verdict.ASK, DecisionSource.RULE)
    assert (
        decision.reason == "a command name is only known when the line runs, so deny rule "
        "'shell.exec(rm *)' (k.toml:4) cannot be checked against it"
    )
    # without deny rules for commands nothing changes
    assert engine(ws).decide(SPECS["shell.exec"], {"command": line}).verdict is Verdict.ALLOW
    assert (
        engine(ws, Rule(action="deny", pattern="shell.exec(rm *)"))
        .decide(SPECS["shell.exec"], {"command": "echo $HOME"})
        .verdict
        is Verdict.ALLOW
    )


def test_an_allow_rule_does_not_cover_output_redirected_into_a_file(ws: Path) -> None:
    policy = engine(ws, Rule(action="allow", pattern="shell.exec(git status*)"), approval=ApprovalPolicy.UNTRUSTED)
    assert policy.decide(SPECS["shell.exec"], {"command": "git status > src/main.py"}).verdict is Verdict.ASK
    for line in ("git status 2>&1", "git status > /dev/null", "git status --short"):
        assert (line, policy.decide(SPECS["shell.exec"], {"command": line}).verdict) == (line, Verdict.ALLOW)


def test_the_policy_resolves_paths_as_realpath_does(tmp_path: Path) -> None:
    """The rules see a path as ``os.path.realpath`` names it, links followed: the kernel's own walk, used when the
    file exists, names the same file."""
    from kairox.policy._paths import resolve_path

    root = tmp_path.resolve()
    (root / "real" / "deep").mkdir(parents=True)
    (root / "real" / "deep" / "secret.env").write_text("KEY=1\n")
    (root / "link").symlink_to(root / "real")
    (root / "ws").mkdir()
    (root / "ws" / "escape").symlink_to(root / "real" / "deep")
    for value in (
        "escape/secret.env",
        "../link/deep/secret.env",
        "escape/../deep/secret.env",
        "escape/new.txt",
        "~/secret.env",
    ):
        expected = os.path.realpath(os.path.join(root / "ws", value.replace("~", str(root / "link" / "deep"))))
        assert str(resolve_path(value, base=root / "ws", home=root / "link" / "deep")) == expected


def test_a_tools_effective_profile_follows_its_own_hints_when_its_name_is_relisted() -> None:
    """A tool relisted under the same name with other hints gets the profile of its own declaration."""
    for i in range(12):
        trusted, read_only = bool(i % 2), bool(i % 3)
        spec = mcp_spec(f"mcp__s__t{i % 2}", ToolAnnotations(read_only_hint=read_only), trusted=trusted)  # names recur
        profile = effective_profile(spec)
        expected_read = trusted and read_only
        assert profile.destructive is not expected_read, i  # access stays external: the floor of MCP tools
