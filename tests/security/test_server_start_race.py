"""A confined MCP server whose sandbox could not be set up because of a race starts once more with fresh masks; a
genuine refusal is reported with what was refused (issue 29).

The race, provoked for real: a file the rules on reading hide lies outside the writable roots (read-only inside
the sandbox), and it is deleted after the read mask listed it and before bwrap mounts ``/dev/null`` over it;
bwrap then cannot make the mount point and stops before the server runs. The second start works the mask out
again (the file is no longer there to hide) and the server comes up. A refusal that is no race (the server
writes where its profile forbids) is not retried, and the failure names the path and the setting that allows it.
"""

import shutil
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.security._sockets import outside_temp

from kairox.config import McpServerConfig, SandboxPolicy
from kairox.errors import SandboxUnavailableError
from kairox.events import RecordingSink
from kairox.mcp import McpServerFailed, McpServerManager, McpServerReady, McpServerStarting
from kairox.policy import Rule, read_mask
from kairox.sandbox import HiddenPaths, SandboxSettings, ServerConfinement, check_sandbox, server_profile

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(120)]

LEAN = Path(__file__).resolve().parents[1] / "servers" / "lean_server.py"


@pytest.fixture
def outside() -> Iterator[Path]:
    folder = outside_temp()
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture(autouse=True)
def _needs_bwrap() -> None:
    try:
        check_sandbox(SandboxSettings(mode=SandboxPolicy.WORKSPACE_WRITE, writable_roots=()))
    except SandboxUnavailableError as exc:  # no sandbox on this machine: nothing to race
        pytest.skip(f"no sandbox here: {exc}")


def _manager(
    ws: Path, home: Path, sandbox: SandboxSettings, config: McpServerConfig, events: RecordingSink
) -> McpServerManager:
    def confine(name: str, entry: McpServerConfig) -> ServerConfinement:
        profile = server_profile(
            "mcp_servers", name, entry, layer="project", where=None, base_dir=ws, workspace=ws, home=home
        )
        return ServerConfinement(profile=profile, sandbox=sandbox, home=home / "kairox", workspace=ws)

    return McpServerManager({"lean": config}, workspace=ws, home=home / "kairox", events=events, confine=confine)


async def test_a_mask_that_goes_stale_before_the_spawn_is_worked_out_again(tmp_path: Path, outside: Path) -> None:
    ws, home = tmp_path / "ws", tmp_path / "home"
    ws.mkdir()
    home.mkdir()
    secret = outside / "secret.txt"
    secret.write_text("the secret\n")
    mask = read_mask((Rule(action="deny", pattern=f"fs.read({secret})"),), workspace=ws, home=home, roots=(ws,))
    assert mask is not None
    worked: list[HiddenPaths] = []

    def hidden() -> HiddenPaths:
        found = mask()
        worked.append(found)
        if len(worked) == 1:
            secret.unlink()  # after the mask listed it, before bwrap covers it
        return found

    sandbox = SandboxSettings(mode=SandboxPolicy.WORKSPACE_WRITE, writable_roots=(ws,), hidden=hidden)
    events = RecordingSink()
    config = McpServerConfig(command=sys.executable, args=[str(LEAN)])
    async with _manager(ws, home, sandbox, config, events) as manager:
        states = {s.name: s for s in manager.states()}
        assert str(states["lean"].status) == "ready", states["lean"]
        assert manager.clients["lean"].confinement_state is not None
        assert manager.clients["lean"].confinement_state["confined"] is True
    # the first mask named the file, the second (after the race) no longer does
    assert secret in worked[0].files
    assert len(worked) == 2 and secret not in worked[1].files
    starts = [e for e in events.events if isinstance(e, McpServerStarting) and e.server == "lean"]
    failures = [e for e in events.events if isinstance(e, McpServerFailed) and e.server == "lean"]
    assert [s.attempt for s in starts] == [0, 1]
    assert len(failures) == 1 and failures[0].will_restart
    assert str(secret) in failures[0].stderr_tail and "bwrap" in failures[0].stderr_tail
    assert "masks worked out afresh" in failures[0].reason
    assert any(isinstance(e, McpServerReady) and e.server == "lean" for e in events.events)
    assert not secret.exists()  # bwrap made no mount point on the host either


async def test_a_genuine_refusal_is_not_retried_and_names_what_was_refused(tmp_path: Path, outside: Path) -> None:
    ws, home = tmp_path / "ws", tmp_path / "home"
    ws.mkdir()
    home.mkdir()
    target = outside / "written-by-the-server.txt"
    script = ws / "writes_outside.py"
    script.write_text(f"open({str(target)!r}, 'w').write('escaped')\n")
    sandbox = SandboxSettings(mode=SandboxPolicy.WORKSPACE_WRITE, writable_roots=(ws,))
    events = RecordingSink()
    config = McpServerConfig(command=sys.executable, args=[str(script)])
    async with _manager(ws, home, sandbox, config, events) as manager:
        state = {s.name: s for s in manager.states()}["lean"]
        assert str(state.status) == "failed"
    assert not target.exists()
    # nothing raced: no start again with fresh masks (a second start may be the classic handshake tried after the
    # 2026 probe, which a server that exits at once gets anyway)
    failures = [e for e in events.events if isinstance(e, McpServerFailed) and e.server == "lean"]
    assert [f.will_restart for f in failures] == [False]
    assert "afresh" not in (failures[0].reason or "")
    reason = failures[0].reason
    assert "refused a write" in reason and str(target) in reason, reason
    assert "mcp_servers.lean.writable_roots" in reason, reason


async def test_a_language_server_that_raced_the_sandbox_starts_once_more(tmp_path: Path, outside: Path) -> None:
    from kairox.config import LspServerConfig
    from kairox.lsp import LspServerFailed, LspServerLifecycle, LspServerRunning, LspServerStarting

    ws, home = tmp_path / "ws", tmp_path / "home"
    ws.mkdir()
    home.mkdir()
    secret = outside / "secret.txt"
    secret.write_text("the secret\n")
    mask = read_mask((Rule(action="deny", pattern=f"fs.read({secret})"),), workspace=ws, home=home, roots=(ws,))
    assert mask is not None
    worked: list[HiddenPaths] = []

    def hidden() -> HiddenPaths:
        found = mask()
        worked.append(found)
        if len(worked) == 1:
            secret.unlink()  # after the mask listed it, before bwrap covers it
        return found

    sandbox = SandboxSettings(mode=SandboxPolicy.WORKSPACE_WRITE, writable_roots=(ws,), hidden=hidden)
    busy = Path(__file__).resolve().parents[1] / "lsp" / "servers" / "busy_server.py"
    config = LspServerConfig(command=sys.executable, args=[str(busy)], file_patterns=["*.py"])
    profile = server_profile(
        "lsp_servers", "busy", config, layer="project", where=None, base_dir=ws, workspace=ws, home=home
    )
    confinement = ServerConfinement(profile=profile, sandbox=sandbox, home=home / "kairox", workspace=ws)
    events = RecordingSink()
    async with LspServerLifecycle("busy", config, workspace=ws, events=events, confinement=confinement) as server:
        client = await server.ensure_running()
        assert client.alive
    assert secret in worked[0].files and len(worked) == 2 and secret not in worked[1].files
    kinds = [type(e) for e in events.events if type(e) in (LspServerStarting, LspServerFailed, LspServerRunning)]
    assert kinds[:3] == [LspServerStarting, LspServerFailed, LspServerStarting] and LspServerRunning in kinds
    failed = next(e for e in events.events if isinstance(e, LspServerFailed))
    assert str(secret) in failed.stderr_tail
