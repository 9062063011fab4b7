"""``kairox plugins install PATH|GIT_URL [--yes]`` (P7): a plugin from a folder or a local git repository (cloned
with the real ``git`` from a file:// URL), read the way ``skills install`` reads a source, checked in a staging
copy and written only once the gate allowed it: a person at a terminal, ``--yes``, never a deny rule."""

import json
import os
import select
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest
from tests.helpers import kairox
from tests.plugins.conftest import write_json, write_skill

pytestmark = pytest.mark.timeout(180)


def _plugin(root: Path, version: str | None = "1.2.0") -> Path:
    manifest: dict[str, Any] = {"name": "reviewer", "description": "Review helpers"}
    if version:
        manifest["version"] = version
    write_json(root / ".claude-plugin" / "plugin.json", manifest)
    write_skill(root / "skills" / "review", "review")
    (root / "commands").mkdir()
    (root / "commands" / "fix.md").write_text("Fix it.\n")
    (root / "check.sh").write_text("#!/bin/sh\nexit 0\n")
    (root / "check.sh").chmod(0o755)
    write_json(
        root / "hooks" / "hooks.json",
        {"hooks": {"PreToolUse": [{"matcher": "*", "hooks": [{"type": "command", "command": "./check.sh"}]}]}},
    )
    return root


def _git(repo: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@example.test", *args],
        check=True,
        capture_output=True,
        text=True,
    )
    return done.stdout.strip()


def _records(home: Path) -> dict[str, Any]:
    file = home / "plugins" / "installed.json"
    return dict(json.loads(file.read_text())["plugins"]) if file.exists() else {}


def _config(home: Path) -> dict[str, Any]:
    file = home / "kairox.toml"
    return tomllib.loads(file.read_text()) if file.exists() else {}


def _files(folder: Path) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file())


def test_from_a_folder_without_a_terminal_or_yes_nothing_is_written(tmp_path: Path, isolated_home: Path) -> None:
    source = _plugin(tmp_path / "reviewer")
    trace = tmp_path / "trace.jsonl"
    run = kairox("--trace", trace, "plugins", "install", source)
    assert run.code == 4, run.stderr
    assert "plugin 'reviewer' from " + str(source) + " was not installed: approval required: " in run.stderr
    assert f"{isolated_home / 'plugins' / '@source' / 'reviewer' / '1.2.0'} is inside {isolated_home}" in run.stderr
    assert _records(isolated_home) == {}
    assert not (isolated_home / "plugins" / "@source" / "reviewer").exists()
    assert [p.name for p in (isolated_home / "plugins" / "@source").iterdir()] == []  # no staging left behind
    events = [json.loads(line) for line in trace.read_text().splitlines()]
    assert [(e["tool"], e["approved"]) for e in events if e["event"] == "ToolCallApprovalAnswered"] == [
        ("plugins.install", False)
    ]


