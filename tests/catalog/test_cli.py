"""``kairox mcp catalog`` end to end: listing without processes or network, real npm installs offline from the
npm cache ``make install`` fills, a missing Node.js, secrets, and the gate's question."""

import json
import re
import shutil
import socket
import subprocess
import tomllib
from pathlib import Path
from typing import Any

import pytest
from tests.helpers import Run
from tests.helpers import kairox as run_kairox
from typer.testing import CliRunner

ROOT = Path(__file__).resolve().parents[2]
NPM_CACHE = ROOT / "build" / "npm-cache"


def kairox(workspace: Path, *args: str, env: dict[str, str] | None = None, timeout: float = 240) -> Run:
    return run_kairox("--workspace", workspace, *args, env=env, timeout=timeout)


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    (root / ".git").mkdir(parents=True)
    return root


@pytest.fixture
def offline_npm(tmp_path: Path) -> dict[str, str]:
    """A HOME whose npm works offline from the cache ``make install`` filled (nothing but loopback is reached)."""
    assert (NPM_CACHE / ".catalog-installed").is_file(), (
        "run `make install` first: it fills build/npm-cache for these tests"
    )
    home = tmp_path / "home"
    home.mkdir()
    # HOME reaches npm in Kairox's own commands and in the servers it starts (HOME is passed to every child)
    (home / ".npmrc").write_text(
        f"cache={NPM_CACHE}\noffline=true\nprefix={tmp_path / 'npm-prefix'}\nupdate-notifier=false\n"
    )
    return {"HOME": str(home), "npm_config_offline": "true"}


def test_list_on_a_fresh_home_starts_no_process_and_opens_no_socket(
    monkeypatch: pytest.MonkeyPatch, workspace: Path
) -> None:
    from kairox.cli._app import app

    touched: list[str] = []

    def no_connect(self: socket.socket, address: Any) -> None:
        touched.append(f"connect {address}")
        raise OSError("network is off in this test")

    def no_process(self: subprocess.Popen[Any], *args: Any, **kwargs: Any) -> None:
        touched.append(f"process {args[0] if args else ''}")
        raise OSError("processes are off in this test")

    monkeypatch.setattr(socket.socket, "connect", no_connect)
    monkeypatch.setattr(subprocess.Popen, "_execute_child", no_process)
    result = CliRunner().invoke(app, ["--workspace", str(workspace), "mcp", "catalog", "list"])
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert len(lines) >= 12
    assert any(line.startswith("io.github.modelcontextprotocol/filesystem  2026.8.31  [builtin]") for line in lines)
    assert touched == []


def test_install_filesystem_and_memory_with_npm_then_call_a_tool(
    workspace: Path, offline_npm: dict[str, str], isolated_home: Path
) -> None:
    (isolated_home / "kairox.toml").write_text('# my settings\nmodel = "m"  # keep this comment\n')
    (workspace / "notes.txt").write_text("hello from the workspace\n")
    installed = kairox(
        workspace,
        "mcp",
        "catalog",
        "install",
        "@modelcontextprotocol/server-filesystem",
        "--yes",
        "--json",
        env=offline_npm,
    )
    assert installed.returncode == 0, installed.stderr
    report = json.loads(installed.stdout)
    assert report["outcome"] == "installed" and report["dry_run"]["ready"]
    tools = {t["name"] for t in report["dry_run"]["tools"]}
    assert {"read_text_file", "list_allowed_directories"} <= tools
    assert all(t["tokens"] > 0 for t in report["dry_run"]["tools"])
    assert "command: npx -y @modelcontextprotocol/server-filesystem@2026.8.31 .\n" in installed.stderr
    assert "npm exec --yes --package=@modelcontextprotocol/server-filesystem@2026.8.31" in report["prefetch"]

    memory = kairox(workspace, "mcp", "catalog", "install", "memory", "--yes", env=offline_npm)
    assert memory.returncode == 0, memory.stderr
    assert "wrote [mcp_servers.memory] (enabled)" in memory.stdout

    text = (isolated_home / "kairox.toml").read_text()
    assert text.startswith('# my settings\nmodel = "m"  # keep this comment\n')
    assert "# from the MCP catalog: io.github.modelcontextprotocol/filesystem 2026.8.31 (source builtin)" in text
    servers = tomllib.loads(text)["mcp_servers"]
    assert servers["filesystem"] == {
        "type": "stdio",
        "command": "npx",
        "args": ["-y", "@modelcontextprotocol/server-filesystem@2026.8.31", "."],
    }
    assert servers["memory"] == {
        "type": "stdio",
        "command": "npx",
        "args": ["-y", "@modelcontextprotocol/server-memory@2026.8.31"],
        "env_vars": ["MEMORY_FILE_PATH"],
    }

    called = kairox(
        workspace, "mcp", "call", "filesystem", "read_text_file", '{"path": "notes.txt"}', "--yes", env=offline_npm
    )
    assert called.returncode == 0, called.stderr
    assert called.stdout == "hello from the workspace\n"
    graph = kairox(workspace, "mcp", "call", "memory", "read_graph", "--yes", env=offline_npm)
    assert graph.returncode == 0, graph.stderr
    assert '"entities"' in graph.stdout

    shown = kairox(workspace, "mcp", "catalog", "show", "filesystem", env=offline_npm)
    assert f"tools (from an earlier dry run): {len(report['dry_run']['tools'])}\n" in shown.stdout
    assert "read_text_file" in shown.stdout


