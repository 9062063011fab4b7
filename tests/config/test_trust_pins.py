"""Y9: trust pins what it allowed. Runnable configuration planted or edited after `kairox trust` waits for it."""

import json
import sys
from pathlib import Path

import pytest
from tests.helpers import kairox

from kairox.config import resolve_config, trust_workspace

PYTHON = json.dumps(sys.executable)


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def marker_code(marker: Path) -> str:
    return f"import pathlib; pathlib.Path({str(marker)!r}).write_text('ran')"


@pytest.fixture(params=["workspace_write", "danger_full_access"])
def sandbox(request: pytest.FixtureRequest, isolated_home: Path) -> str:
    write(isolated_home / "kairox.toml", f'[policy]\nsandbox_policy = "{request.param}"\n')
    return str(request.param)


@pytest.fixture
def trusted_repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    (root / ".git").mkdir(parents=True)
    write(root / "tools" / "server.py", "print('an innocent server')\n")
    write(root / "README.md", "A repository.\n")
    assert kairox("trust", cwd=root).code == 0
    return root


def _trust_diagnostics(run_json: dict[str, object]) -> list[tuple[str, str, int | None]]:
    found = run_json["diagnostics"]
    assert isinstance(found, list)
    return [(d["name"], Path(d["path"]).name, d["line"]) for d in found if d["kind"] == "trust"]


def _plant(root: Path, how: str, marker: Path) -> tuple[Path, str]:
    """Write a server that leaves ``marker``; return the folder Kairox runs from and the file that says it."""
    toml = f'[mcp_servers.planted]\ncommand = {PYTHON}\nargs = ["-c", {json.dumps(marker_code(marker))}]\n'
    if how == ".mcp.json":
        entry = {"command": sys.executable, "args": ["-c", marker_code(marker)]}
        write(root / ".mcp.json", json.dumps({"mcpServers": {"planted": entry}}, indent=2))
        return root, ".mcp.json"
    if how == "kairox.toml":
        write(root / "kairox.toml", toml)
        return root, "kairox.toml"
    if how == "kairox.local.toml":
        write(root / ".kairox" / "kairox.local.toml", toml)
        return root, "kairox.local.toml"
    assert how == "sub/kairox.toml"
    write(root / "sub" / "kairox.toml", toml)
    return root / "sub", "kairox.toml"


@pytest.mark.timeout(180)
@pytest.mark.parametrize("how", [".mcp.json", "kairox.toml", "kairox.local.toml", "sub/kairox.toml"])
def test_a_server_planted_after_trust_never_starts_until_trusted_again(
    trusted_repo: Path, sandbox: str, how: str
) -> None:
    marker = trusted_repo.parent / "marker"
    cwd, file_name = _plant(trusted_repo, how, marker)
    run = kairox("context", "--json", cwd=cwd)
    assert run.code == 0, run.stderr
    assert not marker.exists()
    assert run.json()["prompt_context"].count("wait for the user to run `kairox trust`") == 1
    line = 3 if how == ".mcp.json" else 1
    assert _trust_diagnostics(run.json()) == [("mcp_servers.planted", file_name, line)]
    reason = next(d["reason"] for d in run.json()["diagnostics"] if d["kind"] == "trust")
    shown = {".mcp.json": ".mcp.json:3", "kairox.local.toml": ".kairox/kairox.local.toml:1"}.get(how, "kairox.toml:1")
    assert (
        reason == f"new MCP server `planted` in {shown} since this workspace was trusted; run `kairox trust` to review"
    )
    assert not marker.exists()

    review = kairox("trust", cwd=cwd)
    assert review.code == 0, review.stderr
    assert "allows MCP server `planted`" in review.stdout
    kairox("context", "--json", cwd=cwd)
    assert marker.read_text() == "ran"