def test_from_a_folder_with_yes_installs_enabled_and_its_hooks_still_wait(tmp_path: Path, isolated_home: Path) -> None:
    source = _plugin(tmp_path / "reviewer")
    (source / ".git").mkdir()  # a work tree's .git is not copied
    (source / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    run = kairox("plugins", "install", source, "--yes")
    target = isolated_home / "plugins" / "@source" / "reviewer" / "1.2.0"
    assert run.code == 0, run.stderr
    assert run.stdout == f"installed reviewer 1.2.0 from {source} into {target}\n"
    assert "approved by --yes: install reviewer 1.2.0 (1 skill, 1 command, 1 hook (runs `*: ./check.sh`))" in run.stderr
    assert "note: its 1 hook(s) run only once approved" in run.stderr
    assert _files(target) == [
        ".claude-plugin/plugin.json",
        "check.sh",
        "commands/fix.md",
        "hooks/hooks.json",
        "skills/review/SKILL.md",
    ]
    record = _records(isolated_home)["reviewer"]
    assert (record["marketplace"], record["version"], record["source"], record["path"]) == (
        "",
        "1.2.0",
        str(source),
        str(target),
    )
    assert _config(isolated_home)["plugins"]["entries"] == {"reviewer": {"enabled": True}}
    view = kairox("plugins", "inspect", "reviewer", "--json").json()
    assert (view["origin"], view["active"], view["trust"]) == ("installed", True, "community")
    hooks = kairox("hooks", "list", "--json").json()["hooks"]
    assert [(h["plugin"], h["approved"]) for h in hooks] == [("reviewer", False)]

    # installing it again (same version) swaps the copy in; a marketplace update says where it came from instead
    again = kairox("plugins", "install", source, "--yes")
    assert again.code == 0, again.stderr
    assert list(target.parent.iterdir()) == [target]
    update = kairox("plugins", "update", "reviewer")
    assert update.code == 1
    assert f"plugin 'reviewer' was installed from {source}, not from a marketplace" in update.stderr
    assert f"`kairox plugins install {source}`" in update.stderr

    removed = kairox("plugins", "uninstall", "reviewer", "-y")
    assert (removed.code, removed.stdout) == (0, "uninstalled reviewer 1.2.0\n")
    assert not (isolated_home / "plugins" / "@source" / "reviewer").exists()
    assert _records(isolated_home) == {}


def test_from_a_local_git_repository_with_a_sub_folder(tmp_path: Path, isolated_home: Path) -> None:
    repo = tmp_path / "repo"
    _plugin(repo / "plugins" / "reviewer", version=None)
    (repo / "README.md").write_text("plugins\n")
    _git(repo, "init", "-q", "-b", "main")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "first")
    head = _git(repo, "rev-parse", "--short", "HEAD")
    url = f"file://{repo}#plugins/reviewer"
    run = kairox("plugins", "install", url, "--yes")
    target = isolated_home / "plugins" / "@source" / "reviewer" / head
    assert run.code == 0, run.stderr
    assert f"cloning file://{repo}" in run.stderr
    assert (
        run.stdout == f"installed reviewer {head} from {url} into {target}\n"
    )  # no version in the manifest: the commit
    assert _files(target) == [
        ".claude-plugin/plugin.json",
        "check.sh",
        "commands/fix.md",
        "hooks/hooks.json",
        "skills/review/SKILL.md",
    ]
    assert _records(isolated_home)["reviewer"]["source"] == url
    listed = kairox("plugins", "list")
    assert listed.stdout.startswith(f"reviewer  {head}")

    missing = kairox("plugins", "install", f"file://{repo}#plugins/nothing", "--yes")
    assert missing.code == 1
    assert f"'plugins/nothing' does not exist in file://{repo}" in missing.stderr
    gone = kairox("plugins", "install", f"file://{tmp_path / 'no-such-repo'}", "--yes")
    assert (
        gone.code == 1
        and f"{tmp_path / 'no-such-repo'} does not exist\n  hint: give a plugin folder, a git URL" in gone.stderr
    )
    broken = kairox("plugins", "install", f"git+file://{tmp_path / 'no-such-repo'}", "--yes")
    assert broken.code == 1 and f"git clone of file://{tmp_path / 'no-such-repo'} failed: " in broken.stderr
    not_a_plugin = kairox("plugins", "install", f"file://{repo}", "--yes")
    assert not_a_plugin.code == 1
    assert f"file://{repo} holds no plugin" in not_a_plugin.stderr and "#sub/folder" in not_a_plugin.stderr
    assert sorted(p.name for p in (isolated_home / "plugins" / "@source").iterdir()) == ["reviewer"]


def test_a_deny_rule_stops_the_install_even_with_yes(tmp_path: Path, isolated_home: Path) -> None:
    (isolated_home / "kairox.toml").write_text('[policy.rules]\ndeny = ["plugins.install"]\n')
    run = kairox("plugins", "install", _plugin(tmp_path / "reviewer"), "--yes")
    assert run.code == 4, run.stderr
    assert "was not installed: " in run.stderr and "deny" in run.stderr
    assert _records(isolated_home) == {}


def test_a_name_still_installs_from_the_marketplaces(tmp_path: Path, isolated_home: Path) -> None:
    run = kairox("plugins", "install", "reviewer", "--yes")
    assert run.code == 1
    assert "plugin 'reviewer' is not in any configured marketplace" in run.stderr


def _at_terminal(args: list[str], answer: str, *, timeout: float = 60) -> tuple[int, str]:
    """Run ``kairox ARGS`` on a pseudo-terminal and answer the approval prompt once it is shown."""
    master, slave = os.openpty()
    proc = subprocess.Popen(
        [sys.executable, "-m", "kairox", *args], stdin=slave, stdout=slave, stderr=slave, start_new_session=True
    )
    os.close(slave)
    shown, answered = b"", False
    try:
        while True:
            ready, _, _ = select.select([master], [], [], timeout)
            assert ready, f"nothing more from the terminal after {timeout} s: {shown.decode(errors='replace')}"
            try:
                chunk = os.read(master, 4096)
            except OSError:  # EIO: the command ended
                break
            if not chunk:
                break
            shown += chunk
            if not answered and b"answer: " in shown:
                os.write(master, answer.encode() + b"\n")
                answered = True
        code = proc.wait(timeout=timeout)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(10)
        os.close(master)
    assert answered, shown.decode(errors="replace")
    return code, shown.decode(errors="replace").replace("\r\n", "\n")


@pytest.mark.parametrize(("answer", "installed"), [("d", False), ("o", True)])
def test_at_a_terminal_the_question_says_what_the_plugin_brings(
    tmp_path: Path, isolated_home: Path, answer: str, installed: bool
) -> None:
    source = _plugin(tmp_path / "reviewer")
    code, shown = _at_terminal(["plugins", "install", str(source)], answer)
    assert "kairox: plugins.install needs approval: " in shown
    assert '"brings": "1 skill, 1 command, 1 hook (runs `*: ./check.sh`)"' in shown
    assert f'"source": "{source}"' in shown
    assert code == (0 if installed else 4), shown
    assert ("reviewer" in _records(isolated_home)) is installed
