"""Y6, Y7: what a sandboxed command cannot do, also as root: protected paths at any depth, capabilities, sockets."""

import json
import os
import shlex
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.helpers import NOBODY, as_user

from kairox.config import SandboxPolicy
from kairox.sandbox import SandboxSettings
from kairox.tools import BuiltinToolProvider, CallContext, ToolResult

PROBE_PYTHON = shutil.which("python3", path="/usr/bin:/bin") or sys.executable
"""A Python both users can run inside the sandbox (a virtualenv under /root is private to root)."""


async def shell(ws: Path, command: str, *roots: Path) -> ToolResult:
    settings = SandboxSettings(mode=SandboxPolicy.WORKSPACE_WRITE, writable_roots=(ws, *roots))
    context = CallContext(call_id="t", workspace=ws, sandbox=settings)
    return await BuiltinToolProvider().call_tool("shell.exec", {"command": command}, context)


@pytest.mark.anyio
@pytest.mark.timeout(60)
async def test_protected_paths_stay_read_only_at_any_depth_under_every_writable_root(tmp_path: Path) -> None:
    ws, other = tmp_path / "ws", tmp_path / "other"
    files = {
        ws / "services" / "api" / "kairox.toml": "[policy]\n",
        ws / "services" / "api" / ".mcp.json": "{}\n",
        ws / "vendor" / "tool" / ".claude" / "settings.json": "{}\n",
        ws / "pkg" / ".kairox" / "kairox.local.toml": "\n",
        other / "plugin" / ".claude-plugin" / "plugin.json": '{"name": "p"}\n',
        other / "plugin" / "hooks" / "hooks.json": "{}\n",
        other / "project" / ".agents" / "skills" / "x" / "SKILL.md": "---\nname: x\n---\n",
    }
    for path, text in files.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    attack = (
        "; ".join(f"echo evil >> {path}; rm -f {path}" for path in files)
        + "; echo ok > ws-file; echo ok > ../other/other-file"
    )
    result = await shell(ws, attack, other)
    assert {path: path.read_text() for path in files} == files
    assert (ws / "ws-file").read_text() == (other / "other-file").read_text() == "ok\n"
    assert "Read-only file system" in result.text_content()