def test_without_node_check_and_install_say_what_is_missing_and_write_nothing(
    workspace: Path, tmp_path: Path, isolated_home: Path
) -> None:
    bare = tmp_path / "bin"
    bare.mkdir()
    git = shutil.which("git")
    if git:
        (bare / "git").symlink_to(git)
    env = {"PATH": str(bare)}
    checked = kairox(workspace, "mcp", "catalog", "check", "filesystem", env=env)
    assert checked.returncode == 1
    assert "[MISSING] runtime node: node is not on PATH (npm packages run on Node.js)" in checked.stdout
    assert "fix: install Node.js 18 or newer: `apt-get install nodejs npm` (Debian/Ubuntu)" in checked.stdout
    installed = kairox(workspace, "mcp", "catalog", "install", "filesystem", "--yes", env=env)
    assert installed.returncode == 1
    assert "preflight_failed: node is not on PATH" in installed.stderr and "apt-get install nodejs" in installed.stderr
    assert not (isolated_home / "kairox.toml").exists()


def test_without_terminal_or_yes_the_gate_denies_and_nothing_is_written(
    workspace: Path, isolated_home: Path, tmp_path: Path
) -> None:
    for layer, file in (("user", isolated_home / "kairox.toml"), ("project", workspace / "kairox.toml")):
        trace = tmp_path / f"{layer}.jsonl"
        result = kairox(workspace, "--trace", str(trace), "mcp", "catalog", "install", "filesystem", "--layer", layer)
        assert result.returncode == 4, result.stderr
        assert f"denied: approval required: {file}" in result.stderr
        assert not file.exists()
        events = [json.loads(line) for line in trace.read_text().splitlines()]
        asked = [e for e in events if e["event"] == "ToolCallApprovalAnswered"]
        assert [(e["tool"], e["approved"]) for e in asked] == [("mcp.catalog.install", False)]
        [finished] = [e for e in events if e["event"] == "CatalogInstallFinished"]
        assert (finished["outcome"], finished["server"], finished["file"]) == ("denied", "filesystem", str(file))


def test_a_deny_rule_stops_the_install_even_with_yes(workspace: Path, isolated_home: Path) -> None:
    (isolated_home / "kairox.toml").write_text('[policy.rules]\ndeny = ["mcp.catalog.install"]\n')
    result = kairox(workspace, "mcp", "catalog", "install", "filesystem", "--yes")
    assert result.returncode == 4
    assert "mcp_servers" not in (isolated_home / "kairox.toml").read_text()


def test_secret_is_passed_through_never_written(
    workspace: Path, offline_npm: dict[str, str], isolated_home: Path
) -> None:
    env = {**offline_npm, "BRAVE_API_KEY": "s3cret-value-123"}
    result = kairox(
        workspace, "mcp", "catalog", "install", "brave-search-mcp-server", "--layer", "project", "--yes", env=env
    )
    # the package is not in the offline cache: the dry run fails and the entry is written disabled, with why
    assert result.returncode == 1
    text = (workspace / "kairox.toml").read_text()
    assert "s3cret-value-123" not in text
    entry = tomllib.loads(text)["mcp_servers"]["brave-search-mcp-server"]
    assert entry["env_vars"] == ["BRAVE_API_KEY"] and entry["enabled"] is False
    assert "# disabled: the dry run failed: " in text
    strict = kairox(
        workspace,
        "mcp",
        "catalog",
        "install",
        "brave-search-mcp-server",
        "--name",
        "brave2",
        "--layer",
        "project",
        "--yes",
        "--require-ready",
        env=env,
    )
    assert strict.returncode == 1 and "not_ready" in strict.stderr
    assert "brave2" not in (workspace / "kairox.toml").read_text()


