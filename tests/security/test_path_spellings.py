"""One path resolution for every tool (attack corpus): a path an MCP tool is given is resolved exactly as ``fs.read``
resolves its own (the kernel's walk: ``..``, symlinks, ``/proc/self/cwd/...``, ``/proc/self/root/...``,
``/proc/PID/cwd/...``) and, where a rule on reading exists, checked for other names of the files it hides (a hard
link made before the rule), before the rules and the protected paths hold. The same corpus goes through ``fs.read``
and through a real MCP server's ``read_file``, and the gate refuses the same spellings. A ``/proc/self`` path an
MCP tool is given names the server's files, not Kairox's, so Kairox cannot see it through: it asks."""

import os
import sys
from pathlib import Path

import pytest
from tests.registry._support import settings
from tests.security._support import workspace

from kairox.config import McpServerConfig
from kairox.mcp import McpServerManager, McpToolAdapter
from kairox.policy import NonInteractiveApprover, Rule
from kairox.registry import build_registry
from kairox.tools import ToolCall, ToolResult

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(120)]

SERVER = Path(__file__).resolve().parents[1] / "servers" / "files_server.py"
SECRET = "the-secret-value"
RULES = (
    Rule(action="deny", pattern="fs.read(secrets/**)", layer="user", file="kairox.toml", line=1),
    Rule(action="allow", pattern="mcp__files__*", layer="user", file="kairox.toml", line=2),
)


def _spellings(ws: Path) -> list[tuple[str, str]]:
    """(case, path) naming the hidden file, each as fs.read resolves it."""
    pid = os.getpid()
    return [
        ("plain", "secrets/key"),
        ("absolute", str(ws / "secrets" / "key")),
        ("dot-dot", "src/../secrets/key"),
        ("symlink", "link-to-secrets/key"),
        ("hard-link", "notes.txt"),
        ("hard-link-absolute", str(ws / "notes.txt")),
        ("proc-self-cwd", "/proc/self/cwd/secrets/key"),
        ("proc-self-root", f"/proc/self/root{ws}/secrets/key"),
        ("proc-pid-cwd", f"/proc/{pid}/cwd/secrets/key"),
        ("proc-thread-self", "/proc/thread-self/cwd/secrets/key"),
        ("proc-self-cwd-hard-link", "/proc/self/cwd/notes.txt"),
        ("double-slash", "//proc//self//cwd//secrets/key"),
    ]


def _layout(tmp_path: Path) -> Path:
    ws = workspace(tmp_path)
    (ws / "secrets" / "key").write_text(SECRET)
    os.link(ws / "secrets" / "key", ws / "notes.txt")  # made before the rule: another name no rule covers
    (ws / "link-to-secrets").symlink_to(ws / "secrets")
    (ws / "src" / "ok.txt").write_text("fine")
    return ws


async def _both(
    tmp_path: Path, paths: list[str], monkeypatch: pytest.MonkeyPatch
) -> tuple[Path, list[ToolResult], list[ToolResult]]:
    ws = _layout(tmp_path)
    monkeypatch.chdir(ws)  # Kairox and the server run in the workspace, as `kairox serve` does
    registry = await build_registry(settings(ws, *RULES), approver=NonInteractiveApprover())
    config = McpServerConfig(command=sys.executable, args=[str(SERVER)], cwd=str(ws))
    async with McpServerManager({"files": config}, workspace=ws, home=tmp_path / "home") as manager:
        await registry.add_provider(McpToolAdapter(manager.clients["files"]))
        builtin = [await registry.call(ToolCall(name="fs.read", arguments={"path": p})) for p in paths]
        mcp = [await registry.call(ToolCall(name="mcp__files__read_file", arguments={"path": p})) for p in paths]
    return ws, builtin, mcp


def _refused(result: ToolResult) -> bool:
    return result.is_error and SECRET not in result.text_content()


async def test_every_spelling_of_a_hidden_file_is_refused_by_fs_read_and_by_the_mcp_tool(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    spellings = _spellings(tmp_path / "ws")
    _, builtin, mcp = await _both(tmp_path, [p for _, p in spellings], monkeypatch)
    assert {case: _refused(r) for (case, _), r in zip(spellings, builtin, strict=True)} == dict.fromkeys(
        (c for c, _ in spellings), True
    )
    assert not any("no tool named" in r.text_content() for r in [*builtin, *mcp])
    # refused by the gate itself (the server was never called), with the reason fs.read gives
    gate = {case: r.meta.get("decision", {}).get("decision") for (case, _), r in zip(spellings, mcp, strict=True)}
    assert gate == dict.fromkeys((c for c, _ in spellings), "deny")
    by_link = mcp[[c for c, _ in spellings].index("hard-link")].text_content()
    assert "another name (hard link) of" in by_link and "fs.read(secrets/**)" in by_link


async def test_a_harmless_file_is_read_by_both_and_a_proc_self_spelling_is_asked_about_for_the_mcp_tool(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _, builtin, mcp = await _both(
        tmp_path, ["src/ok.txt", str(tmp_path / "ws" / "src" / "ok.txt"), "/proc/self/cwd/src/ok.txt"], monkeypatch
    )
    assert [(r.is_error, r.text_content()) for r in builtin] == [(False, "fine")] * 3
    assert [(r.is_error, r.text_content()) for r in mcp[:2]] == [(False, "fine")] * 2
    asked = mcp[2]
    assert asked.is_error and asked.meta["decision"]["decision"] == "deny"  # asked, and nobody could answer
    assert "names a file by the process that opens it" in asked.text_content()
