"""Host Unix sockets stay out of reach of sandboxed commands (attack corpus): a socket is the authority of whatever
listens on it (docker runs ``-v /:/host`` as root, systemd starts units outside the sandbox), and connecting to
one needs no write access. Every socket bound to a path when a command starts is covered, wherever it lies: in a
folder that is neither temp nor the workspace, deep in a tree, in the workspace itself, in the temp folder, in
``/run``; with the network off and on, under ``workspace_write`` and ``read_only``, for ``shell.exec``, hook
commands and plugin command tools. Real bwrap, real servers (``tests/servers/unix_marker.py``) that write a
marker for every connection, as root and as an unprivileged user."""

import json
import os
import shlex
import shutil
import socket
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.helpers import as_user
from tests.plugins.conftest import make_plugin
from tests.registry._support import ScriptedApprover
from tests.security._sockets import PYTHON, HostSocket, outside_temp, place_for, probe, serve, stop, unreached
from tests.security._support import SHELL

from kairox.config import HooksConfig, KairoxConfig, PolicyConfig, SandboxPolicy
from kairox.config._models import HookConfig
from kairox.hooks import HookRegistry
from kairox.plugins import plugin_tool_providers, route_plugins
from kairox.plugins._discovery import discover_plugins
from kairox.policy import NonInteractiveApprover, PolicySettings
from kairox.registry import build_registry
from kairox.registry._registry import RegistrySettings
from kairox.sandbox import SandboxSettings
from kairox.sandbox._bwrap import bound_sockets
from kairox.tools import ToolCall

# --- root inside the sandbox, and an unprivileged user, through the real `kairox` command ------------------------


@pytest.fixture
def place(user: str) -> Iterator[Path]:
    with place_for(user, "kairox-hostsock-") as base:
        yield base


@pytest.mark.timeout(240)
@pytest.mark.parametrize("network", [False, True], ids=["network-off", "network-on"])
@pytest.mark.parametrize("mode", [SandboxPolicy.WORKSPACE_WRITE, SandboxPolicy.READ_ONLY])
def test_no_host_socket_is_reachable_from_shell_exec(
    place: Path, user: str, mode: SandboxPolicy, network: bool
) -> None:
    outside = outside_temp()
    folders = [outside]
    if os.geteuid() == 0:  # only root may make a folder in /run, which stays visible when the network is on
        folders.append(Path(tempfile.mkdtemp(prefix="kairox-hostsock-", dir="/run")))
        folders[-1].chmod(0o755)
        (folders[-1] / "resolv.txt").write_text("nameserver-file\n")
    servers: list[HostSocket] = []
    try:
        markers = place / "markers"
        servers = [
            serve(outside / "service.sock", markers),
            serve(outside / "a" / "b" / "c" / "deep.sock", markers),  # deeper than any folder walk goes
            serve(place / "ws" / "dev-server.sock", markers),  # bound by a process the user runs in the workspace
            serve(place / "scratch" / "tmux.sock", markers),  # the temp folder
            *[serve(folder / "agent.sock", markers) for folder in folders[1:]],
        ]
        env = {
            **os.environ,
            "KAIROX_HOME": str(place / "home"),
            "HOME": str(place),
            "KAIROX_SYSTEM_CONFIG": str(place / "no-system.toml"),
            "KAIROX_SANDBOX_POLICY": str(mode),
            "KAIROX_NETWORK_ACCESS": "true" if network else "false",
        }
        command = probe(servers) + "".join(f"; cat {f}/resolv.txt" for f in folders[1:])
        argv = [
            *as_user(user),
            sys.executable,
            "-m",
            "kairox",
            "tools",
            "call",
            "shell.exec",
            json.dumps({"command": command}),
        ]
        run = subprocess.run(argv, cwd=place / "ws", env=env, capture_output=True, text=True, timeout=120, check=False)

        said = run.stdout + run.stderr
        unreached(servers, said, user)
        # with the network on, /run stays visible (name resolution reads there) and only its sockets are covered
        assert said.count("nameserver-file") == (len(folders) - 1 if network else 0), said
    finally:
        stop(servers)
        for folder in folders:
            shutil.rmtree(folder, ignore_errors=True)


