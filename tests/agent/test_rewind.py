"""Rewind (A6): the files a turn changed (by fs.write, fs.edit and, in a git workspace, a shell command) go back
to how they were before it, the conversation too when asked; what no rewind undoes is said; ``kairox rewind``
does the same for a session that is not running."""

import hashlib
import json
import os
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest
from tests.agent._support import CART, transcript_records, user_config
from tests.helpers import kairox
from tests.servers.model_server import ScriptedModelServer

from kairox.agent import Rewound, TurnEndReason, open_session
from kairox.agent._rewind import Checkpoints
from kairox.events import RecordingSink

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(120), pytest.mark.usefixtures("api_key")]

WIRES = ["openai", "anthropic"]
SHELL = "echo changed > notes.txt && rm todo.txt && echo made > made.txt"


def calls(*items: tuple[str, str, dict[str, Any]]) -> dict[str, Any]:
    return {"reply": "tool_calls", "calls": [{"id": i, "name": n, "arguments": a} for i, n, a in items]}


def changing_turn() -> list[dict[str, Any]]:
    return [
        calls(
            ("w1", "fs_write", {"path": "src/new.py", "content": "print('new')\n"}),
            ("e1", "fs_edit", {"path": "shop/cart.py", "old_string": "sum(", "new_string": "max("}),
            ("s1", "shell_exec", {"command": SHELL}),
        ),
        {"reply": "text", "text": "Changed three things.", "expect": {"tool_results": {"s1": "exit code: 0"}}},
    ]


def files(root: Path) -> dict[str, str]:
    return {
        p.relative_to(root).as_posix(): p.read_text()
        for p in sorted(root.rglob("*"))
        if p.is_file() and ".git" not in p.parts and ".kairox" not in p.parts
    }


@pytest.mark.parametrize("wire", WIRES)
async def test_rewind_puts_back_what_fs_write_fs_edit_and_a_shell_command_changed_and_cuts_the_conversation(
    wire: str, workspace: Path, isolated_home: Path
) -> None:
    before = files(workspace)
    script = [
        *changing_turn(),
        calls(("w2", "fs_write", {"path": "notes.txt", "content": "second\n"})),
        {"reply": "text", "text": "Wrote notes again."},
        {"reply": "text", "text": "Fresh start.", "check": _only_the_new_prompt},
    ]
    sink = RecordingSink()
    with ScriptedModelServer(wire, script) as server:
        user_config(isolated_home, server, wire=wire)
        async with open_session(workspace, events=[sink]) as session:
            assert (await session.run_turn("Change things.")).reason is TurnEndReason.COMPLETED
            assert (await session.run_turn("Write the notes again.")).reason is TurnEndReason.COMPLETED
            changed = files(workspace)
            plan = await session.rewind(1, conversation=True)
            rewound = files(workspace)
            assert session.messages == []
            await session.run_turn("Start over.")
            transcript = session.transcript.path
    assert changed["notes.txt"] == "second\n" and "made.txt" in changed and "todo.txt" not in changed
    assert rewound == before, "every file is as it was before turn 1"
    assert [p for p, _ in plan.restore] == ["notes.txt", "shop/cart.py", "todo.txt"]
    assert plan.remove == ("made.txt", "src/new.py")
    assert plan.irreversible == (
        f"`{SHELL}` (shell.exec): what it did outside the workspace (a push, a network call, other files)",
    )
    (event,) = sink.of_type(Rewound)
    assert (event.turn, event.messages, event.removed) == (1, 0, ("made.txt", "src/new.py"))
    records = transcript_records(transcript)
    assert next(r["keep"] for r in records if r.get("type") == "rewind") == 0


def _only_the_new_prompt(body: dict[str, Any]) -> None:
    users = [m for m in body["messages"] if m["role"] == "user"]
    assert len(users) == 1 and "Start over." in json.dumps(users[0]), users


async def test_without_git_a_shell_change_is_not_put_back_and_the_rewind_says_so(
    workspace: Path, isolated_home: Path
) -> None:
    (workspace / ".git").rmdir()
    with ScriptedModelServer("openai", changing_turn()) as server:
        user_config(isolated_home, server, wire="openai")
        async with open_session(workspace) as session:
            await session.run_turn("Change things.")
            plan = await session.rewind()
    assert [p for p, _ in plan.restore] == ["shop/cart.py"] and plan.remove == ("src/new.py",)
    assert (workspace / "shop" / "cart.py").read_text() == CART
    assert (workspace / "notes.txt").read_text() == "changed\n", "a shell command's change stays without git"
    assert plan.irreversible[0].endswith("and inside it (not a git repository: no snapshot)")


def test_kairox_rewind_undoes_the_latest_turn_of_the_latest_session_and_asks_first(
    workspace: Path, isolated_home: Path
) -> None:
    subprocess.run(["git", "init", "-q"], cwd=workspace, check=True)  # a real repository this time
    (workspace / ".gitignore").write_text("build/\n")
    (workspace / "build").mkdir()
    (workspace / "build" / "out.txt").write_text("ignored\n")
    before = files(workspace)
    with ScriptedModelServer("anthropic", changing_turn()) as server:
        user_config(isolated_home, server, wire="anthropic")
        assert kairox("--workspace", str(workspace), "run", "Change things.").code == 0
    refused = kairox("--workspace", str(workspace), "rewind")
    assert refused.code == 2 and "pass --yes" in refused.stderr
    assert "  put back  shop/cart.py" in refused.stderr and "  remove    made.txt" in refused.stderr
    done = kairox("--workspace", str(workspace), "rewind", "--yes", "--conversation", "--json")
    assert done.code == 0, done.stderr
    report = json.loads(done.stdout)
    assert (report["turn"], report["messages"], report["removed"]) == (1, 0, ["made.txt", "src/new.py"])
    assert files(workspace) == before
    again = kairox("--workspace", str(workspace), "rewind", "--yes")
    assert again.code == 6 and "no turn to rewind" in again.stderr
    assert (
        "checkpoints"
        not in subprocess.run(["git", "for-each-ref"], cwd=workspace, capture_output=True, text=True, check=True).stdout
    ), "the snapshot is kept outside the repository: no ref, no branch"


def test_a_same_size_rewrite_that_keeps_the_modification_time_is_snapshotted_anew(tmp_path: Path) -> None:
    # the snapshot's index knows a file's digest by its status: a rewrite of the same size whose modification
    # time is set back (as a coarse clock or a tool keeping times would leave it) still changes its change time
    workspace, home = tmp_path / "ws", tmp_path / "home"
    workspace.mkdir()
    note = workspace / "note.txt"
    note.write_text("aaaa")
    os.utime(note, ns=(1_000_000_000, 1_000_000_000))
    checkpoints = Checkpoints(home, workspace, "s1")
    first = checkpoints._snapshot()
    time.sleep(0.01)
    note.write_text("bbbb")
    os.utime(note, ns=(1_000_000_000, 1_000_000_000))
    second = checkpoints._snapshot()
    assert first is not None and second is not None
    assert first["note.txt"] != second["note.txt"]
    assert second["note.txt"] == hashlib.sha256(b"bbbb").hexdigest()
