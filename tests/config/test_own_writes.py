"""What the user changes through Kairox in a trusted workspace's project or local file holds at once; what someone
else changed in the same file, or in the same entry, still waits for ``kairox trust`` (Y9).

Every write here is the real command (``config set``, ``config unset``, ``mcp add``) or the runtime's toggle, and
every check is a fresh resolve of the files as they are afterwards."""

import sys
import tomllib
from pathlib import Path

import anyio
import pytest
from tests.helpers import Run, kairox

from kairox._rpc._status import ServerStatus
from kairox.cli._common import ExitCode
from kairox.config import TrustStore, resolve_config, trust_workspace
from kairox.runtime import build_extension_context, set_mcp_server_enabled

SERVERS = Path(__file__).resolve().parents[1] / "servers"
SERVER_PY = SERVERS / "basic_server.py"


def run(workspace: Path, *args: str) -> Run:
    done = kairox("--workspace", workspace, *args, cwd=workspace)
    assert done.code == ExitCode.OK, done.stderr
    return done


def pending(workspace: Path) -> set[str]:
    return {item.key for item in resolve_config(workspace).pending}


def servers_in_force(workspace: Path) -> dict[str, bool]:
    resolved = resolve_config(workspace)
    held = {item.key for item in resolved.pending}
    return {name: cfg.enabled for name, cfg in resolved.config.mcp_servers.items() if f"mcp_servers.{name}" not in held}


@pytest.fixture
def workspace(tmp_path: Path, isolated_home: Path) -> Path:
    root = tmp_path / "repo"
    (root / ".git").mkdir(parents=True)
    (root / "tools").mkdir()
    (root / "tools" / "serve.py").write_text(SERVER_PY.read_text())
    (root / "kairox.toml").write_text(
        "# the team's servers\n"
        f'[mcp_servers.demo]\ncommand = "{sys.executable}"\nargs = ["tools/serve.py"]\n\n'
        f'[mcp_servers.other]\ncommand = "{sys.executable}"\nargs = ["tools/serve.py"]\n'
    )
    trust_workspace(root)
    assert pending(root) == set()
    return root


@pytest.mark.parametrize("layer", ["project", "local"])
def test_turning_a_trusted_server_off_and_on_again_holds_without_a_second_review(workspace: Path, layer: str) -> None:
    if layer == "local":  # the server comes from the local file
        (workspace / ".kairox").mkdir()
        (workspace / ".kairox" / "kairox.local.toml").write_text(
            f'[mcp_servers.mine]\ncommand = "{sys.executable}"\nargs = ["tools/serve.py"]\n'
        )
        trust_workspace(workspace)
    name = "demo" if layer == "project" else "mine"
    run(workspace, "config", "set", "--layer", layer, f"mcp_servers.{name}.enabled", "false")
    assert servers_in_force(workspace)[name] is False
    run(workspace, "config", "set", "--layer", layer, f"mcp_servers.{name}.enabled", "true")
    assert servers_in_force(workspace)[name] is True
    assert pending(workspace) == set()
    run(workspace, "config", "unset", "--layer", layer, f"mcp_servers.{name}.enabled")
    assert pending(workspace) == set()


def test_a_server_the_user_adds_to_a_trusted_project_starts_without_a_second_review(workspace: Path) -> None:
    run(workspace, "mcp", "add", "--layer", "project", "added", "--", sys.executable, "tools/serve.py")
    assert "added" in servers_in_force(workspace)
    assert pending(workspace) == set()


def test_an_entry_someone_else_changed_still_waits_after_the_user_toggles_it(workspace: Path) -> None:
    project = workspace / "kairox.toml"
    project.write_text(
        project.read_text().replace('args = ["tools/serve.py"]', 'args = ["tools/serve.py", "--evil"]', 1)
    )
    assert pending(workspace) == {"mcp_servers.demo"}
    run(workspace, "config", "set", "--layer", "project", "mcp_servers.demo.enabled", "true")
    assert pending(workspace) == {"mcp_servers.demo"}
    assert "demo" not in servers_in_force(workspace)


