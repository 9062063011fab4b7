"""U1: the README's commands set up a fresh machine; the pre-flight names missing system programs first."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

from tests.conftest import SERIAL

SCRIPT = Path(__file__).resolve().parents[1] / "scripts" / "system-packages.sh"


def _bin_without(tmp_path: Path, hidden: set[str], *, extra: dict[str, str] | None = None) -> Path:
    """A PATH folder with links to the programs the script looks for, except ``hidden``."""
    folder = tmp_path / "bin"
    folder.mkdir()
    links = {"python3": sys.executable, "id": shutil.which("id")}
    for program in ("git", "node", "npm", "tmux", "chromium", "curl", "bwrap", "rg", "apt-get"):
        found = shutil.which(program)
        if found is not None and program not in hidden:
            links[program] = found
    links.update(extra or {})
    for name, target in links.items():
        if target is not None:
            (folder / name).symlink_to(target)
    return folder


def _run(mode: str, path: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PATH": str(path)}
    return subprocess.run(["/bin/sh", str(SCRIPT), mode], env=env, capture_output=True, text=True, timeout=60)


def test_preflight_names_bwrap_and_rg_when_they_are_not_on_path(tmp_path: Path) -> None:
    run = _run(
        "check",
        _bin_without(tmp_path, {"bwrap", "rg"}, extra={"git": "/bin/true", "node": "/bin/true", "npm": "/bin/true"}),
    )
    assert run.returncode == 1
    assert run.stdout == ""
    assert run.stderr.splitlines() == [
        "pre-flight: missing system programs: bwrap (bubblewrap), rg (ripgrep)",
        "pre-flight: the tests need them; install them with: apt-get install bubblewrap ripgrep",
        "pre-flight: (as root, `make install` does this for you)",
    ]


def test_preflight_passes_when_every_program_is_there(tmp_path: Path) -> None:
    present = {name: "/bin/true" for name in ("bwrap", "rg", "git", "node", "npm")}
    run = _run("check", _bin_without(tmp_path, set(), extra=present))
    assert run.returncode == 0, run.stderr
    programs = "bwrap, rg, git, node, npm, tmux, chromium, curl, PostgreSQL and haproxy"
    assert run.stdout == f"pre-flight: {programs} are on PATH\n"


def test_install_stops_at_once_naming_the_packages_without_apt_get(tmp_path: Path) -> None:
    run = _run(
        "install",
        _bin_without(
            tmp_path, {"bwrap", "rg", "apt-get"}, extra={"git": "/bin/true", "node": "/bin/true", "npm": "/bin/true"}
        ),
    )
    assert run.returncode == 1
    assert run.stderr.splitlines() == [
        "setup: missing system programs: bwrap (bubblewrap), rg (ripgrep)",
        "setup: this is not a Debian system (no apt-get); install them with your package manager, then run make again",
    ]


def test_install_does_nothing_when_nothing_is_missing(tmp_path: Path) -> None:
    present = {name: "/bin/true" for name in ("bwrap", "rg", "git", "node", "npm")}
    run = _run("install", _bin_without(tmp_path, {"apt-get"}, extra=present))
    assert (run.returncode, run.stdout, run.stderr) == (0, "", "")


def test_make_test_installs_then_runs_the_preflight_before_pytest() -> None:
    plan = subprocess.run(["make", "-n", "test"], cwd=SCRIPT.parents[1], capture_output=True, text=True, timeout=60)
    assert plan.returncode == 0, plan.stderr
    lines = plan.stdout.splitlines()
    install = lines.index("sh scripts/system-packages.sh install")
    check = lines.index("sh scripts/system-packages.sh check")
    pytest = [i for i, line in enumerate(lines) if "/bin/pytest -q" in line]
    assert install < check < pytest[0]
    # every core first, then the tests that need the machine to themselves (only their files collected), each naming
    # its 25 slowest tests
    assert [lines[i].split("/bin/pytest -q ", 1)[1] for i in pytest] == [
        '--durations=25 -n auto --dist loadfile -m "not serial"',
        f"--durations=25 -m serial {' '.join(sorted(f'tests/{name}' for name in SERIAL))}",
    ]


def test_the_demo_preflight_needs_neither_tmux_nor_chromium(tmp_path: Path) -> None:
    present = {name: "/bin/true" for name in ("bwrap", "rg", "git", "node", "npm")}
    run = _run_demo("check", _bin_without(tmp_path, {"tmux", "chromium", "apt-get"}, extra=present))
    assert (run.returncode, run.stdout, run.stderr) == (0, "pre-flight: bwrap, rg, git, node and npm are on PATH\n", "")
    installed = _run_demo("install", tmp_path / "bin")
    assert (installed.returncode, installed.stderr) == (0, "")
    tests = _run("check", tmp_path / "bin")
    assert tests.returncode == 1
    assert "pre-flight: missing system programs: tmux (tmux), chromium (chromium)" in tests.stderr
    assert "pre-flight: the tests need them; install them with: apt-get install tmux chromium" in tests.stderr


def test_make_demo_checks_only_the_demo_set_and_sets_up_no_test_servers() -> None:
    plan = subprocess.run(["make", "-n", "demo"], cwd=SCRIPT.parents[1], capture_output=True, text=True, timeout=60)
    assert plan.returncode == 0, plan.stderr
    lines = plan.stdout.splitlines()
    assert "sh scripts/system-packages.sh check demo" in lines and "sh scripts/system-packages.sh install demo" in lines
    assert "sh scripts/system-packages.sh check" not in lines and "sh scripts/system-packages.sh install" not in lines
    assert not any("npm ci" in line or "npm-cache" in line or "tmux" in line or "chromium" in line for line in lines)


def _run_demo(mode: str, path: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PATH": str(path)}
    return subprocess.run(["/bin/sh", str(SCRIPT), mode, "demo"], env=env, capture_output=True, text=True, timeout=60)
