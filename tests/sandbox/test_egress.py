"""``[sandbox] network = "allowlist"`` (Y14): a sandbox reaches the names of its list through the session's proxy,
and nothing else. Real curl, Python and Node inside the real sandbox, against a listener on 127.0.0.1: by the name
``localhost`` they reach it, by the address ``127.0.0.1`` they get a 403 that says why, and a program that ignores
the proxy variables gets no network at all. As root and as an unprivileged user; for ``shell.exec``, hook commands,
plugin command tools, confined servers and debug adapters; each refusal an event, counted by doctor, audited by
the gateway."""

import json
import os
import shlex
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest
from tests.plugins.conftest import make_plugin
from tests.registry._support import ScriptedApprover
from tests.sandbox._egress import PYTHON, allowlist_home, listener, needed, shell_exec
from tests.security._sockets import place_for
from tests.security._support import SHELL

from kairox._util._domains import allowing, host_name
from kairox.config import HooksConfig, KairoxConfig, McpServerConfig, SandboxPolicy
from kairox.config._models import HookConfig
from kairox.gateway import GatewayOptions
from kairox.gateway._server import Gateway, GatewayEvents
from kairox.hooks import HookRegistry
from kairox.plugins import plugin_tool_providers, route_plugins
from kairox.plugins._discovery import discover_plugins
from kairox.policy import PolicySettings
from kairox.registry import build_registry
from kairox.registry._registry import RegistrySettings
from kairox.runtime import RuntimeOptions, build_extension_context, doctor_lines, doctor_report
from kairox.sandbox import (
    EgressProxy,
    EgressRefused,
    SandboxSettings,
    ServerConfinement,
    adapter_sandbox,
    adapter_settings,
    confine_server,
    sandboxed_argv,
    server_profile,
)
from kairox.tools import ToolCall
from kairox.tui._servers import TraceEntry, describe

PROBE = """import socket, sys, urllib.error, urllib.request
port = sys.argv[1]
print(urllib.request.urlopen(f"http://localhost:{port}/py-ok", timeout=20).read().decode().strip())
try:
    urllib.request.urlopen(f"http://127.0.0.1:{port}/py-address", timeout=20)
except urllib.error.HTTPError as exc:
    print("python refused", exc.code, exc.read().decode().splitlines()[0])
try:
    socket.create_connection(("127.0.0.1", int(port)), timeout=5)
    print("raw reached")
except OSError as exc:
    print("raw socket:", type(exc).__name__)
"""
NODE_PROBE = """const port = process.argv[1];
fetch(`http://localhost:${port}/node-ok`).then(r => r.text()).then(t => console.log(t.trim()),
    e => console.log("node failed", String(e.cause || e)))
  .then(() => fetch(`http://127.0.0.1:${port}/node-address`))
  .then(r => console.log("node reached", r.status), e => console.log("node refused:", String(e.cause || e)));
"""


def probe_command(port: int) -> str:
    curl, node = needed("curl"), needed("node")
    url = f"localhost:{port}"
    return (
        f"{curl} -sS -m 20 http://{url}/curl-ok; "
        f"{curl} -sS -m 20 http://127.0.0.1:{port}/curl-address | head -1; "
        f"{curl} -sS -m 20 -p http://{url}/curl-tunnel; "  # CONNECT, as for https
        f"{curl} -sS -m 10 --noproxy '*' http://{url}/curl-direct; echo curl-direct=$?; "
        f"{PYTHON} -c {shlex.quote(PROBE)} {port}; "
        f"{node} -e {shlex.quote(NODE_PROBE)} {port} 2>/dev/null; "
        "echo probe-ran"
    )


@pytest.fixture
def place(user: str) -> Iterator[Path]:
    with place_for(user, "kairox-egress-") as base:
        yield base


