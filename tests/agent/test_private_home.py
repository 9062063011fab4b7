"""Y15: what Kairox keeps under its home (conversations, logs, spilled outputs, caches) is the person's alone: files
0600 in 0700 folders, and a home written before that (0644 transcripts in a 0755 folder) tightened at start."""

import os
import stat
from pathlib import Path

import pytest
from tests.agent._support import make_workspace, user_config
from tests.agent.test_cli import KEY
from tests.helpers import kairox
from tests.servers.model_server import ScriptedModelServer

pytestmark = pytest.mark.timeout(180)


def modes(root: Path) -> dict[str, int]:
    """The permission bits of every file and folder under ``root`` (the root itself as ``.``)."""
    found = {".": stat.S_IMODE(root.stat().st_mode)}
    for below, folders, files in os.walk(root):
        for name in (*folders, *files):
            path = Path(below) / name
            found[str(path.relative_to(root))] = stat.S_IMODE(path.lstat().st_mode)
    return found


def test_transcripts_logs_and_spills_are_private_and_an_older_home_is_tightened(
    tmp_path: Path, isolated_home: Path
) -> None:
    workspace = make_workspace(tmp_path / "repo")
    (isolated_home / "sessions").mkdir(mode=0o755)
    old = isolated_home / "sessions" / "20260101-000000-aaaaaa.jsonl"
    old.write_text("{}\n")
    old.chmod(0o644)
    isolated_home.chmod(0o755)
    script = [
        {"reply": "tool_calls", "calls": [{"id": "s1", "name": "shell_exec", "arguments": {"command": "seq 20000"}}]},
        {"reply": "text", "text": "done", "expect": {"tool_results": {"s1": "output truncated"}}},
    ]
    with ScriptedModelServer("openai", script) as server:
        user_config(
            isolated_home,
            server,
            wire="openai",
            extra='[tools]\noutput_limit_chars = 1000\n[policy.rules]\nallow = ["shell.exec(seq *)"]\n',
        )
        run = kairox("--workspace", workspace, "run", "count", env=KEY)
    assert run.code == 0, run.stderr
    found = modes(isolated_home)
    private = {"sessions", "spill"}
    assert private <= set(found), found
    assert found["."] == 0o700
    assert old.stat().st_mode & 0o077 == 0  # the older transcript, tightened
    for name, mode in found.items():
        path = isolated_home / name
        if name.split("/", 1)[0] not in {*private, "logs", "cache"}:
            continue
        assert mode == (0o700 if path.is_dir() else 0o600), (name, oct(mode))
    new = [p for p in (isolated_home / "sessions").iterdir() if p != old]
    assert new and all(stat.S_IMODE(p.stat().st_mode) == 0o600 for p in new)