@pytest.mark.anyio
@pytest.mark.timeout(60)
async def test_configuration_a_command_creates_is_reported(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    result = await shell(
        ws, "mkdir -p sub/.kairox && echo x > sub/kairox.toml && echo '{}' > .mcp.json && echo plain > notes.txt"
    )
    created = [str(ws / ".mcp.json"), str(ws / "sub" / ".kairox"), str(ws / "sub" / "kairox.toml")]
    assert result.structured is not None
    assert {k: v for k, v in result.structured.items() if k != "notes"} == {
        "exit_code": 0,
        "stdout": "",
        "stderr": "",
        "timed_out": False,
        "sandbox": "workspace_write",
        "created_configuration": created,
    }
    assert result.text_content().endswith(result.structured["notes"][-1])
    assert result.text_content().endswith(
        f"[the command created project configuration: {', '.join(created)}; "
        "Kairox does not act on it until the user reviews it with `kairox trust`]"
    )


# --- root inside the sandbox, and an unprivileged user, through the real `kairox` command ---------------------


@pytest.fixture
def place(user: str) -> Iterator[Path]:
    """A folder both users can reach (pytest's own are private to root): workspace and Kairox home in /tmp."""
    base = Path(tempfile.mkdtemp(prefix="kairox-confine-", dir="/tmp"))
    base.chmod(0o755)
    (base / "ws" / ".git").mkdir(parents=True)
    home = base / "home"
    home.mkdir()
    (home / "trusted_workspaces.json").write_text('{"workspaces": {}}')
    (base / "scratch").mkdir()
    if user == "unprivileged" and os.geteuid() == 0:
        for path in (base / "ws", base / "ws" / ".git", base / "scratch", home, home / "trusted_workspaces.json"):
            os.chown(path, NOBODY, NOBODY)
    try:
        yield base
    finally:
        shutil.rmtree(base, ignore_errors=True)


def run_shell(base: Path, user: str, command: str) -> subprocess.CompletedProcess[str]:
    """``kairox tools call shell.exec`` in the workspace, as ``user`` (the Kairox home lies in the temp root)."""
    prefix = as_user(user)
    env = {
        **os.environ,
        "KAIROX_HOME": str(base / "home"),
        "KAIROX_SANDBOX_POLICY": "workspace_write",
        "HOME": str(base),
        "KAIROX_SYSTEM_CONFIG": str(base / "no-system.toml"),
    }
    argv = [*prefix, sys.executable, "-m", "kairox", "tools", "call", "shell.exec", json.dumps({"command": command})]
    return subprocess.run(argv, cwd=base / "ws", env=env, capture_output=True, text=True, timeout=120, check=False)


@pytest.mark.timeout(120)
def test_root_cannot_remount_or_mount_inside_the_sandbox(place: Path, user: str) -> None:
    probe = Path("/etc/kairox-remount-probe")
    assert not probe.exists(), f"{probe} exists before the test; remove it"
    try:
        run = run_shell(
            place,
            user,
            "mount -o remount,rw / && echo remounted; mount -t tmpfs "
            f"none {place} && echo mounted; touch {probe}; id -u",
        )
    finally:
        created = probe.exists()
        probe.unlink(missing_ok=True)  # a sandbox that failed must not leave the file behind
    said = run.stdout + run.stderr
    assert "remounted" not in said and "mounted" not in said
    assert not created
    assert f"\n{0 if user == 'root' else NOBODY}\n" in said  # it ran, as that user


@pytest.mark.timeout(120)
def test_root_cannot_chown_or_open_raw_sockets_inside_the_sandbox(place: Path, user: str) -> None:
    outside = place / "outside.txt"
    outside.write_text("x")
    before = outside.stat()
    raw = (
        f"{PROBE_PYTHON} -c 'import socket; socket.socket(socket.AF_INET, "
        'socket.SOCK_RAW, socket.IPPROTO_ICMP); print("raw-open")\''
    )
    run = run_shell(place, user, f"chown 4242:4242 {outside} || echo chown-refused; {raw}")
    said = run.stdout + run.stderr
    after = outside.stat()
    assert (after.st_uid, after.st_gid) == (before.st_uid, before.st_gid)
    assert "chown-refused" in said
    assert "raw-open" not in said
    assert "PermissionError: [Errno 1] Operation not permitted" in said, said


@pytest.mark.timeout(120)
def test_the_kairox_home_and_trust_store_stay_read_only_inside_the_temp_root(place: Path, user: str) -> None:
    home = place / "home"
    run = run_shell(
        place,
        user,
        f'echo \'{{"workspaces": {{"/": {{}}}}}}\' > {home}/trusted_workspaces.json; mkdir {home}/plugins; '
        f"echo '[policy]' > {home}/kairox.toml; touch {place}/scratch/temp-is-writable",
    )
    assert (home / "trusted_workspaces.json").read_text() == '{"workspaces": {}}'
    assert sorted(p.name for p in home.iterdir()) == ["trusted_workspaces.json"]
    # the temp folder itself stays writable: only the home inside it is kept read-only
    assert (place / "scratch" / "temp-is-writable").exists(), run.stdout + run.stderr


class _SocketServer:
    """A host Unix socket (like docker.sock) that records every connection."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.connections = 0
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.bind(str(path))
        path.chmod(0o777)
        self.sock.listen()
        self.sock.settimeout(0.2)
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        while not self.stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            self.connections += 1
            conn.close()

    def close(self) -> None:
        self.stop.set()
        self.thread.join(5)
        while True:  # connections still waiting in the backlog count too
            try:
                self.sock.settimeout(0)
                self.sock.accept()[0].close()
                self.connections += 1
            except OSError:
                break
        self.sock.close()
        self.path.unlink(missing_ok=True)


@pytest.mark.timeout(180)
def test_host_unix_sockets_are_out_of_reach_with_the_network_off(place: Path, user: str) -> None:
    folders = [Path(tempfile.mkdtemp(prefix="kairox-sock-", dir="/tmp"))]
    if os.geteuid() == 0 and Path("/run").is_dir():
        folders.append(Path(tempfile.mkdtemp(prefix="kairox-sock-", dir="/run")))
    for folder in folders:
        folder.chmod(0o755)
    servers = [_SocketServer(folder / "agent.sock") for folder in folders]
    code = "; ".join(f"socket.socket(socket.AF_UNIX).connect({str(s.path)!r}); print('reached')" for s in servers)
    connect = f"{PROBE_PYTHON} -c {shlex.quote('import socket; ' + code)}"
    try:
        sandboxed = run_shell(place, user, connect)
        said = sandboxed.stdout + sandboxed.stderr
        assert "reached" not in said
        assert "ConnectionRefusedError" in said or "FileNotFoundError" in said, said
        for server in servers:
            server.close()  # after the accept loop has ended, every connection made is counted
        assert [s.connections for s in servers] == [0] * len(servers)
        servers = [_SocketServer(folder / "agent.sock") for folder in folders]
        # the same probe outside the sandbox, as the same user, reaches them: the probe itself works
        unconfined = subprocess.run(
            [*as_user(user), PROBE_PYTHON, "-c", "import socket; " + code], capture_output=True, text=True, timeout=60
        )
        assert unconfined.stdout.count("reached") == len(servers), unconfined.stdout + unconfined.stderr
    finally:
        for server in servers:
            server.close()
        for folder in folders:
            shutil.rmtree(folder, ignore_errors=True)