# --- the registry's shell.exec, hook commands and plugin command tools ------------------------------------------


def registry_settings(ws: Path, network: bool) -> RegistrySettings:
    config = PolicyConfig(sandbox_policy=SandboxPolicy.WORKSPACE_WRITE, network_access=network)
    policy = PolicySettings.from_config(config, workspace=ws, home=ws.parent / "home", temp_dir=ws.parent / "tmp")
    sandbox = SandboxSettings(
        mode=policy.sandbox, writable_roots=policy.writable_roots, network_access=policy.network_access
    )
    return RegistrySettings(policy=policy, sandbox=sandbox, spill_dir=ws.parent / "spill")


@pytest.fixture
def host_sockets(tmp_path: Path) -> Iterator[list[HostSocket]]:
    """Servers outside the temp folders and the workspace, and in the workspace (``tmp_path / "ws"``) and its
    repository."""
    outside = outside_temp()
    (tmp_path / "ws").mkdir()
    (tmp_path / "markers").mkdir()
    servers: list[HostSocket] = []
    try:
        servers += [
            serve(outside / "service.sock", tmp_path / "markers"),
            serve(tmp_path / "ws" / "dev.sock", tmp_path / "markers"),
            # in a folder bound back read-only (git's fsmonitor daemon listens there): covered after that bind
            serve(tmp_path / "ws" / ".git" / "fsmonitor--daemon.ipc", tmp_path / "markers"),
        ]
        yield servers
    finally:
        stop(servers)
        shutil.rmtree(outside, ignore_errors=True)


@pytest.mark.anyio
@pytest.mark.timeout(90)
@pytest.mark.parametrize("network", [False, True], ids=["network-off", "network-on"])
async def test_shell_exec_through_the_registry_reaches_none(
    tmp_path: Path, host_sockets: list[HostSocket], network: bool
) -> None:
    ws = tmp_path / "ws"
    registry = await build_registry(registry_settings(ws, network), approver=NonInteractiveApprover())

    result = await registry.call(ToolCall(name="shell.exec", arguments={"command": probe(host_sockets)}))

    unreached(host_sockets, result.text_content())


@pytest.mark.anyio
@pytest.mark.timeout(90)
@pytest.mark.parametrize("network", [False, True], ids=["network-off", "network-on"])
async def test_a_hook_command_reaches_none(tmp_path: Path, host_sockets: list[HostSocket], network: bool) -> None:
    ws = tmp_path / "ws"
    out = ws / "hook-out.txt"
    hooks = HooksConfig(pre_tool_use=[HookConfig(command=f"({probe(host_sockets)}) > {out} 2>&1; true")])
    sandbox = registry_settings(ws, network).sandbox
    registry = HookRegistry.from_config(hooks, workspace=ws, sandbox=sandbox)

    await registry.pre_tool_use(ToolCall(name="fs.read", arguments={"path": "x"}, call_id="c1"), SHELL)

    unreached(host_sockets, out.read_text())


_PEEK = """import json, socket, sys
json.load(sys.stdin)
said = []
for path in sys.argv[1:]:
    try:
        socket.socket(socket.AF_UNIX).connect(path)
        said.append("reached " + path)
    except OSError as exc:
        said.append("refused " + type(exc).__name__)
print(json.dumps({"said": said + ["probe-ran"]}))
"""