def test_remote_entry_writes_header_references_shown_redacted(
    workspace: Path, registry: Any, isolated_home: Path
) -> None:
    (isolated_home / "kairox.toml").write_text(
        f'[[mcp_catalog.sources]]\nname = "test"\nurl = "{registry.url}"\nkind = "registry"\n'
    )
    env = {"EXAMPLE_TOKEN": "tok-very-secret"}
    listed = kairox(workspace, "mcp", "catalog", "list", "--source", "test", env=env)
    assert listed.returncode == 0 and len(listed.stdout.splitlines()) == 251
    result = kairox(
        workspace, "mcp", "catalog", "install", "io.example/weather", "--package", "remote", "--yes", env=env
    )
    assert result.returncode == 1  # nothing speaks MCP at 127.0.0.1:9: written disabled
    text = (isolated_home / "kairox.toml").read_text()
    assert "tok-very-secret" not in text
    entry = tomllib.loads(text)["mcp_servers"]["weather"]
    assert entry["headers"] == {"Authorization": "Bearer ${EXAMPLE_TOKEN}"} and entry["enabled"] is False
    shown = kairox(workspace, "config", "show", "--json", env=env)
    assert shown.returncode == 0
    config = json.loads(shown.stdout)["config"]
    assert config["mcp_servers"]["weather"]["headers"] == {"Authorization": "<redacted>"}
    assert "tok-very-secret" not in shown.stdout


def test_registry_down_listing_shows_cache_age(workspace: Path, registry: Any, isolated_home: Path) -> None:
    (isolated_home / "kairox.toml").write_text(
        "[mcp_catalog]\ncache_ttl_sec = 0\n\n[[mcp_catalog.sources]]\n"
        f'name = "test"\nurl = "{registry.url}"\nkind = "registry"\n'
    )
    assert kairox(workspace, "mcp", "catalog", "refresh").returncode == 0
    registry.control(down="1")
    listed = kairox(workspace, "mcp", "catalog", "search", "weather")
    assert listed.returncode == 0
    assert listed.stdout.startswith("io.example/weather  1.0.0  [test]  Weather: Weather forecasts for any city")
    assert re.search(
        r"catalog source 'test': cached \d+ s ago, source unreachable: HTTP 503 from http://127\.0\.0\.1:",
        listed.stderr,
    )
    sources = kairox(workspace, "mcp", "catalog", "sources", "--json")
    states = {s["name"]: s for s in json.loads(sources.stdout)["sources"]}
    assert states["test"]["status"] == "stale" and states["builtin"]["status"] == "builtin"
    assert kairox(workspace, "mcp", "catalog", "refresh").returncode == 1


def test_unknown_entry_is_not_found_with_a_suggestion(workspace: Path) -> None:
    result = kairox(workspace, "mcp", "catalog", "show", "filesystm")
    assert result.returncode == 6
    assert "no catalog entry 'filesystm'; did you mean 'filesystem'?" in result.stderr


def test_malformed_sources_are_diagnostics_and_the_rest_is_listed(
    workspace: Path, registry: Any, isolated_home: Path
) -> None:
    sources = "".join(
        f'[[mcp_catalog.sources]]\nname = "{name}"\nurl = "{registry.url}/{name}"\nkind = "registry"\n\n'
        for name in ("garbage", "wrong", "huge")
    )
    (isolated_home / "kairox.toml").write_text(sources)
    listed = kairox(workspace, "mcp", "catalog", "list")
    assert listed.returncode == 0, listed.stderr
    assert "Traceback" not in listed.stderr
    assert len(listed.stdout.splitlines()) >= 12  # the built-in entries
    assert "catalog source 'garbage': unavailable: " in listed.stderr and "did not send JSON" in listed.stderr
    assert "catalog source 'huge': unavailable: " in listed.stderr
    assert "entry skipped: wrong[2].packages: expected a list, got a string" in listed.stderr
