"""Host Unix sockets the user lets through on purpose (``policy.allow_unix_sockets``), and sockets that vanish while
a command starts. Only the named sockets are reached from the sandbox, also from inside a hidden folder (bound back
on top of its tmpfs); every other one stays covered; a project file of an untrusted workspace cannot name one; a
socket removed after the listing leaves no file behind and does not fail the command. Real bwrap, real servers
(``tests/servers/unix_marker.py``), the real ``kairox`` command, as root and as an unprivileged user."""

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.helpers import as_user, give_to
from tests.security._sockets import HostSocket, outside_temp, place_for, probe, serve, stop, unreached

from kairox.config import PolicyConfig, SandboxPolicy
from kairox.policy import Decision, DecisionSource, PolicyEngine, PolicySettings
from kairox.tools import BUILTIN_SPECS

SHELL = next(spec for spec in BUILTIN_SPECS if spec.name == "shell.exec")


@pytest.fixture
def place(user: str) -> Iterator[Path]:
    with place_for(user, "kairox-sockallow-") as base:
        yield base


def kairox(
    place: Path, user: str, *args: str, env: dict[str, str] | None = None, network: bool = False
) -> "subprocess.CompletedProcess[str]":
    """Run the real ``kairox`` in ``place / "ws"`` as ``user``."""
    environment = {
        **os.environ,
        "KAIROX_HOME": str(place / "home"),
        "HOME": str(place),
        "KAIROX_SYSTEM_CONFIG": str(place / "no-system.toml"),
        "KAIROX_SANDBOX_POLICY": "workspace_write",
        "KAIROX_NETWORK_ACCESS": "true" if network else "false",
        **(env or {}),
    }
    argv = [*as_user(user), sys.executable, "-m", "kairox", *args]
    return subprocess.run(
        argv, cwd=place / "ws", env=environment, capture_output=True, text=True, timeout=120, check=False
    )


def shell_exec(
    place: Path, user: str, command: str, *, env: dict[str, str] | None = None, network: bool = False
) -> str:
    """What ``shell.exec`` said, stdout and stderr together."""
    run = kairox(place, user, "tools", "call", "shell.exec", json.dumps({"command": command}), env=env, network=network)
    return run.stdout + run.stderr


def connections(server: HostSocket) -> list[str]:
    return server.marker.read_text().splitlines() if server.marker.exists() else []


def allow(file: Path, *paths: Path | str) -> None:
    file.write_text(
        "[policy]\nallow_unix_sockets = [" + ", ".join(json.dumps(str(p)) for p in paths) + "]\n", encoding="utf-8"
    )


def reached_once_from_the_sandbox(server: HostSocket, said: str, before: int = 0) -> None:
    """The sandboxed probe reached ``server``, and its marker holds that one connection more than ``before``."""
    assert f"reached {server.path}\n" in said, said
    for _ in range(400):  # the server writes after accepting: a bounded wait, no timing asserted
        if len(connections(server)) > before:
            break
        time.sleep(0.05)
    found = connections(server)
    assert len(found) == before + 1 and f"pid={os.getpid()} " not in found[-1], (found, said)


@pytest.mark.timeout(240)
@pytest.mark.parametrize("network", [False, True], ids=["network-off", "network-on"])
def test_only_the_allowed_sockets_are_reached_also_in_a_hidden_folder(place: Path, user: str, network: bool) -> None:
    outside, runtime = outside_temp(), outside_temp()  # runtime: $XDG_RUNTIME_DIR, a hidden folder
    folders = [outside, runtime]
    if os.geteuid() == 0:  # only root may make a folder in /run (hidden with the network off, walked with it on)
        folders.append(Path(tempfile.mkdtemp(prefix="kairox-sockallow-", dir="/run")))
        folders[-1].chmod(0o755)
    servers: list[HostSocket] = []
    try:
        markers = place / "markers"
        allowed = [serve(outside / "docker.sock", markers), serve(runtime / "podman" / "podman.sock", markers)]
        allowed += [serve(folder / "containerd.sock", markers) for folder in folders[2:]]
        others = [
            serve(outside / "other.sock", markers),  # beside an allowed one
            serve(runtime / "agent.sock", markers),  # in the same hidden folder as an allowed one
            serve(place / "ws" / "dev.sock", markers),
            *[serve(folder / "agent.sock", markers) for folder in folders[2:]],
        ]
        servers = allowed + others
        (outside / "link.sock").symlink_to(outside / "docker.sock")  # named by a link: the socket it leads to
        allow(
            place / "home" / "kairox.toml",
            outside / "link.sock",
            *[s.path for s in allowed[1:]],
            outside / "missing.sock",
        )
        command = f"{probe(allowed, tools=False)}; echo ====; {probe(others)}"

        said = shell_exec(place, user, command, env={"XDG_RUNTIME_DIR": str(runtime)}, network=network)

        assert "====" in said, said
        mine, theirs = said.split("====", 1)
        for server in allowed:
            reached_once_from_the_sandbox(server, mine)
        unreached(others, theirs, user)
    finally:
        stop(servers)
        for folder in folders:
            shutil.rmtree(folder, ignore_errors=True)


