"""Y13: an approval shows what a call really writes. The model links ``summary.txt`` to a file outside (``ln -s``
is an allowed command), then writes ``summary.txt``: the request carries the target each path reaches, and every
front end (the command line's prompt, the TUI's modal, the GUI's dialog, elicitation in ``kairox serve``) shows it
where it differs from the name."""

from pathlib import Path

import pytest
from tests.registry._support import ScriptedApprover, settings

from kairox.cli._approver import render_request
from kairox.gateway._approver import question
from kairox.policy import ApprovalAnswer, ApprovalRequest, Rule
from kairox.policy._approval import PathTarget
from kairox.registry import build_registry
from kairox.runtime import link_notes
from kairox.tools import ToolCall
from kairox.tui._approval import ApprovalScreen
from kairox.web._backend import PendingApproval

pytestmark = pytest.mark.anyio


@pytest.fixture
def linked(tmp_path: Path) -> tuple[Path, Path]:
    ws = tmp_path / "ws"
    ws.mkdir()
    for name in ("home", "tmp"):
        (tmp_path / name).mkdir()
    target = tmp_path / "home" / ".bashrc"
    target.write_text("# start-up\n")
    (ws / "summary.txt").symlink_to(target)
    (ws / "notes.txt").write_text("a note\n")
    return ws, target


async def asked(ws: Path, path: str) -> ApprovalRequest:
    approver = ScriptedApprover(answers=[ApprovalAnswer.deny("no")])
    rule = Rule(action="ask", pattern="fs.write", file="kairox.toml", line=1)
    registry = await build_registry(settings(ws, rule), approver=approver)
    await registry.call(ToolCall(name="fs.write", arguments={"path": path, "content": "x\n"}))
    [request] = approver.requests
    return request


async def test_the_request_carries_the_target_a_linked_name_reaches(linked: tuple[Path, Path]) -> None:
    ws, target = linked
    request = await asked(ws, "summary.txt")
    assert request.targets == (PathTarget(written="summary.txt", target=str(target.resolve()), linked=True),)
    note = f"summary.txt is a link: the call reaches {target.resolve()}"
    assert link_notes(request) == [note]
    # each front end shows it with the question
    assert note in render_request(request)
    assert note in question(request)[0]
    assert PendingApproval(id="a1", request=request).to_json()["links"] == [note]
    assert target.read_text() == "# start-up\n"  # denied: nothing written


async def test_a_plain_path_is_its_own_target_and_shows_no_note(linked: tuple[Path, Path]) -> None:
    ws, _ = linked
    request = await asked(ws, "./notes.txt")
    assert request.targets == (
        PathTarget(written="./notes.txt", target=str((ws / "notes.txt").resolve()), linked=False),
    )
    assert link_notes(request) == []
    assert "is a link" not in render_request(request)


async def test_the_tui_modal_shows_the_target(linked: tuple[Path, Path], isolated_home: Path) -> None:
    from textual.app import App
    from textual.widgets import Static

    ws, target = linked
    request = await asked(ws, "summary.txt")
    app: App[None] = App()
    async with app.run_test() as pilot:
        app.push_screen(ApprovalScreen(request, ws))
        await pilot.pause()
        texts = [str(widget.render()) for widget in app.screen.query(Static)]
    assert any(f"summary.txt is a link: the call reaches {target.resolve()}" in text for text in texts), texts
