"""A ``file:`` URI in an MCP tool's arguments is a path, however it is spelled: ``file:/abs`` (one slash),
``file:///abs``, ``file://localhost/abs``, ``FILE:``, percent-encoded (``secre%74s``), relative (``file:secrets/key``),
with a host (``file://secrets/key``: read both as ``/key`` and as the relative ``secrets/key`` a server that strips
``file://`` would open) and with ``~``. The deny rules on paths and the protected paths hold for each; the tool is a
real MCP server that writes a marker file each time it really runs, and leaves none."""

import sys
from pathlib import Path

import pytest
from tests.registry._support import ScriptedApprover, settings
from tests.security._support import workspace

from kairox._util._json import JsonObject
from kairox.config import ApprovalPolicy, McpServerConfig
from kairox.mcp import McpServerManager, McpToolAdapter
from kairox.policy import ApprovalRequest, Rule
from kairox.registry import ToolRegistry
from kairox.tools import ToolCall, ToolResult

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(60)]

SERVER = Path(__file__).resolve().parents[1] / "servers" / "hostile_server.py"
TOOL = "mcp__h__t0"
DENY_SECRETS = Rule(action="deny", pattern="fs.read(secrets/**)", layer="user", file="kairox.toml", line=1)
ALLOW_SERVER = Rule(action="allow", pattern="mcp__h__*", layer="user", file="kairox.toml", line=2)

# (case, a URI naming the workspace's secrets/key; WS is the workspace's absolute path without its leading slash)
SECRET_URIS = [
    ("one-slash", "file:/WS/secrets/key"),
    ("three-slashes", "file:///WS/secrets/key"),
    ("four-slashes", "file:////WS/secrets/key"),
    ("localhost", "file://localhost/WS/secrets/key"),
    ("upper-case-scheme", "FILE:///WS/secrets/key"),
    ("mixed-case-localhost", "File://LocalHost/WS/secrets/key"),
    ("percent-encoded-letter", "file:///WS/secre%74s/key"),
    ("percent-encoded-slash", "file:///WS/secrets%2Fkey"),
    ("percent-encoded-one-slash", "file:%2FWS%2Fsecrets%2Fkey"),
    ("dot-dot", "file:///WS/src/../secrets/key"),
    ("relative", "file:secrets/key"),
    ("host-read-as-folder", "file://secrets/key"),
    ("query-and-fragment", "file:///WS/secrets/key?raw=1#top"),
    ("padded", "  file:/WS/secrets/key  "),
]


async def _call(
    tmp_path: Path, arguments: JsonObject, *rules: Rule
) -> tuple[ToolResult, list[ApprovalRequest], list[str]]:
    """One call of the server's ``t0`` through a real registry, with ``WS`` in its strings replaced by the
    workspace's path: its result, what the person was asked (the scripted person says no) and the markers written."""
    ws = workspace(tmp_path)
    (ws / "secrets" / "key").write_text("sk-live-123", encoding="utf-8")
    markers = tmp_path / "markers"
    markers.mkdir()
    config = McpServerConfig(command=sys.executable, args=[str(SERVER), "--tools", "1", "--marker-dir", str(markers)])
    approver = ScriptedApprover()
    registry = ToolRegistry(settings(ws, *rules, approval=ApprovalPolicy.ON_REQUEST), approver=approver)
    filled = _fill(arguments, str(ws).lstrip("/"))
    async with McpServerManager({"h": config}, workspace=ws, home=tmp_path / "home") as manager:
        await registry.add_provider(McpToolAdapter(manager.clients["h"]))
        result = await registry.call(ToolCall(name=TOOL, arguments=filled))  # type: ignore[arg-type]
    return result, approver.requests, sorted(p.name for p in markers.iterdir())


def _fill(value: object, where: str) -> object:
    """``value`` with ``WS`` in every string it holds replaced
    by ``where`` (its slashes encoded where the URI's are)."""
    if isinstance(value, str):
        return value.replace("WS", where.replace("/", "%2F") if "%2F" in value else where)
    if isinstance(value, list):
        return [_fill(item, where) for item in value]
    if isinstance(value, dict):
        return {key: _fill(item, where) for key, item in value.items()}
    return value


@pytest.mark.parametrize(("case", "uri"), SECRET_URIS, ids=[case for case, _ in SECRET_URIS])
async def test_a_file_uri_in_any_spelling_is_held_to_the_deny_rules_on_paths(
    tmp_path: Path, case: str, uri: str
) -> None:
    result, asked, ran = await _call(tmp_path, {"x": uri}, DENY_SECRETS, ALLOW_SERVER)

    assert asked == []
    assert result.meta["decision"]["reason"] == "denied by deny rule 'fs.read(secrets/**)' (kairox.toml:1)"
    assert result.is_error and ran == []


@pytest.mark.parametrize(("case", "uri"), SECRET_URIS, ids=[case for case, _ in SECRET_URIS])
async def test_a_file_uri_in_any_spelling_is_held_to_the_deny_rules_also_when_nested(
    tmp_path: Path, case: str, uri: str
) -> None:
    result, asked, ran = await _call(tmp_path, {"resources": [{"name": "a"}, {"uri": uri}]}, DENY_SECRETS, ALLOW_SERVER)  # type: ignore[dict-item]

    assert asked == []
    assert result.meta["decision"]["reason"] == "denied by deny rule 'fs.read(secrets/**)' (kairox.toml:1)"
    assert result.is_error and ran == []


# (case, a URI naming a protected path, what the question says)
PROTECTED_URIS = [
    ("one-slash-git", "file:/WS/.git/hooks/pre-commit", ".git"),
    ("localhost-mcp-json", "file://localhost/WS/.mcp.json", ".mcp.json"),
    ("encoded-kairox-toml", "file:///WS/kairox%2Etoml", "kairox.toml"),
    ("home-bashrc", "file:~/.bashrc", ".bashrc"),
    ("relative-claude", "FILE:.claude/settings.json", ".claude"),
]


@pytest.mark.parametrize(("case", "uri", "named"), PROTECTED_URIS, ids=[case for case, _, _ in PROTECTED_URIS])
async def test_a_file_uri_naming_a_protected_path_is_asked_about(
    tmp_path: Path, case: str, uri: str, named: str
) -> None:
    result, asked, ran = await _call(tmp_path, {"x": uri}, ALLOW_SERVER)

    assert [r.source for r in asked] == ["protected_path"] and named in asked[0].reason
    assert result.is_error and ran == []


# strings that only look like a file URI, and URIs of files the rules do not cover: the call runs
HARMLESS = [
    ("prose", {"x": "file: secrets/key is where the key lives"}),
    ("other-file", {"x": "file:/WS/src/main.py"}),
    ("other-scheme", {"x": "https://example.org/secrets/key"}),
    ("scheme-alone", {"x": "file:"}),
]


@pytest.mark.parametrize(("case", "arguments"), HARMLESS, ids=[case for case, _ in HARMLESS])
async def test_a_call_naming_no_covered_file_runs(tmp_path: Path, case: str, arguments: JsonObject) -> None:
    result, asked, ran = await _call(tmp_path, arguments, DENY_SECRETS, ALLOW_SERVER)

    assert asked == []
    assert (result.is_error, result.text_content(), ran) == (False, "ok t0", ["t0-1"])
