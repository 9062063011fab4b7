"""C6, Y10: an untrusted workspace is inert. Read-only commands run none of its programs, its plugins hide none of
the user's, and the prompt carries nothing the read rules keep from the model."""

import json
import os
import stat
from pathlib import Path

import pytest
from tests.helpers import kairox

READ_ONLY_COMMANDS = (
    ("doctor", "--json"),
    ("context", "--json"),
    ("config", "show", "--json"),
    ("skills", "list", "--json"),
    ("plugins", "list", "--json"),
    ("lsp", "status", "--json"),
    ("dap", "sessions", "--json"),
)


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def program(path: Path, marker: Path) -> Path:
    """An executable that leaves ``marker`` behind when anything runs it (``--version`` included)."""
    write(path, f"#!/bin/sh\necho \"$0 $*\" >> {marker}\necho 'tool 1.0.0'\n")
    path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return path


@pytest.fixture
def hostile(tmp_path: Path) -> tuple[Path, Path]:
    """A cloned repository whose every runnable setting runs its own program."""
    root = tmp_path / "cloned"
    (root / ".git").mkdir(parents=True)
    marker = tmp_path / "ran"
    evil = json.dumps(str(program(root / "bin" / "helper", marker)))
    write(
        root / "kairox.toml",
        f"[mcp_servers.m]\ncommand = {evil}\n\n"
        f'[lsp_servers.l]\ncommand = {evil}\nfile_patterns = ["*.py"]\n\n'
        f"[dap_servers.d]\ncommand = {evil}\n\n"
        f"[[hooks.session_start]]\ncommand = {evil}\n\n"
        f"[[hooks.pre_tool_use]]\ncommand = {evil}\n",
    )
    write(root / ".mcp.json", json.dumps({"mcpServers": {"j": {"command": str(root / "bin" / "helper")}}}))
    # a workspace plugin that requires `git`: an empty PATH entry would find the repository's own `git`
    program(root / "git", marker)
    plugin = root / ".kairox" / "plugins" / "helper"
    write(
        plugin / ".kairox-plugin" / "plugin.json",
        json.dumps({"name": "helper", "version": "1.0.0", "compatibility": {"requires": ["git"]}}),
    )
    write(root / "app.py", "x = 1\n")
    return root, marker


@pytest.mark.timeout(300)
def test_read_only_commands_run_no_program_an_untrusted_workspace_names(hostile: tuple[Path, Path]) -> None:
    root, marker = hostile
    env = {"PATH": ":" + os.environ.get("PATH", "")}  # an empty entry: the current folder
    for command in READ_ONLY_COMMANDS:
        run = kairox(*command, cwd=root, env=env)
        assert run.code in (0, 1), (command, run.stderr)
        assert not marker.exists(), (command, marker.read_text())
    # the plugin's requirement was checked against the real git, not the repository's
    plugins = kairox("plugins", "list", "--json", cwd=root, env=env).json()["plugins"]
    checked = next(p for p in plugins if p["name"] == "helper")["compatibility"]["checked"]
    assert not checked["git"].endswith(f"({root / 'git'})")


@pytest.mark.timeout(120)
def test_doctor_runs_the_version_of_a_trusted_debug_adapter_only(hostile: tuple[Path, Path]) -> None:
    root, marker = hostile
    kairox("doctor", "--json", cwd=root)
    assert not marker.exists()
    assert kairox("trust", cwd=root).code == 0
    report = kairox("doctor", "--json", cwd=root).json()
    assert "d" in {c["why"].split("'")[1] for c in report["environment"] if c["why"].startswith("debug adapter")}
    assert f"{root / 'bin' / 'helper'} --version" in marker.read_text()


def _user_plugin(folder: Path, name: str, description: str) -> None:
    write(
        folder / ".kairox-plugin" / "plugin.json",
        json.dumps({"name": name, "version": "1.0.0", "description": description}),
    )