@pytest.mark.timeout(300)
def test_curl_python_and_node_reach_localhost_by_name_and_nothing_by_address(place: Path, user: str) -> None:
    allowlist_home(place / "home", ["localhost"], user)
    with listener() as server:
        said, events = shell_exec(place, user, probe_command(server.port))

    port = server.port
    assert f"seen /curl-ok host=localhost:{port}" in said
    assert f"seen /curl-tunnel host=localhost:{port}" in said
    assert f"seen /py-ok host=localhost:{port}" in said
    assert f"seen /node-ok host=localhost:{port}" in said
    assert "Kairox sandbox: 127.0.0.1 is an address or no host name; the list names hosts." in said  # curl's body
    assert "python refused 403 Kairox sandbox: 127.0.0.1 is an address" in said
    assert "node refused:" in said  # Node tunnels every request: a refused CONNECT fails the fetch
    # what ignores the proxy variables has no network: nothing listens on the sandbox's own loopback
    assert "curl-direct=7" in said and "raw socket: ConnectionRefusedError" in said
    assert sorted(server.paths()) == ["/curl-ok", "/curl-tunnel", "/node-ok", "/py-ok"]
    refused = [e for e in events if e["event"] == "EgressRefused"]
    assert [(e["host"], e["port"]) for e in refused] == [("127.0.0.1", port)] * 3, refused


@pytest.mark.timeout(120)
def test_a_name_off_the_list_is_refused_with_the_list_in_the_answer(place: Path, user: str) -> None:
    allowlist_home(place / "home", ["pypi.org", "*.example.org"], user)
    with listener() as server:
        said, events = shell_exec(
            place, user, f"{needed('curl')} -sS -m 20 http://localhost:{server.port}/x; echo probe-ran"
        )

    assert server.requests == []
    assert "Kairox sandbox: localhost is not on the allowed list." in said
    assert "only these names, through Kairox's proxy: pypi.org, *.example.org." in said
    assert [e["reason"] for e in events if e["event"] == "EgressRefused"] == ["localhost is not on the allowed list"]


# --- every other process Kairox confines -------------------------------------------------------------------------


def settings_for(ws: Path, proxy: EgressProxy, domains: tuple[str, ...] = ("localhost",)) -> RegistrySettings:
    policy = PolicySettings(workspace=ws, writable_roots=(ws,))
    sandbox = SandboxSettings(writable_roots=(ws,), allowed_domains=domains, egress=proxy.route)
    return RegistrySettings(policy=policy, sandbox=sandbox, spill_dir=ws.parent / "spill")


FETCH = """import sys, urllib.error, urllib.request
port, path, out = sys.argv[1], sys.argv[2], sys.argv[3:]
said = []
for host in ("localhost", "127.0.0.1"):
    try:
        said.append(urllib.request.urlopen(f"http://{host}:{port}/{path}", timeout=20).read().decode().strip())
    except urllib.error.HTTPError as exc:
        said.append(f"refused {exc.code}")
print(" | ".join(said), file=open(out[0], "w") if out else sys.stdout)
"""
"""A program that fetches the listener by name and by address: ``fetch.py PORT PATH [OUT]``."""


@pytest.mark.anyio
@pytest.mark.timeout(120)
async def test_a_hook_command_and_a_plugin_tool_reach_the_list_only(tmp_path: Path) -> None:
    ws, out = tmp_path / "ws", tmp_path / "ws" / "hook.txt"
    ws.mkdir()
    proxy = EgressProxy()
    try:
        with listener() as server:
            (ws / "fetch.py").write_text(FETCH)
            hook = f"{PYTHON} {ws / 'fetch.py'} {server.port} hook {out}; true"
            hooks = HooksConfig(pre_tool_use=[HookConfig(command=hook)])
            registry = HookRegistry.from_config(hooks, workspace=ws, sandbox=settings_for(ws, proxy).sandbox)
            await registry.pre_tool_use(ToolCall(name="fs.read", arguments={"path": "x"}, call_id="c1"), SHELL)

            tool = {"name": "get", "command": f"{PYTHON} ${{KAIROX_PLUGIN_ROOT}}/get.py", "inputSchema": {}}
            manifest = {"name": "kit", "tools": [tool]}
            root = make_plugin(tmp_path / "plugins" / "kit", manifest, manifest_dir=".kairox-plugin")
            fetch = [PYTHON, str(ws / "fetch.py"), str(server.port), "plugin"]
            (root / "get.py").write_text(
                f"import json, subprocess, sys\njson.load(sys.stdin)\nsaid = subprocess.run({fetch!r}, "
                "capture_output=True, text=True).stdout\nprint(json.dumps({'said': said}))\n"
            )
            gate = await build_registry(settings_for(ws, proxy), approver=ScriptedApprover())
            plugins = discover_plugins(KairoxConfig.model_validate({"plugins": {"paths": [str(root)]}}), home=tmp_path)
            routing = route_plugins(plugins.plugins)
            for provider in plugin_tool_providers(routing.tools, routing.permissions):
                await gate.add_provider(provider)
            result = await gate.call(ToolCall(name="kit__get", arguments={}))
    finally:
        proxy.close()

    assert out.read_text().strip() == f"seen /hook host=localhost:{server.port} | refused 403"
    assert f"seen /plugin host=localhost:{server.port} | refused 403" in result.text_content()
    assert server.paths() == ["/hook", "/plugin"]