@pytest.mark.timeout(180)
def test_an_edited_server_script_waits_until_trusted_again(tmp_path: Path, sandbox: str) -> None:
    root = tmp_path / "repo"
    (root / ".git").mkdir(parents=True)
    script = write(root / "tools" / "server.py", "print('an innocent server')\n")
    write(root / "kairox.toml", f'[mcp_servers.tool]\ncommand = {PYTHON}\nargs = ["tools/server.py"]\n')
    assert kairox("trust", cwd=root).code == 0
    assert not resolve_config(root).is_pending("mcp_servers.tool")

    marker = tmp_path / "marker"
    script.write_text(marker_code(marker) + "\n", encoding="utf-8")
    run = kairox("context", "--json", cwd=root)
    assert not marker.exists()
    assert _trust_diagnostics(run.json()) == [("mcp_servers.tool", "kairox.toml", 1)]
    reason = next(d["reason"] for d in run.json()["diagnostics"] if d["kind"] == "trust")
    assert (
        reason
        == "MCP server `tool` in kairox.toml:1 changed since this workspace was trusted; run `kairox trust` to review"
    )
    # a helper beside the script is part of what runs too
    write(root / "tools" / "helper.py", "x = 1\n")

    review = kairox("trust", cwd=root)
    assert review.stdout.splitlines() == [
        "allows MCP server `tool` (kairox.toml:1)",
        "changed since the last trust: MCP server `tool` (kairox.toml:1)",
    ]
    kairox("context", "--json", cwd=root)
    assert marker.read_text() == "ran"


@pytest.mark.timeout(120)
def test_a_hook_planted_in_the_local_file_does_not_run_until_trusted(trusted_repo: Path) -> None:
    marker = trusted_repo.parent / "hook-ran"
    command = f"{sys.executable} -c {json.dumps(marker_code(marker))}"
    write(trusted_repo / ".kairox" / "kairox.local.toml", f"[[hooks.pre_tool_use]]\ncommand = {json.dumps(command)}\n")
    run = kairox("tools", "call", "fs.list", "{}", cwd=trusted_repo)
    assert run.code == 0, run.stderr
    assert not marker.exists()
    assert [p.key for p in resolve_config(trusted_repo).pending] == ["hooks.pre_tool_use"]
    kairox("trust", cwd=trusted_repo)
    kairox("tools", "call", "fs.list", "{}", cwd=trusted_repo)
    assert marker.read_text() == "ran"


def test_a_wider_policy_planted_in_a_trusted_workspace_waits(trusted_repo: Path, isolated_home: Path) -> None:
    write(
        trusted_repo / "kairox.toml",
        '[policy]\nsandbox_policy = "danger_full_access"\napproval_policy = "on_failure"\n',
    )
    resolved = resolve_config(trusted_repo)
    assert resolved.trusted is True
    assert (resolved.config.policy.sandbox_policy, resolved.config.policy.approval_policy) == (
        "workspace_write",
        "on_request",
    )
    assert sorted(p.key for p in resolved.pending) == ["policy.approval_policy", "policy.sandbox_policy"]
    trust_workspace(trusted_repo)
    again = resolve_config(trusted_repo)
    assert (again.config.policy.sandbox_policy, again.pending) == ("danger_full_access", ())


def test_a_nested_folder_inherits_trust_but_not_the_fingerprints(trusted_repo: Path) -> None:
    write(
        trusted_repo / "sub" / "kairox.toml", '[policy]\nnetwork_access = true\n\n[instructions]\ntext = "Be brief."\n'
    )
    resolved = resolve_config(cwd=trusted_repo / "sub")
    assert (resolved.workspace, resolved.trusted) == (trusted_repo / "sub", True)
    assert resolved.config.instructions.text == "Be brief."  # what needs no trust is taken
    assert resolved.config.policy.network_access is False
    assert [p.key for p in resolved.pending] == ["policy.network_access"]
    assert kairox("trust", cwd=trusted_repo / "sub").code == 0
    assert resolve_config(cwd=trusted_repo / "sub").config.policy.network_access is True
    assert kairox("trust", "--list").stdout.splitlines() == sorted([str(trusted_repo), str(trusted_repo / "sub")])


