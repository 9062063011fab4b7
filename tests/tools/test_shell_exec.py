"""shell.exec: timeout, output bounds, working directory and environment."""

import os
import signal
import time
from pathlib import Path

import pytest

from kairox.config import SandboxPolicy
from kairox.errors import ToolCallError
from kairox.sandbox import SandboxSettings
from kairox.tools import BuiltinSettings, BuiltinToolProvider, CallContext, ToolResult
from kairox.tools._builtin_shell import scrubbed_environment


async def run(ws: Path, arguments: dict[str, object], settings: BuiltinSettings | None = None) -> ToolResult:
    context = CallContext(
        call_id="t", workspace=ws, sandbox=SandboxSettings(mode=SandboxPolicy.WORKSPACE_WRITE, writable_roots=(ws,))
    )
    return await BuiltinToolProvider(settings).call_tool("shell.exec", arguments, context)


@pytest.mark.anyio
@pytest.mark.timeout(60)
async def test_timeout_kills_the_whole_command(tmp_path: Path) -> None:
    marker = tmp_path / "late"
    result = await run(tmp_path, {"command": f"sleep 30 && touch {marker}", "timeout_sec": 0.5})
    assert result == ToolResult.error(f"shell.exec: `sleep 30 && touch {marker}` timed out after 0.5s and was killed")
    time.sleep(0.2)
    assert not marker.exists()


@pytest.mark.anyio
@pytest.mark.timeout(60)
@pytest.mark.parametrize("mode", [SandboxPolicy.WORKSPACE_WRITE, SandboxPolicy.DANGER_FULL_ACCESS])
async def test_nothing_a_timed_out_command_started_keeps_running(tmp_path: Path, mode: SandboxPolicy) -> None:
    # a background loop that writes a heartbeat: if anything of the command survived, the file keeps changing
    command = "(while true; do date +%s%N > beat; sleep 0.05; done) & sleep 30"
    context = CallContext(
        call_id="t", workspace=tmp_path, sandbox=SandboxSettings(mode=mode, writable_roots=(tmp_path,))
    )
    result = await BuiltinToolProvider().call_tool("shell.exec", {"command": command, "timeout_sec": 1}, context)
    assert result.is_error and "timed out after 1s and was killed" in result.text_content()
    beat = tmp_path / "beat"
    assert beat.exists()
    first = beat.read_text()
    time.sleep(0.5)
    assert beat.read_text() == first


@pytest.mark.anyio
@pytest.mark.timeout(60)
async def test_a_command_that_leaves_a_daemon_holding_its_output_still_returns(tmp_path: Path) -> None:
    # without a sandbox a command may start a server of its own (setsid: outside the command's process group);
    # the call ends with the command, not when the server closes the output it inherited
    context = CallContext(
        call_id="t", workspace=tmp_path, sandbox=SandboxSettings(mode=SandboxPolicy.DANGER_FULL_ACCESS)
    )
    pid_file = tmp_path / "daemon.pid"
    arguments = {"command": f"setsid sleep 60 & echo $! > {pid_file}; echo started", "timeout_sec": 20}
    try:
        result = await BuiltinToolProvider().call_tool("shell.exec", arguments, context)
    finally:
        os.kill(int(pid_file.read_text()), signal.SIGKILL)
    assert result.text_content() == "exit code: 0\nstarted"
    assert result.structured == {
        "exit_code": 0,
        "stdout": "started\n",
        "stderr": "",
        "timed_out": False,
        "sandbox": "danger_full_access",
    }


@pytest.mark.anyio
@pytest.mark.timeout(60)
async def test_secrets_are_scrubbed_from_the_environment_unless_passed_through(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MY_API_KEY", "k1")
    monkeypatch.setenv("GITHUB_TOKEN", "t1")
    monkeypatch.setenv("DB_SECRET", "s1")
    monkeypatch.setenv("PLAIN_SETTING", "p1")
    command = 'echo "${MY_API_KEY:-none} ${GITHUB_TOKEN:-none} ${DB_SECRET:-none} ${PLAIN_SETTING:-none}"'
    scrubbed = await run(tmp_path, {"command": command})
    passed = await run(tmp_path, {"command": command}, BuiltinSettings(shell_env_passthrough=("GITHUB_TOKEN",)))
    assert scrubbed.text_content() == "exit code: 0\nnone none none p1"
    assert passed.text_content() == "exit code: 0\nnone t1 none p1"


def test_scrubbing_is_by_name() -> None:
    env = {"PATH": "/bin", "AWS_SECRET_ACCESS_KEY": "x", "api_key": "y", "HOME": "/h", "NPM_TOKEN": "z"}
    assert scrubbed_environment(env) == {"PATH": "/bin", "HOME": "/h"}


@pytest.mark.anyio
@pytest.mark.timeout(60)
async def test_working_directory_must_stay_inside_the_workspace(tmp_path: Path) -> None:
    (tmp_path / "ws" / "sub").mkdir(parents=True)
    ws = tmp_path / "ws"
    inside = await run(ws, {"command": "pwd", "cwd": "sub"})
    assert inside.text_content() == f"exit code: 0\n{ws / 'sub'}"
    with pytest.raises(ToolCallError) as caught:
        await run(ws, {"command": "pwd", "cwd": ".."})
    assert caught.value.reason == f"working directory {tmp_path} is outside the workspace {ws}"


@pytest.mark.anyio
@pytest.mark.timeout(60)
async def test_output_beyond_the_bound_is_counted_not_kept(tmp_path: Path) -> None:
    result = await run(
        tmp_path,
        {"command": "head -c 5000 /dev/zero | tr '\\0' a; echo oops >&2; exit 3"},
        BuiltinSettings(shell_output_limit=1000),
    )
    assert result.is_error
    assert (
        result.text_content() == "exit code: 3\n" + "a" * 1000 + "\n[stdout: 4000 more bytes not kept]\n[stderr]\noops"
    )
    assert result.structured == {
        "exit_code": 3,
        "stdout": "a" * 1000,
        "stderr": "oops\n",
        "timed_out": False,
        "sandbox": "workspace_write",
        "notes": ["[stdout: 4000 more bytes not kept]"],
    }


@pytest.mark.anyio
@pytest.mark.timeout(60)
async def test_command_sees_no_terminal_input(tmp_path: Path) -> None:
    result = await run(tmp_path, {"command": "cat; echo done"})
    assert result.text_content() == "exit code: 0\ndone"
