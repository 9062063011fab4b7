"""Skills an MCP server offers through the skills extension, read into the registry as ``<server>:<name>``: here the
server is ``kairox serve`` over another workspace (a real server speaking the extension), started as any configured
server is (confined, behind the workspace's trust)."""

import json
import sys
from pathlib import Path

from tests.helpers import kairox

SKILL = """---
name: greet-back
description: Greet someone back by name.
arguments:
  - name: who
    required: true
---
Say hello to ${who}, warmly.
"""
LOAD = 'skill {"name": "team:greet-back", "arguments": {"who": "Ann"}}\n'


def _places(tmp_path: Path, isolated_home: Path) -> tuple[Path, Path, Path]:
    """A served workspace with one skill (trusted under the server's own home) and a workspace that configures
    ``kairox serve`` over it as the MCP server ``team``."""
    served, serve_home, ws = tmp_path / "served", tmp_path / "serve-home", tmp_path / "ws"
    skill = served / ".kairox" / "skills" / "greet-back" / "SKILL.md"
    (skill.parent / "references").mkdir(parents=True)
    skill.write_text(SKILL)
    (skill.parent / "references" / "TONE.md").write_text("Warm.\n")
    (served / ".git").mkdir()
    (ws / ".git").mkdir(parents=True)
    own = {"KAIROX_HOME": str(serve_home), "KAIROX_SYSTEM_CONFIG": str(serve_home / "none.toml")}
    assert kairox("trust", cwd=served, env=own).code == 0
    args = ["-m", "kairox", "--workspace", str(served), "serve"]
    (ws / "kairox.toml").write_text(
        f"[mcp_servers.team]\ncommand = {json.dumps(sys.executable)}\nargs = {json.dumps(args)}\n"
        f"env = {{ KAIROX_HOME = {json.dumps(own['KAIROX_HOME'])}, "
        f"KAIROX_SYSTEM_CONFIG = {json.dumps(own['KAIROX_SYSTEM_CONFIG'])} }}\n"
        '[policy.rules]\nallow = ["mcp__team__read_resource"]\n'
    )
    return served, serve_home, ws


def _listed(ws: Path) -> list[tuple[str, str, bool]]:
    run = kairox("skills", "list", "--mcp", "--json", cwd=ws, timeout=180)
    assert run.code == 0, run.stderr
    return [(s["qualified_name"], s["scope"], s["offered"]) for s in run.json()["skills"]]


def test_a_servers_skill_is_listed_as_server_colon_name_and_loads_only_in_a_trusted_workspace(
    tmp_path: Path, isolated_home: Path
) -> None:
    _, serve_home, ws = _places(tmp_path, isolated_home)
    # untrusted: the server does not start, so none of its skills is listed
    assert _listed(ws) == []
    assert kairox("trust", cwd=ws).code == 0
    assert _listed(ws) == [("team:greet-back", "mcp", True)]
    # without --mcp the list starts no server (it stays light), so it has the workspace's own skills only
    assert kairox("skills", "list", "--json", cwd=ws).json()["skills"] == []
    shown = kairox("skills", "list", "--mcp", cwd=ws, timeout=180)
    assert shown.stdout.split()[:3] == ["team:greet-back", "mcp", "on"]
    # nothing was read before the skill was used; loading it reads and checks its SKILL.md, through the gate
    fetched = isolated_home / "mcp-skills" / "team" / "greet-back" / "SKILL.md"
    assert not fetched.exists()
    loaded = kairox("tools", "call", "-i", cwd=ws, stdin=LOAD + "exit\n", timeout=180)
    assert "Say hello to Ann, warmly." in loaded.stdout, loaded.stdout + loaded.stderr
    assert fetched.read_text() == SKILL
    audit = [json.loads(line) for line in (serve_home / "logs" / "gateway.jsonl").read_text().splitlines()]
    assert [(r["tool"], r["arguments"]["uri"]) for r in audit if r["tool"] == "skill"] == [
        ("skill", "skill://greet-back/SKILL.md")
    ]
    # a skill's files are its own, nothing beside them
    outside = 'mcp__team__read_resource {"uri": "skill://greet-back/../../kairox.toml"}\n'
    refused = kairox("tools", "call", "-i", cwd=ws, stdin=outside + "exit\n", timeout=180)
    assert "is not a file of skill 'greet-back'" in refused.stdout + refused.stderr, refused.stdout + refused.stderr


def test_a_skill_the_servers_gate_denies_is_not_offered_and_its_files_are_not_read(
    tmp_path: Path, isolated_home: Path
) -> None:
    _, serve_home, ws = _places(tmp_path, isolated_home)
    assert kairox("trust", cwd=ws).code == 0
    (serve_home / "kairox.toml").write_text('[policy.rules]\ndeny = ["skill(greet-back)"]\n')
    assert _listed(ws) == []
    refused = kairox("tools", "call", "-i", cwd=ws, stdin=LOAD + "exit\n", timeout=180)
    # the session has no skill at all, so not even the tool that loads one
    assert "skill was not run: no tool named 'skill'" in refused.stderr, refused.stdout + refused.stderr