@pytest.mark.anyio
@pytest.mark.timeout(120)
async def test_a_confined_server_reaches_its_own_list_not_the_sessions(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    entry = McpServerConfig(command=PYTHON, network="allowlist", allowed_domains=["localhost"])
    profile = server_profile(
        "mcp_servers", "probe", entry, layer="user", where=None, base_dir=ws, workspace=ws, home=tmp_path / "home"
    )
    proxy = EgressProxy()
    try:
        with listener() as server:
            (ws / "fetch.py").write_text(FETCH)
            # the session allows another name only: the server's own list is what it gets
            session = settings_for(ws, proxy, ("pypi.org",)).sandbox
            confinement = ServerConfinement(profile=profile, sandbox=session, home=tmp_path / "home", workspace=ws)
            argv = [PYTHON, str(ws / "fetch.py"), str(server.port), "server"]
            started = await confine_server(argv, dict(os.environ), cwd=ws, confinement=confinement)
            done = await anyio.run_process(started.argv, env=started.env, check=False)
    finally:
        proxy.close()

    assert started.confinement["network"] == "allowlist"
    assert done.stdout.decode().strip() == f"seen /server host=localhost:{server.port} | refused 403", done.stderr
    assert server.paths() == ["/server"]


def test_a_debug_adapter_narrows_the_calls_list_and_never_widens_it(tmp_path: Path) -> None:
    call = SandboxSettings(mode=SandboxPolicy.WORKSPACE_WRITE, allowed_domains=("pypi.org", "*.github.com"))

    def adapter(**entry: object) -> SandboxSettings:
        profile = server_profile(
            "dap_servers", "py", McpServerConfig(command="x", **entry), layer="user", where=None,  # type: ignore[arg-type]
            base_dir=tmp_path, workspace=tmp_path, home=tmp_path,
        )  # fmt: skip
        confinement = ServerConfinement(profile=profile, sandbox=call, home=tmp_path, workspace=tmp_path)
        return adapter_settings(call, confinement)

    assert adapter().allowed_domains == ("pypi.org", "*.github.com")
    narrowed = adapter(network="allowlist", allowed_domains=["api.github.com", "evil.example"])
    assert (narrowed.allowed_domains, narrowed.network_access) == (("api.github.com",), False)
    assert (adapter(network=False).allowed_domains, adapter(network=False).network_access) == (None, False)
    # with the network on for the call, the adapter's own list is what its debuggee gets
    on = SandboxSettings(mode=SandboxPolicy.WORKSPACE_WRITE, network_access=True)
    profile = server_profile(
        "dap_servers", "py", McpServerConfig(command="x", network="allowlist", allowed_domains=["a.org"]),
        layer="user", where=None, base_dir=tmp_path, workspace=tmp_path, home=tmp_path,
    )  # fmt: skip
    own = adapter_settings(on, ServerConfinement(profile=profile, sandbox=on, home=tmp_path, workspace=tmp_path))
    assert (own.allowed_domains, own.network_access) == (("a.org",), False)


@pytest.mark.anyio
@pytest.mark.timeout(120)
async def test_a_debug_adapters_sandbox_prefix_runs_its_program_behind_the_proxy(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    proxy = EgressProxy()
    try:
        with listener() as server:
            (ws / "fetch.py").write_text(FETCH)
            # the adapter's command line is appended to the prefix, as DapClient does
            prefix = await adapter_sandbox(settings_for(ws, proxy).sandbox, workspace=ws, cwd=ws)
            argv = [*prefix, PYTHON, str(ws / "fetch.py"), str(server.port), "adapter"]
            done = await anyio.run_process(argv, check=False)
    finally:
        proxy.close()

    assert done.stdout.decode().strip() == f"seen /adapter host=localhost:{server.port} | refused 403", done.stderr
    assert server.paths() == ["/adapter"]


def running(marker: str) -> list[int]:
    """The processes whose command line holds ``marker`` (the forwarder's names its proxy socket)."""
    found = []
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit() and marker.encode() in (entry / "cmdline").read_bytes():
                found.append(int(entry.name))
        except OSError:
            continue
    return found


def gone(marker: str) -> bool:
    for _ in range(400):  # a bounded wait, no timing asserted
        if not running(marker):
            return True
        time.sleep(0.05)
    return False


@pytest.mark.timeout(120)
def test_the_forwarder_ends_with_its_command_and_with_a_killed_sandbox(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    proxy = EgressProxy()
    try:
        settings = settings_for(ws, proxy).sandbox
        marker = str(proxy.route(("localhost",))[0])
        # a command that leaves a process behind: the forwarder still ends with the command, with its status
        done = subprocess.run(sandboxed_argv(["sh", "-c", "sleep 30 & exit 3"], settings, ws), timeout=60)
        assert done.returncode == 3 and gone(marker)
        sandbox = subprocess.Popen(sandboxed_argv(["sh", "-c", "touch started; exec sleep 60"], settings, ws))
        for _ in range(400):
            if (ws / "started").exists():
                break
            time.sleep(0.05)
        assert running(marker)  # the sandbox, and the forwarder waiting for its command
        sandbox.kill()  # bwrap alone, as when Kairox itself is killed: --die-with-parent takes the rest
        sandbox.wait(30)
        assert gone(marker), {pid: (Path("/proc") / str(pid) / "cmdline").read_bytes()[:200] for pid in running(marker)}
    finally:
        proxy.close()


# --- the session: events in the trace, doctor's count, the gateway's audit -------------------------------------


@pytest.mark.anyio
@pytest.mark.timeout(180)
async def test_a_refusal_reaches_the_sessions_events_doctor_and_the_gateway_audit(tmp_path: Path) -> None:
    ws, home = tmp_path / "ws", Path(os.environ["KAIROX_HOME"])
    ws.mkdir()
    (home / "kairox.toml").write_text('[sandbox]\nnetwork = "allowlist"\nallowed_domains = ["localhost"]\n')
    events = GatewayEvents()
    with listener() as server:
        async with build_extension_context(ws, RuntimeOptions(workspace=ws), events=events) as context:
            audit = tmp_path / "audit.jsonl"
            Gateway(context, events, GatewayOptions(audit_path=audit))
            curl = needed("curl")
            command = f"{curl} -sS http://127.0.0.1:{server.port}/no; {curl} -sS http://localhost:{server.port}/yes"
            result = await context.registry.call(ToolCall(name="shell.exec", arguments={"command": command}))
            for _ in range(200):  # the refusal is told from the proxy's thread: a bounded wait, no timing asserted
                if audit.exists():
                    break
                await anyio.sleep(0.02)
            report = doctor_report(context)

    assert f"seen /yes host=localhost:{server.port}" in result.text_content()
    refused = context.events.of_type(EgressRefused)
    assert [e.host for e in refused] == ["127.0.0.1"]
    why = "127.0.0.1 is an address or no host name; the list names hosts"
    assert describe(refused[0]) == TraceEntry(text=f"network 127.0.0.1:{server.port}: refused, {why}", error=True)
    assert report["sandbox"]["allowed_domains"] == ["localhost"] and report["sandbox"]["egress_refused"] == 1
    assert "Network by name (sandbox.allowed_domains): localhost; refused this session: 1" in doctor_lines(report)
    line = json.loads(audit.read_text())
    said = (line["client"], line["tool"], line["decision"], line["outcome"])
    assert said == ("sandbox", "network", "deny", "refused")
    assert line["arguments"]["host"] == "127.0.0.1" and line["arguments"]["port"] == server.port


def test_the_proxy_lets_through_by_name_only_what_the_list_allows() -> None:
    allowlist = ("pypi.org", "*.github.com")
    cases = ["pypi.org", "PyPI.org.", "api.github.com", "github.com", "evil.org", "127.0.0.1", "[::1]", "0x7f.1"]
    named = [host_name(h) for h in cases]
    assert [n is not None and allowing(n, allowlist) is not None for n in named] == [True, True, True] + [False] * 5