def test_a_trust_record_without_fingerprints_holds_everything_once(tmp_path: Path, isolated_home: Path) -> None:
    root = tmp_path / "repo"
    (root / ".git").mkdir(parents=True)
    write(root / "kairox.toml", f"[mcp_servers.tool]\ncommand = {PYTHON}\n\n[policy]\nnetwork_access = true\n")
    # what earlier versions wrote: the folder and when, nothing about what was allowed
    write(isolated_home / "trusted_workspaces.json", json.dumps({"workspaces": {str(root): {"trusted_at": 1}}}))
    resolved = resolve_config(root)
    assert resolved.trusted is True
    assert sorted(p.key for p in resolved.pending) == ["mcp_servers.tool", "policy.network_access"]
    assert [d.reason for d in resolved.diagnostics if d.name == "mcp_servers.tool"] == [
        "MCP server `tool` in kairox.toml:1: this workspace was trusted before Kairox recorded what trust allows; "
        "run `kairox trust` to review"
    ]
    review = kairox("trust", cwd=root)
    assert review.stdout.splitlines() == [
        "allows MCP server `tool` (kairox.toml:1)",
        "allows policy.network_access = true (kairox.toml:5)",
        "new since the last trust: MCP server `tool` (kairox.toml:1)",
        "new since the last trust: policy.network_access = true (kairox.toml:5)",
    ]
    assert resolve_config(root).pending == ()


def test_trust_says_what_it_allows_and_what_left(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    (root / ".git").mkdir(parents=True)
    write(root / "kairox.toml", f'[mcp_servers.a]\ncommand = {PYTHON}\n\n[lsp_servers.b]\ncommand = "pylsp"\n')
    first = kairox("trust", cwd=root)
    assert first.stdout.splitlines() == [
        "allows MCP server `a` (kairox.toml:1)",
        "allows language server `b` (kairox.toml:4)",
    ]
    assert first.stderr.strip() == f"{root}: trusted"
    write(root / "kairox.toml", f"[mcp_servers.a]\ncommand = {PYTHON}\n")
    again = kairox("trust", cwd=root)
    assert again.stdout.splitlines() == [
        "allows MCP server `a` (kairox.toml:1)",
        f"no longer set: {root / 'kairox.toml'}#lsp_servers.b",
    ]
    write(root / "kairox.toml", "")
    assert kairox("trust", cwd=root).stdout.splitlines() == [
        f"no longer set: {root / 'kairox.toml'}#mcp_servers.a",
        "allows nothing beyond what an untrusted workspace may do (no servers, hooks, plugins or wider policy)",
    ]


def test_a_workspace_plugin_changed_after_trust_is_not_enabled(trusted_repo: Path) -> None:
    plugin = trusted_repo / ".kairox" / "plugins" / "deploy"
    write(plugin / ".kairox-plugin" / "plugin.json", json.dumps({"name": "deploy", "version": "1.0.0"}))
    listed = kairox("plugins", "list", "--json", cwd=trusted_repo).json()
    view = next(p for p in listed["plugins"] if p["name"] == "deploy")
    assert (view["enabled"], view["disabled_reason"]) == (
        False,
        "new or changed since this workspace was trusted; run `kairox trust` to review",
    )
    kairox("trust", cwd=trusted_repo)
    listed = kairox("plugins", "list", "--json", cwd=trusted_repo).json()
    assert next(p for p in listed["plugins"] if p["name"] == "deploy")["enabled"] is True
    write(plugin / "tools" / "run.sh", "#!/bin/sh\necho changed\n")
    listed = kairox("plugins", "list", "--json", cwd=trusted_repo).json()
    assert next(p for p in listed["plugins"] if p["name"] == "deploy")["enabled"] is False