@pytest.mark.anyio
@pytest.mark.timeout(90)
@pytest.mark.parametrize("network", [False, True], ids=["network-off", "network-on"])
async def test_a_plugin_command_tool_reaches_none(
    tmp_path: Path, host_sockets: list[HostSocket], network: bool
) -> None:
    ws = tmp_path / "ws"
    paths = " ".join(str(s.path) for s in host_sockets)
    root = make_plugin(
        tmp_path / "plugins" / "kit",
        {
            "name": "kit",
            "tools": [
                {
                    "name": "peek",
                    "command": f"{PYTHON} ${{KAIROX_PLUGIN_ROOT}}/peek.py {paths}",
                    "inputSchema": {"type": "object"},
                }
            ],
        },
        manifest_dir=".kairox-plugin",
    )
    (root / "peek.py").write_text(_PEEK)
    registry = await build_registry(registry_settings(ws, network), approver=ScriptedApprover())
    routing = route_plugins(
        discover_plugins(
            KairoxConfig.model_validate({"plugins": {"paths": [str(root)]}}), home=tmp_path / "home"
        ).plugins
    )
    for provider in plugin_tool_providers(routing.tools, routing.permissions):
        await registry.add_provider(provider)

    result = await registry.call(ToolCall(name="kit__peek", arguments={}))

    assert not result.is_error, result.text_content()
    unreached(host_sockets, result.text_content())


# --- what stays possible, and the kernel's list ------------------------------------------------------------------


@pytest.mark.anyio
@pytest.mark.timeout(60)
async def test_a_socket_the_command_binds_itself_still_works(tmp_path: Path, host_sockets: list[HostSocket]) -> None:
    ws = tmp_path / "ws"
    registry = await build_registry(registry_settings(ws, False), approver=NonInteractiveApprover())
    code = (
        "import socket\n"
        "s = socket.socket(socket.AF_UNIX); s.bind('own.sock'); s.listen()\n"
        "c = socket.socket(socket.AF_UNIX); c.connect('own.sock'); c.sendall(b'hello-own-socket')\n"
        "print(s.accept()[0].recv(64).decode())\n"
    )

    result = await registry.call(ToolCall(name="shell.exec", arguments={"command": f"{PYTHON} -c {shlex.quote(code)}"}))

    assert result.text_content() == "exit code: 0\nhello-own-socket"


def test_the_kernels_list_gives_each_bound_socket_once_by_its_real_path(tmp_path: Path) -> None:
    real = tmp_path / "real"
    real.mkdir()
    (tmp_path / "link").symlink_to(real)
    listening = []
    for name in ("a.sock", "with space.sock"):
        sock = socket.socket(socket.AF_UNIX)
        sock.bind(str(tmp_path / "link" / name))
        sock.listen()
        listening.append(sock)
    peer = socket.socket(socket.AF_UNIX)
    peer.connect(str(real / "a.sock"))  # a second line for the same path
    (tmp_path / "file").write_text("")
    table = tmp_path / "unix"
    lines = [
        "Num       RefCount Protocol Flags    Type St Inode Path",
        *(line for line in Path("/proc/net/unix").read_text().splitlines()[1:] if str(tmp_path) in line),
        "0000000000000000: 00000002 00000000 00010000 0001 01 1001 @/tmp/.X11-unix/X0",  # abstract
        "0000000000000000: 00000003 00000000 00000000 0001 03 1002",  # unnamed
        "0000000000000000: 00000002 00000000 00010000 0001 01 1003 relative.sock",
        f"0000000000000000: 00000002 00000000 00010000 0001 01 1004 {tmp_path}/gone.sock",
        f"0000000000000000: 00000002 00000000 00010000 0001 01 1005 {tmp_path}/file",  # not a socket (any more)
    ]
    table.write_text("\n".join(lines) + "\n")
    try:
        assert bound_sockets(table) == [real / "a.sock", real / "with space.sock"]
        # a hidden folder's sockets are left out, also when listed by a path through a link
        assert bound_sockets(table, skip=[real]) == bound_sockets(table, skip=[tmp_path / "link"]) == []
        assert {real / "a.sock", real / "with space.sock"} <= set(bound_sockets())  # the kernel's own list
        assert bound_sockets(tmp_path / "no-such-table") == []
    finally:
        for sock in (*listening, peer):
            sock.close()
