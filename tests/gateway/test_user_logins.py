"""Each person's own upstream OAuth login through the gateway: one ``kairox serve`` on 127.0.0.1 with three users,
an OAuth-protected MCP server that is its own authorization server, and ``kairox mcp login --gateway`` run for two
of the users (the browser step done by the test). A call of each person reaches the upstream with that person's
token only; the logins are kept encrypted in the store."""

import contextlib
import json
import socket
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx2
import mcp_types as types
import pytest
from cryptography.fernet import Fernet
from mcp.client.streamable_http import streamable_http_client
from tests.gateway.conftest import kairox_env, start_gateway, trust

from kairox.mcp._oauth import token_path
from mcp import Client

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(300)]

TOKENS = {"alice": "alice-token-5e1f", "bob": "bob-token-77d0", "carol": "carol-token-0b3a"}
UPSTREAM = Path(__file__).with_name("oauth_upstream.py")


@dataclass
class Setup:
    gateway: str
    home: Path
    root: Path
    upstream: str
    key: str


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture(scope="module")
def setup(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Setup]:
    root = tmp_path_factory.mktemp("user-logins")
    workspace, home = root / "ws", root / "home"
    (workspace / ".git").mkdir(parents=True)
    port = free_port()
    upstream = subprocess.Popen(
        [sys.executable, str(UPSTREAM), str(port)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            with contextlib.suppress(httpx2.HTTPError):
                if httpx2.get(f"http://127.0.0.1:{port}/.well-known/oauth-authorization-server").status_code == 200:
                    break
            time.sleep(0.2)
        (workspace / "kairox.toml").write_text(
            f'[mcp_servers.upstream]\nurl = "http://127.0.0.1:{port}/mcp"\noauth = true\n\n'
            '[policy.rules]\nallow = ["mcp__upstream__whoami"]\n'
        )
        # the gateway's own login (lists the tools): a token the upstream knows from the start
        own = token_path(home, "upstream")
        own.parent.mkdir(parents=True)
        own.write_text(json.dumps({"tokens": {"access_token": "at-gateway", "token_type": "Bearer"}}))
        users = root / "users.toml"
        users.write_text("".join(f'{user} = "{token}"\n' for user, token in TOKENS.items()))
        trust(workspace, home)
        key = Fernet.generate_key().decode()
        served = start_gateway(workspace, home, "--users-file", str(users), env={"KAIROX_GATEWAY_KEY": key})
        try:
            yield Setup(gateway=served.url, home=home, root=root, upstream=f"http://127.0.0.1:{port}/mcp", key=key)
        finally:
            served.stop()
    finally:
        upstream.kill()
        upstream.wait()


def login_through_gateway(setup: Setup, user: str) -> subprocess.CompletedProcess[str]:
    """``kairox mcp login upstream --gateway URL`` on the person's machine (a home of their own); the test opens
    the authorization page the command prints, as the person's browser would."""
    home = setup.root / f"home-{user}"
    home.mkdir(exist_ok=True)
    env = {**kairox_env(home), "KAIROX_GATEWAY_TOKEN": TOKENS[user]}
    command = [sys.executable, "-m", "kairox", "mcp", "login", "upstream", "--gateway", setup.gateway, "--no-browser"]
    proc = subprocess.Popen(command, cwd=setup.root, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert proc.stderr is not None
    lines = []
    for line in proc.stderr:
        lines.append(line)
        if line.strip().startswith("http://127.0.0.1"):  # the authorization page, after "Open this page ..."
            assert httpx2.get(line.strip(), follow_redirects=True).status_code == 200
            break
    out, err = proc.communicate(timeout=120)
    assert not list(home.rglob("*.json")), "the person's machine keeps nothing of the login"
    return subprocess.CompletedProcess(command, proc.returncode, out, "".join(lines) + err)


async def whoami(setup: Setup, user: str) -> tuple[str, bool]:
    headers = {"Authorization": f"Bearer {TOKENS[user]}"}
    async with (
        httpx2.AsyncClient(headers=headers, timeout=60) as http,
        Client(streamable_http_client(setup.gateway, http_client=http)) as client,
    ):
        result = await client.call_tool("mcp__upstream__whoami", {})
    text = "\n".join(block.text for block in result.content if isinstance(block, types.TextContent))
    return text, result.is_error is True


async def test_each_persons_calls_reach_the_upstream_with_their_own_login_only(setup: Setup) -> None:
    for user in ("alice", "bob"):
        done = login_through_gateway(setup, user)
        assert done.returncode == 0, done.stderr
        assert f"logged in to 'upstream' for your own calls through {setup.gateway}" in done.stdout
    assert await whoami(setup, "alice") == ("at-1", False)
    assert await whoami(setup, "bob") == ("at-2", False)
    assert await whoami(setup, "alice") == ("at-1", False)
    refused, failed = await whoami(setup, "carol")  # no login of her own: refused, never the gateway's or another's
    assert failed and "you have none here" in refused and "kairox mcp login upstream --gateway" in refused


def test_the_logins_are_kept_encrypted_with_the_gateways_key(setup: Setup) -> None:
    done = login_through_gateway(setup, "carol")
    assert done.returncode == 0, done.stderr
    with contextlib.closing(sqlite3.connect(setup.home / "gateway.sqlite3")) as db:
        rows = dict(db.execute("SELECT user_name, value FROM kx_logins WHERE server = 'upstream'").fetchall())
    logins = {user: json.loads(Fernet(setup.key).decrypt(value)) for user, value in rows.items()}
    assert "carol" in logins and logins["carol"]["tokens"]["access_token"].startswith("at-")
    stored = b"".join(path.read_bytes() for path in setup.home.glob("gateway.sqlite3*"))  # the WAL too
    secrets = [login["tokens"][kind] for login in logins.values() for kind in ("access_token", "refresh_token")]
    assert secrets and all(secret.encode() not in stored for secret in [*secrets, "refresh_token", "client_id"])


def test_a_login_needs_a_token_of_a_user_of_the_gateway(setup: Setup) -> None:
    base = setup.gateway.removesuffix("/mcp")
    refused = httpx2.put(f"{base}/logins/upstream", json={"tokens": {}, "client_info": {}})
    assert refused.status_code == 401
    known = httpx2.get(f"{base}/logins/upstream", headers={"Authorization": f"Bearer {TOKENS['bob']}"})
    assert known.json() == {"url": setup.upstream}
    unknown = httpx2.get(f"{base}/logins/nothing", headers={"Authorization": f"Bearer {TOKENS['bob']}"})
    assert unknown.status_code == 404