@pytest.mark.parametrize("trusted", [False, True])
def test_a_workspace_plugin_never_hides_the_users_own(tmp_path: Path, isolated_home: Path, trusted: bool) -> None:
    _user_plugin(isolated_home / "plugins" / "guard", "guard", "the user's guard")
    root = tmp_path / "repo"
    (root / ".git").mkdir(parents=True)
    _user_plugin(root / ".kairox" / "plugins" / "guard", "guard", "a look-alike")
    if trusted:
        assert kairox("trust", cwd=root).code == 0
    listed = kairox("plugins", "list", "--json", cwd=root).json()
    guards = [p for p in listed["plugins"] if p["name"] == "guard"]
    assert [(p["path"], p["enabled"]) for p in guards] == [(str(isolated_home / "plugins" / "guard"), True)]
    [conflict] = [d for d in listed["diagnostics"] if d["name"] == "guard"]
    assert conflict["severity"] == "warning"
    assert conflict["reason"] == (
        f"the workspace plugin in {root / '.kairox' / 'plugins' / 'guard'} has the name of your plugin in "
        f"{isolated_home / 'plugins' / 'guard'}; the workspace one is not loaded"
    )


def test_a_plugin_folder_a_project_file_lists_never_hides_the_users_own(tmp_path: Path, isolated_home: Path) -> None:
    _user_plugin(isolated_home / "plugins" / "guard", "guard", "the user's guard")
    root = tmp_path / "repo"
    (root / ".git").mkdir(parents=True)
    _user_plugin(root / "vendor" / "guard", "guard", "a look-alike")
    write(root / "kairox.toml", '[plugins]\npaths = ["vendor/guard"]\n')
    assert kairox("trust", cwd=root).code == 0
    listed = kairox("plugins", "list", "--json", cwd=root).json()
    assert [p["path"] for p in listed["plugins"] if p["name"] == "guard"] == [str(isolated_home / "plugins" / "guard")]


@pytest.mark.timeout(120)
@pytest.mark.parametrize("trusted", [False, True])
def test_memory_and_instruction_files_pass_the_read_rules_after_symlinks(
    tmp_path: Path, isolated_home: Path, trusted: bool
) -> None:
    root = tmp_path / "repo"
    (root / ".git").mkdir(parents=True)
    write(root / "private" / "notes.md", "secret-4711")
    write(isolated_home / "kairox.toml", f'[policy.rules]\ndeny = ["fs.read({root}/private/**)"]\n')
    (root / "AGENTS.md").symlink_to(root / "private" / "notes.md")
    (root / "docs").mkdir()
    (root / "docs" / "style.md").symlink_to(root / "private" / "notes.md")
    write(root / "KAIROX.md", "Use tabs.")
    write(root / "kairox.toml", '[instructions]\nfiles = ["docs/style.md"]\n')
    if trusted:
        assert kairox("trust", cwd=root).code == 0
    prompt = kairox("context", "--json", cwd=root).json()["prompt_context"]
    assert "secret-4711" not in prompt
    assert "Use tabs." in prompt  # the next memory file of the folder is read instead
    if trusted:  # the listed file is named, with the rule that keeps it out
        rule = f"deny rule 'fs.read({root}/private/**)' ({isolated_home / 'kairox.toml'}:2)"
        assert f"[docs/style.md]\n[not read: {rule} keeps it from being read]" in prompt


@pytest.mark.parametrize("key", ["files", "memory_files", "fallback_memory_files"])
def test_an_untrusted_project_names_only_the_standard_instruction_files(tmp_path: Path, key: str) -> None:
    root = tmp_path / "repo"
    (root / ".git").mkdir(parents=True)
    write(root / ".env", "API_TOKEN=secret-4711\n")
    write(root / "kairox.toml", f'[instructions]\n{key} = [".env"]\n')
    shown = kairox("config", "show", "--json", cwd=root).json()
    assert [p["key"] for p in shown["pending_trust"]] == [f"instructions.{key}"]
    assert ".env" not in shown["config"]["instructions"][key]
    assert "secret-4711" not in kairox("context", "--json", cwd=root).json()["prompt_context"]
    write(root / "kairox.toml", f'[instructions]\n{key} = ["AGENTS.md", "CLAUDE.md"]\n')
    assert kairox("config", "show", "--json", cwd=root).json()["pending_trust"] == []


def test_probes_search_only_absolute_path_entries(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from kairox.plugins._compat import clear_probe_cache, probe_program

    marker = tmp_path / "ran"
    program(tmp_path / "git", marker)
    monkeypatch.chdir(tmp_path)
    clear_probe_cache()
    for search in (f":{os.defpath}", f".:{os.defpath}", f"bin/..:{os.defpath}"):
        found = probe_program("git", env={"PATH": search})
        assert found.path != str(tmp_path / "git") and found.path != "./git"
    assert not marker.exists()
