"""shell.exec under real bubblewrap: what the OS lets a command touch."""

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest

from kairox.config import SandboxPolicy
from kairox.errors import SandboxUnavailableError
from kairox.sandbox import SandboxSettings, check_sandbox
from kairox.sandbox._bwrap import sandboxed_argv
from kairox.tools import BuiltinToolProvider, CallContext, ToolResult

PROBE = Path("/etc/kairox-probe")


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    workspace = tmp_path / "ws"
    (workspace / ".git").mkdir(parents=True)
    (workspace / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    return workspace


@pytest.fixture
def no_probe() -> Iterator[None]:
    assert not PROBE.exists(), f"{PROBE} exists before the test; remove it"
    yield
    if PROBE.exists():  # the sandbox failed: do not leave the file behind
        PROBE.unlink()


async def shell(ws: Path, command: str, mode: SandboxPolicy, *, network: bool = False) -> ToolResult:
    settings = SandboxSettings(mode=mode, writable_roots=(ws,), network_access=network)
    context = CallContext(call_id="t", workspace=ws, sandbox=settings)
    return await BuiltinToolProvider().call_tool("shell.exec", {"command": command}, context)


@pytest.mark.anyio
@pytest.mark.timeout(60)
async def test_workspace_write_lets_the_workspace_be_written_but_not_etc(ws: Path, no_probe: None) -> None:
    result = await shell(ws, "touch /etc/kairox-probe; touch ./inside", SandboxPolicy.WORKSPACE_WRITE)
    assert not PROBE.exists()
    assert (ws / "inside").exists()
    assert "Read-only file system" in result.text_content()


@pytest.mark.anyio
@pytest.mark.timeout(60)
async def test_read_only_writes_nothing(ws: Path, no_probe: None) -> None:
    result = await shell(ws, "touch /etc/kairox-probe; touch ./inside", SandboxPolicy.READ_ONLY)
    assert not PROBE.exists()
    assert not (ws / "inside").exists()
    assert result.is_error
    assert result.structured is not None
    assert (result.structured["exit_code"], result.structured["sandbox"], result.structured["stdout"]) == (
        1,
        "read_only",
        "",
    )
    assert "Read-only file system" in result.structured["stderr"]


@pytest.mark.anyio
@pytest.mark.timeout(60)
async def test_git_folder_stays_read_only_inside_a_writable_workspace(ws: Path) -> None:
    await shell(ws, "echo evil > .git/HEAD; touch .git/new; echo ok > file", SandboxPolicy.WORKSPACE_WRITE)
    assert (ws / ".git" / "HEAD").read_text() == "ref: refs/heads/main\n"
    assert not (ws / ".git" / "new").exists()
    assert (ws / "file").read_text() == "ok\n"


@pytest.mark.anyio
@pytest.mark.timeout(60)
async def test_the_project_configuration_stays_read_only_inside_a_writable_workspace(ws: Path) -> None:
    # a command must not give later sessions of a trusted workspace more authority than this one has
    (ws / "kairox.toml").write_text('[policy]\nsandbox_policy = "workspace_write"\n')
    (ws / ".mcp.json").write_text('{"mcpServers": {}}\n')
    result = await shell(
        ws,
        "echo evil >> kairox.toml; echo evil > .mcp.json; rm -f kairox.toml; echo ok > file",
        SandboxPolicy.WORKSPACE_WRITE,
    )
    assert (ws / "kairox.toml").read_text() == '[policy]\nsandbox_policy = "workspace_write"\n'
    assert (ws / ".mcp.json").read_text() == '{"mcpServers": {}}\n'
    assert (ws / "file").read_text() == "ok\n"
    assert "Read-only file system" in result.text_content()


@pytest.mark.anyio
@pytest.mark.timeout(60)
async def test_danger_full_access_runs_without_a_sandbox(ws: Path, tmp_path: Path) -> None:
    await shell(ws, f"touch {tmp_path / 'outside'}", SandboxPolicy.DANGER_FULL_ACCESS)
    assert (tmp_path / "outside").exists()


@pytest.mark.anyio
@pytest.mark.timeout(60)
async def test_network_is_unshared_unless_network_access(ws: Path) -> None:
    async def greet(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.write(b"hello-from-host\n")
        await writer.drain()
        writer.close()

    server = await asyncio.start_server(greet, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    command = f"exec 3<>/dev/tcp/127.0.0.1/{port} && head -n1 <&3"
    try:
        async with server:
            closed = await shell(ws, command, SandboxPolicy.WORKSPACE_WRITE)
            opened = await shell(ws, command, SandboxPolicy.WORKSPACE_WRITE, network=True)
    finally:
        server.close()
    assert closed.is_error
    assert "hello-from-host" not in closed.text_content()
    assert opened.text_content() == "exit code: 0\nhello-from-host"


def test_argv_binds_roots_and_keeps_protected_paths_read_only_at_any_depth(
    ws: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import kairox.sandbox._bwrap as sandbox

    monkeypatch.setattr(sandbox, "socket_folders", lambda: [])
    monkeypatch.setattr(sandbox, "sockets_under", lambda folder: [])
    monkeypatch.setattr(sandbox, "bound_sockets", lambda skip=(): [])
    (ws / ".kairox").mkdir()
    (ws / "pkg" / "deep" / ".claude").mkdir(parents=True)
    (ws / "pkg" / "deep" / "kairox.toml").write_text("")
    other = tmp_path / "other"
    (other / "plugin" / ".claude-plugin").mkdir(parents=True)
    (other / "plugin" / "hooks").mkdir()
    (other / "plugin" / "hooks" / "hooks.json").write_text("{}")
    (other / "elsewhere.mcp.json").write_text("{}")  # only the exact names are protected
    settings = SandboxSettings(mode=SandboxPolicy.WORKSPACE_WRITE, writable_roots=(other,))
    argv = sandboxed_argv(["bash", "-c", "true"], settings, ws, bwrap="/usr/bin/bwrap")
    o, w = str(other), str(ws)

    def ro(path: str) -> list[str]:
        return ["--ro-bind-try", path, path]

    assert argv == [
        "/usr/bin/bwrap",
        "--ro-bind",
        "/",
        "/",
        "--dev",
        "/dev",
        "--proc",
        "/proc",
        "--bind",
        o,
        o,
        "--bind",
        w,
        w,
        *ro(f"{o}/plugin/.claude-plugin"),
        *ro(f"{o}/plugin/hooks/hooks.json"),
        *ro(f"{w}/.git"),
        *ro(f"{w}/.kairox"),
        *ro(f"{w}/pkg/deep/.claude"),
        *ro(f"{w}/pkg/deep/kairox.toml"),
        "--unshare-net",
        "--cap-drop",
        "ALL",
        "--unshare-pid",
        "--die-with-parent",
        "--new-session",
        "--chdir",
        w,
        "--",
        "bash",
        "-c",
        "true",
    ]


def test_danger_full_access_runs_the_command_unconfined_under_the_guard(ws: Path) -> None:
    import subprocess

    from kairox._rpc._guarded import GUARD_SCRIPT

    settings = SandboxSettings(mode=SandboxPolicy.DANGER_FULL_ACCESS)
    argv = sandboxed_argv(
        ["sh", "-c", "touch /tmp/kairox-unconfined-$$ && rm /tmp/kairox-unconfined-$$ && exit 7"], settings, ws
    )
    assert str(GUARD_SCRIPT) in argv and not any("bwrap" in part for part in argv)
    assert argv[-4:-3] == ["--"]
    assert subprocess.run(argv, timeout=30).returncode == 7
    assert check_sandbox(settings) is None


def test_missing_bwrap_fails_closed_with_how_to_install_or_opt_out(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(SandboxUnavailableError) as caught:
        check_sandbox(SandboxSettings(mode=SandboxPolicy.WORKSPACE_WRITE))
    assert caught.value.message == "the workspace_write sandbox needs bubblewrap (bwrap), which is not installed"
    assert "apt-get install bubblewrap" in str(caught.value.hint)
    assert 'policy.sandbox_policy = "danger_full_access"' in str(caught.value.hint)


def test_bwrap_that_cannot_start_fails_closed(tmp_path: Path) -> None:
    broken = tmp_path / "bwrap"
    broken.write_text("#!/bin/sh\necho 'bwrap: No permissions to creating new namespace' >&2\nexit 1\n")
    broken.chmod(0o755)
    with pytest.raises(SandboxUnavailableError) as caught:
        check_sandbox(SandboxSettings(mode=SandboxPolicy.READ_ONLY), bwrap=str(broken))
    assert (
        caught.value.message
        == f"bubblewrap ({broken}) cannot create the read_only sandbox: bwrap: No permissions to creating new namespace"
    )


@pytest.mark.anyio
@pytest.mark.timeout(60)
async def test_shell_exec_without_bwrap_refuses_to_run(
    ws: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    with pytest.raises(SandboxUnavailableError):
        await shell(ws, "touch ./inside", SandboxPolicy.WORKSPACE_WRITE)
    assert not (ws / "inside").exists()
