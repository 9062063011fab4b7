"""Rules on reading files hold for the built-ins that read whole folders: a search or a listing of a folder
leaves out what a deny or ask rule keeps from ``fs.read``."""

import shutil
from pathlib import Path

import pytest
from tests.registry._support import settings

from kairox.policy import NonInteractiveApprover, Rule
from kairox.registry import build_registry
from kairox.tools import BuiltinSettings, ToolCall

RG = shutil.which("rg")
ENGINES = [
    pytest.param(RG, id="rg", marks=pytest.mark.skipif(RG is None, reason="ripgrep is not installed")),
    pytest.param(None, id="python"),
]
RULES = (
    Rule(action="deny", pattern="fs.read(*.env)", file="k.toml", line=1),
    Rule(action="deny", pattern="fs.read(./secrets/**)", file="k.toml", line=2),
    Rule(action="ask", pattern="fs.read(./private/**)", file="k.toml", line=3),
)


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    for rel in ("ok.txt", "deploy/prod.env", "secrets/a.txt", "private/b.txt"):
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text("API_KEY=value\n")
    (tmp_path / "home").mkdir()
    (tmp_path / "tmp").mkdir()
    return root


@pytest.mark.anyio
@pytest.mark.parametrize("rg", ENGINES)
async def test_search_leaves_out_files_that_rules_keep_from_reading(ws: Path, rg: str | None) -> None:
    registry = await build_registry(
        settings(ws, *RULES), approver=NonInteractiveApprover(), builtins=BuiltinSettings(ripgrep=rg)
    )
    result = await registry.call(ToolCall(name="search.ripgrep", arguments={"pattern": "API_KEY"}))
    assert result.text_content() == (
        "ok.txt:1: API_KEY=value\n"
        "[search.ripgrep: 3 file(s) left out: reading them is denied or needs approval "
        "(ask rule 'fs.read(./private/**)' (k.toml:3); deny rule 'fs.read(*.env)' "
        "(k.toml:1); deny rule 'fs.read(./secrets/**)' (k.toml:2))]"
    )
    # without rules the same search finds every file
    open_registry = await build_registry(
        settings(ws), approver=NonInteractiveApprover(), builtins=BuiltinSettings(ripgrep=rg)
    )
    found = await open_registry.call(ToolCall(name="search.ripgrep", arguments={"pattern": "API_KEY"}))
    assert found.structured is not None and len(found.structured["matches"]) == 4


@pytest.mark.anyio
async def test_listing_leaves_out_files_that_rules_keep_from_reading(ws: Path) -> None:
    registry = await build_registry(settings(ws, *RULES), approver=NonInteractiveApprover())
    result = await registry.call(ToolCall(name="fs.list", arguments={}))
    assert result.structured is not None and result.structured["files"] == ["ok.txt"]
    assert (
        result.text_content()
        .splitlines()[-1]
        .startswith("[fs.list: 3 file(s) left out: reading them is denied or needs approval")
    )


@pytest.mark.anyio
async def test_python_search_does_not_follow_a_symlink_out_of_the_workspace(ws: Path) -> None:
    outside = ws.parent / "outside.txt"
    outside.write_text("API_KEY=host\n")
    (ws / "link.txt").symlink_to(outside)
    registry = await build_registry(
        settings(ws), approver=NonInteractiveApprover(), builtins=BuiltinSettings(ripgrep=None)
    )
    result = await registry.call(ToolCall(name="search.ripgrep", arguments={"pattern": "API_KEY=host"}))
    assert result.text_content() == "(no matches)"  # as rg, which does not follow symlinks either
