"""PyPI catalog entries run through uvx, pipx, or the server's executable already on PATH (M9, M11): pre-flight says
which it found, or every way to get one. The PATH of each test holds only what it names: real executables made
as scripts in a temp dir, which start a real MCP server for the install's dry run."""

import json
import sys
import tomllib
from pathlib import Path

import pytest
from tests.helpers import Run
from tests.helpers import kairox as run_kairox

ROOT = Path(__file__).resolve().parents[2]
LEAN_SERVER = ROOT / "tests" / "servers" / "lean_server.py"
ENTRY = "io.github.modelcontextprotocol/fetch"
PACKAGE, VERSION = "mcp-server-fetch", "2026.10.24"

pytestmark = pytest.mark.timeout(180)


def kairox(workspace: Path, *args: str, path: Path) -> Run:
    return run_kairox("--workspace", workspace, *args, env={"PATH": str(path)})


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    (root / ".git").mkdir(parents=True)
    return root


@pytest.fixture
def bare(tmp_path: Path) -> Path:
    """A PATH folder with nothing in it (not even uv, pipx or the server)."""
    folder = tmp_path / "bin"
    folder.mkdir()
    return folder


def _script(folder: Path, name: str, expected: str) -> Path:
    """``name``: an executable that starts the lean MCP server when called with exactly ``expected`` (else it says
    what it got and exits 3, so a wrong command line fails the dry run)."""
    script = folder / name
    script.write_text(
        "#!/bin/sh\n"
        f'[ "$*" = "{expected}" ] || {{ echo "{name} called with: $*" >&2; exit 3; }}\n'
        f'exec "{sys.executable}" "{LEAN_SERVER}"\n'
    )
    script.chmod(0o755)
    return script


def _written(home: Path) -> dict[str, object]:
    return dict(tomllib.loads((home / "kairox.toml").read_text())["mcp_servers"]["fetch"])


def test_with_only_pipx_on_path_pipx_runs_the_pinned_package(workspace: Path, bare: Path, isolated_home: Path) -> None:
    pipx = _script(bare, "pipx", f"run --spec {PACKAGE}=={VERSION} {PACKAGE}")
    checked = kairox(workspace, "mcp", "catalog", "check", "fetch", path=bare)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert (
        f"[ok] runtime pipx: {pipx}: pipx runs {PACKAGE}=={VERSION} in its own "
        "environment; uvx is not on PATH (`pip install uv` to use it instead)" in checked.stdout
    )
    assert f"command: pipx run --spec {PACKAGE}=={VERSION} {PACKAGE}" in checked.stdout

    installed = kairox(workspace, "mcp", "catalog", "install", "fetch", "--yes", "--json", path=bare)
    assert installed.returncode == 0, installed.stderr
    report = json.loads(installed.stdout)
    assert (report["outcome"], report["dry_run"]["ready"], report["plan"]["launcher"]) == ("installed", True, "pipx")
    assert [t["name"] for t in report["dry_run"]["tools"]] == ["echo"]
    assert _written(isolated_home) == {
        "type": "stdio",
        "command": "pipx",
        "args": ["run", "--spec", f"{PACKAGE}=={VERSION}", PACKAGE],
    }


def test_with_only_the_server_on_path_that_executable_runs(workspace: Path, bare: Path, isolated_home: Path) -> None:
    server = _script(bare, PACKAGE, "")
    checked = kairox(workspace, "mcp", "catalog", "check", "fetch", "--json", path=bare)
    assert checked.returncode == 0, checked.stderr
    [launcher] = json.loads(checked.stdout)["checks"]
    assert (launcher["name"], launcher["ok"]) == ("path", True)
    assert launcher["detail"] == (
        f"{server}: {PACKAGE} is already on PATH and runs as installed (its version is not checked against {VERSION}); "
        "neither uvx nor pipx is on PATH"
    )

    installed = kairox(workspace, "mcp", "catalog", "install", "fetch", "--yes", path=bare)
    assert installed.returncode == 0, installed.stderr
    assert "wrote [mcp_servers.fetch] (enabled)" in installed.stdout
    assert f"command: {server}\n" in installed.stderr
    assert _written(isolated_home) == {"type": "stdio", "command": str(server), "args": []}


def test_with_uvx_and_pipx_on_path_uvx_is_taken_unless_another_is_chosen(
    workspace: Path, bare: Path, isolated_home: Path
) -> None:
    uvx = _script(bare, "uvx", f"{PACKAGE}@{VERSION}")
    _script(bare, "pipx", f"run --spec {PACKAGE}=={VERSION} {PACKAGE}")
    checked = kairox(workspace, "mcp", "catalog", "check", "fetch", path=bare)
    assert f"[ok] runtime uvx: {uvx}: uvx runs {PACKAGE}@{VERSION} in its own environment\n" in checked.stdout
    chosen = kairox(workspace, "mcp", "catalog", "check", "fetch", "--launcher", "pipx", path=bare)
    assert "pipx runs mcp-server-fetch==2026.10.24 in its own environment (chosen with --launcher)\n" in chosen.stdout
    missing = kairox(workspace, "mcp", "catalog", "check", "fetch", "--launcher", "path", path=bare)
    assert missing.returncode == 1
    assert f"[MISSING] runtime path: {PACKAGE} is not on PATH (chosen with --launcher path)" in missing.stdout
    assert (
        f"fix: `pip install {PACKAGE}=={VERSION}` (or `pipx install "
        f"{PACKAGE}=={VERSION}`) puts {PACKAGE} itself on PATH" in missing.stdout
    )
    wrong = kairox(workspace, "mcp", "catalog", "check", "filesystem", "--launcher", "pipx", path=bare)
    assert wrong.returncode == 2 and "--launcher is for PyPI packages" in wrong.stderr

    installed = kairox(workspace, "mcp", "catalog", "install", "fetch", "--yes", path=bare)
    assert installed.returncode == 0, installed.stderr
    assert _written(isolated_home) == {"type": "stdio", "command": "uvx", "args": [f"{PACKAGE}@{VERSION}"]}


def test_with_nothing_on_path_preflight_gives_every_fix_and_nothing_is_written(
    workspace: Path, bare: Path, isolated_home: Path
) -> None:
    checked = kairox(workspace, "mcp", "catalog", "check", "fetch", path=bare)
    assert checked.returncode == 1
    assert f"[MISSING] runtime uvx: none of uvx, pipx or {PACKAGE} is on PATH" in checked.stdout
    fix = f"fix: `pip install uv` (then uvx runs it), or `pip install pipx`, or `pip install {PACKAGE}=={VERSION}`"
    assert fix in checked.stdout
    installed = kairox(workspace, "mcp", "catalog", "install", "fetch", "--yes", path=bare)
    assert installed.returncode == 1
    assert f"kairox: preflight_failed: none of uvx, pipx or {PACKAGE} is on PATH" in installed.stderr
    assert "`pip install uv` (then uvx runs it)" in installed.stderr.split("preflight_failed:")[1]
    assert not (isolated_home / "kairox.toml").exists()
    shown = kairox(workspace, "mcp", "catalog", "show", "fetch", path=bare)
    assert f"pypi:{PACKAGE}@{VERSION}: uvx, pipx, or {PACKAGE} on PATH" in shown.stdout