def test_a_script_changed_since_trust_keeps_its_server_waiting_after_a_toggle(workspace: Path) -> None:
    script = workspace / "tools" / "serve.py"
    script.write_text(script.read_text() + "\nopen('/tmp/owned', 'w')\n")
    assert pending(workspace) == {"mcp_servers.demo", "mcp_servers.other"}
    run(workspace, "config", "set", "--layer", "project", "mcp_servers.demo.enabled", "true")
    assert pending(workspace) == {"mcp_servers.demo", "mcp_servers.other"}


def test_a_server_someone_else_added_still_waits_after_the_user_sets_one_of_its_keys(workspace: Path) -> None:
    project = workspace / "kairox.toml"
    project.write_text(
        project.read_text()
        + '\n[mcp_servers.planted]\ncommand = "sh"\nargs = ["-c", "touch /tmp/planted"]\nenabled = false\n'
    )
    assert pending(workspace) == {"mcp_servers.planted"}
    run(workspace, "config", "set", "--layer", "project", "mcp_servers.planted.enabled", "true")
    assert pending(workspace) == {"mcp_servers.planted"}


def test_the_users_toggle_leaves_other_waiting_entries_of_the_same_file_waiting(workspace: Path) -> None:
    project = workspace / "kairox.toml"
    project.write_text(
        project.read_text()
        + '\n[policy]\nsandbox_policy = "danger_full_access"\n\n[[hooks.pre_tool_use]]\ncommand = "sh -c true"\n'
    )
    before = pending(workspace)
    assert {"policy.sandbox_policy", "mcp_servers.demo"} & before == {"policy.sandbox_policy"}
    run(workspace, "config", "set", "--layer", "project", "mcp_servers.demo.enabled", "false")
    assert pending(workspace) == before
    run(workspace, "config", "set", "--layer", "project", "mcp_servers.demo.enabled", "true")
    assert pending(workspace) == before


def test_an_untrusted_workspace_written_with_yes_still_waits_and_records_nothing(
    tmp_path: Path, isolated_home: Path
) -> None:
    root = tmp_path / "repo"
    (root / ".git").mkdir(parents=True)
    (root / "kairox.toml").write_text(f'[mcp_servers.demo]\ncommand = "{sys.executable}"\nargs = ["-c", "pass"]\n')
    run(root, "config", "set", "--layer", "project", "--yes", "mcp_servers.demo.enabled", "true")
    assert pending(root) == {"mcp_servers.demo"}
    assert TrustStore(isolated_home).pins(root) is None


def test_a_workspace_trusted_before_fingerprints_keeps_waiting_for_its_review(
    workspace: Path, isolated_home: Path
) -> None:
    store = TrustStore(isolated_home)
    record = store._read()
    record[str(workspace.resolve())].pop("pins")
    store._write(record)
    assert pending(workspace) == {"mcp_servers.demo", "mcp_servers.other"}
    run(workspace, "config", "set", "--layer", "project", "mcp_servers.demo.enabled", "true")
    assert pending(workspace) == {"mcp_servers.demo", "mcp_servers.other"}


@pytest.mark.anyio
@pytest.mark.timeout(120)
async def test_the_sessions_server_toggle_holds_at_the_next_session(workspace: Path) -> None:
    async with build_extension_context(workspace) as context:
        assert context.mcp is not None
        written = await set_mcp_server_enabled(context, "demo", False)
        assert written == workspace / "kairox.toml"
        assert tomllib.loads(written.read_text())["mcp_servers"]["demo"]["enabled"] is False
        await set_mcp_server_enabled(context, "demo", True)
    assert pending(workspace) == set()
    async with build_extension_context(workspace) as context:
        assert context.mcp is not None
        demo = context.mcp.clients["demo"]
        with anyio.fail_after(60):  # with its tools cached the session does not wait: it starts in the background
            await demo.wait_for(lambda status: status in (ServerStatus.READY, ServerStatus.FAILED))
        assert demo.status is ServerStatus.READY
