"""C6: a server whose entry changed since `kairox trust` is named pending re-trust everywhere, in the words of the
runtime's server view: the LSP tools (not "no language server is configured"), `mcp status`, `mcp tools`,
`lsp status`; an untrusted workspace's servers are named held back by trust."""

import json
import sys
from pathlib import Path

import pytest
from tests.helpers import kairox

SERVERS = Path(__file__).resolve().parents[1] / "servers"
PYLSP = Path(sys.executable).parent / "pylsp"
NO_SANDBOX = ("-c", "policy.sandbox_policy=danger_full_access")

pytestmark = pytest.mark.timeout(180)


def _entries(extra_args: str = "") -> str:
    mcp_args = json.dumps([str(SERVERS / "basic_server.py"), *([extra_args] if extra_args else [])])
    lsp_args = json.dumps([extra_args] if extra_args else [])
    dap_args = json.dumps(["-m", "debugpy.adapter", *([extra_args] if extra_args else [])])
    return (
        f"[mcp_servers.tool]\ncommand = {json.dumps(sys.executable)}\nargs = {mcp_args}\n"
        f'[lsp_servers.pyls]\ncommand = {json.dumps(str(PYLSP))}\nargs = {lsp_args}\nfile_patterns = ["*.py"]\n'
        f'[dap_servers.projdbg]\ncommand = {json.dumps(sys.executable)}\nargs = {dap_args}\nlanguages = ["python"]\n'
    )


@pytest.fixture
def changed_since_trust(tmp_path: Path, isolated_home: Path) -> Path:
    """A trusted repository whose two servers were edited after `kairox trust`; the user's own language server
    for Markdown keeps the LSP tools listed."""
    (isolated_home / "kairox.toml").write_text(
        f'[lsp_servers.docs]\ncommand = {json.dumps(str(PYLSP))}\nfile_patterns = ["*.md"]\n'
        f"[dap_servers.userdbg]\ncommand = {json.dumps(sys.executable)}"
        '\nargs = ["-m", "debugpy.adapter"]\nlanguages = ["python"]\n',
        encoding="utf-8",
    )
    root = tmp_path / "repo"
    (root / ".git").mkdir(parents=True)
    (root / "pkg").mkdir()
    (root / "pkg" / "tool.py").write_text("def run() -> int:\n    return 1\n", encoding="utf-8")
    (root / "kairox.toml").write_text(_entries(), encoding="utf-8")
    assert kairox("trust", cwd=root).code == 0
    (root / "kairox.toml").write_text(_entries("-v"), encoding="utf-8")
    return root


def _reason(kind: str, name: str, line: int) -> str:
    return (
        f"{kind} `{name}` in kairox.toml:{line} changed since this workspace was trusted; run `kairox trust` to review"
    )


def test_the_lsp_tools_say_the_entry_is_pending_retrust_and_trust_reviews_it(changed_since_trust: Path) -> None:
    root = changed_since_trust
    call = kairox(*NO_SANDBOX, "tools", "call", "lsp.document_symbols", '{"path": "pkg/tool.py"}', cwd=root)
    assert call.code != 0
    assert call.stderr.splitlines() == [
        "lsp.document_symbols failed: language server 'pyls' for pkg/tool.py "
        f"is pending re-trust: {_reason('language server', 'pyls', 4)}",
        "  hint: `kairox trust` in the workspace reviews the entry; the server starts once it is trusted",
    ]
    named = kairox(
        *NO_SANDBOX, "tools", "call", "lsp.workspace_symbols", '{"query": "run", "server": "pyls"}', cwd=root
    )
    assert f"language server 'pyls' is pending re-trust: {_reason('language server', 'pyls', 4)}" in named.stderr
    assert "no language server" not in call.stderr + named.stderr

    status = kairox("lsp", "status", cwd=root)
    assert f"pyls: pending re-trust  ({PYLSP} -v; files *.py)" in status.stdout.splitlines()
    # a debug adapter's entry too
    launch = kairox(
        *NO_SANDBOX, "tools", "call", "dap.launch", '{"program": "pkg/tool.py", "server": "projdbg"}', cwd=root
    )
    assert f"debug adapter 'projdbg' is pending re-trust: {_reason('debug adapter', 'projdbg', 8)}" in launch.stderr
    sessions = kairox("dap", "sessions", cwd=root)
    assert f"projdbg: pending re-trust  ({sys.executable} -m debugpy.adapter -v)" in sessions.stdout.splitlines()

    # what the message says to do is what makes it work
    assert kairox("trust", cwd=root).code == 0
    after = kairox(*NO_SANDBOX, "tools", "call", "lsp.document_symbols", '{"path": "pkg/tool.py"}', cwd=root)
    assert after.code == 0, after.stderr
    assert "run" in after.stdout


def test_mcp_status_and_tools_say_pending_retrust(changed_since_trust: Path) -> None:
    root = changed_since_trust
    status = kairox(*NO_SANDBOX, "mcp", "status", cwd=root)
    assert (
        status.stdout.splitlines()[0] == f"tool: pending re-trust (stdio, 0 tools): {_reason('MCP server', 'tool', 1)}"
    )
    view = kairox(*NO_SANDBOX, "mcp", "status", "--json", cwd=root).json()["servers"][0]
    assert (view["status"], view["reason"]) == ("pending_retrust", _reason("MCP server", "tool", 1))
    tools = kairox(*NO_SANDBOX, "mcp", "tools", cwd=root)
    assert f"tool: pending re-trust: {_reason('MCP server', 'tool', 1)}" in tools.stderr + tools.stdout
    assert "untrusted project" not in status.stdout + tools.stdout + tools.stderr


def test_an_untrusted_workspaces_servers_are_held_back_by_trust(tmp_path: Path, isolated_home: Path) -> None:
    root = tmp_path / "repo"
    (root / ".git").mkdir(parents=True)
    (root / "kairox.toml").write_text(_entries(), encoding="utf-8")
    view = kairox(*NO_SANDBOX, "mcp", "status", "--json", cwd=root).json()["servers"][0]
    assert view["status"] == "held_back" and "kairox trust" in view["reason"]
    # the same words as the server view, not a wording of the MCP layer's own
    tools = kairox(*NO_SANDBOX, "mcp", "tools", cwd=root)
    assert f"tool: held back by trust: {view['reason']}" in tools.stderr.splitlines()
    status = kairox("lsp", "status", cwd=root)
    assert status.stdout.splitlines()[0].startswith("pyls: held back by trust  (")