@pytest.mark.timeout(240)
def test_an_untrusted_project_cannot_allow_a_socket_until_it_is_trusted(place: Path, user: str) -> None:
    outside = outside_temp()
    servers: list[HostSocket] = []
    try:
        servers = [serve(outside / "docker.sock", place / "markers")]
        allow(place / "ws" / "kairox.toml", outside / "docker.sock")

        said = shell_exec(place, user, probe(servers))

        unreached(servers, said, user)
        trusted = kairox(place, user, "trust")
        assert trusted.returncode == 0 and "policy.allow_unix_sockets" in trusted.stdout, (
            trusted.stdout + trusted.stderr
        )
        reached_once_from_the_sandbox(servers[0], shell_exec(place, user, probe(servers, tools=False)), before=2)
    finally:
        stop(servers)
        shutil.rmtree(outside, ignore_errors=True)


# --- a socket removed between the listing and bwrap's start -------------------------------------------------------


_START = """import json, os, subprocess, sys
from pathlib import Path
from kairox.config import SandboxPolicy
from kairox.sandbox import HiddenPaths, SandboxSettings, check_sandbox
from kairox.sandbox._bwrap import sandboxed_argv

ws, mode, *gone = sys.argv[1:]

def remove_them():
    # the rules on reading are worked out after the sockets were listed: the sockets go away meanwhile
    for path in gone:
        os.unlink(path)
    return HiddenPaths()

settings = SandboxSettings(mode=SandboxPolicy(mode), writable_roots=(Path(ws),), hidden=remove_them)
argv = sandboxed_argv(["/bin/sh", "-c", "echo command-ran"], settings, Path(ws), bwrap=check_sandbox(settings))
run = subprocess.run(argv, cwd=ws, capture_output=True, text=True, timeout=60)
print(json.dumps([run.returncode, run.stdout, run.stderr]))
"""
"""Builds the sandbox of a command, with sockets removed between their listing and bwrap's start (by the
callback that works out the rules on reading, which runs in between), and runs it: as the user the command runs
as, who sees the same sockets as Kairox does."""


@pytest.mark.timeout(120)
@pytest.mark.parametrize("mode", [SandboxPolicy.WORKSPACE_WRITE, SandboxPolicy.READ_ONLY])
def test_a_socket_removed_after_the_listing_leaves_no_file_and_the_command_runs(
    place: Path, user: str, mode: SandboxPolicy
) -> None:
    outside = outside_temp()
    give_to(user, outside)  # the user removes the sockets, as their owner would
    ws = place / "ws"
    servers: list[HostSocket] = []
    try:
        servers = [serve(ws / "dev.sock", place / "markers"), serve(outside / "service.sock", place / "markers")]
        argv = [*as_user(user), sys.executable, "-c", _START, str(ws), str(mode), *(str(s.path) for s in servers)]

        run = subprocess.run(argv, capture_output=True, text=True, timeout=90, check=False)

        assert run.returncode == 0, run.stderr
        assert json.loads(run.stdout) == [0, "command-ran\n", ""]
        # bwrap made no mount point where the sockets were: nothing left in the workspace or outside it
        assert sorted(p.name for p in ws.iterdir()) == []
        assert sorted(p.name for p in outside.iterdir()) == []
    finally:
        stop(servers)
        shutil.rmtree(outside, ignore_errors=True)


# --- what the policy and doctor say --------------------------------------------------------------------------------


def test_the_decision_for_a_command_names_the_sockets_let_through(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    config = PolicyConfig(allow_unix_sockets=["~/.colima/default/docker.sock", "../run/podman.sock"])
    engine = PolicyEngine(
        PolicySettings.from_config(config, workspace=ws, home=tmp_path / "home", temp_dir=tmp_path / "tmp")
    )

    decision = engine.decide(SHELL, {"command": "docker ps"})

    let_through = f"{tmp_path}/home/.colima/default/docker.sock, {tmp_path}/run/podman.sock"
    reason = (
        "shell.exec runs in the workspace_write sandbox; host sockets "
        f"let through (policy.allow_unix_sockets): {let_through}"
    )
    assert decision == Decision.allow(reason, source=DecisionSource.MODE)
    full = PolicyConfig(allow_unix_sockets=["/var/run/docker.sock"], sandbox_policy=SandboxPolicy.DANGER_FULL_ACCESS)
    unsandboxed = PolicyEngine(
        PolicySettings.from_config(full, workspace=ws, home=tmp_path / "home", temp_dir=tmp_path / "tmp")
    )
    assert (
        unsandboxed.decide(SHELL, {"command": "docker ps"}).reason
        == "shell.exec runs without a sandbox (danger_full_access)"
    )


@pytest.mark.timeout(120)
def test_doctor_lists_the_sockets_let_through_and_which_are_sockets_now(place: Path, user: str) -> None:
    outside = outside_temp()
    servers: list[HostSocket] = []
    try:
        servers = [serve(outside / "docker.sock", place / "markers")]
        allow(place / "home" / "kairox.toml", outside / "docker.sock", outside / "missing.sock")

        report = json.loads(kairox(place, user, "doctor", "--json").stdout)
        text = kairox(place, user, "doctor").stdout

        assert report["sandbox"] == {
            "allow_unix_sockets": [
                {"path": str(outside / "docker.sock"), "socket": True},
                {"path": str(outside / "missing.sock"), "socket": False},
            ]
        }
        assert (
            "Host Unix sockets sandboxed commands may reach (policy.allow_unix_sockets):\n"
            f"  {outside}/docker.sock: let through\n"
            f"  {outside}/missing.sock: not a socket now, so nothing is let through\n"
        ) in text
    finally:
        stop(servers)
        shutil.rmtree(outside, ignore_errors=True)
