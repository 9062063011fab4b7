"""Screenshots (Textual's SVG export) of the main screen with Ready / Starting / Failed servers, the approval
modal and the /mcp panel, compared with the reviewed SVGs in tests/tui/snapshots/. Times are frozen (a fixed
clock, UTC) and counts come from fixed events or our own test server. ``KAIROX_UPDATE_SNAPSHOTS=1`` rewrites them."""

import os
import re
import shutil
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest
from tests.agent._support import CART, SERVERS

from kairox.agent import AssistantMessageCompleted, AssistantTextDelta, ContextMeasured, PlanUpdated
from kairox.agent._events import PlanEntry, PlanStatus
from kairox.config import resolve_config
from kairox.lsp import LspServerStarting
from kairox.mcp import McpServerFailed, McpServerReady, McpServerStarting
from kairox.policy import ApprovalRequest, GrantOption, RuleLayer
from kairox.registry import ToolCallDecided, ToolCallFinished, ToolsChanged
from kairox.runtime import RuntimeOptions, build_extension_context
from kairox.tui._app import KairoxApp
from kairox.tui._approval import ApprovalScreen
from kairox.tui._panels import McpPanel

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(120)]

SNAPSHOTS = Path(__file__).parent / "snapshots"
FROZEN = 1_767_225_600.0  # 2026-01-01 00:00:00 UTC
SIZE = (140, 36)
UPDATE = os.environ.get("KAIROX_UPDATE_SNAPSHOTS") == "1"  # read before the fixtures clear KAIROX_* variables


@pytest.fixture(autouse=True)
def utc(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setenv("TZ", "UTC")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


@pytest.fixture
def fixed_dir() -> Iterator[Path]:
    """A workspace at a path of fixed length (the process id, normalised in the comparison, keeps runs apart)."""
    root = Path("/tmp") / f"kx-snap-{os.getpid() % 10**7:07d}"  # one fixed prefix: paths on screen keep their length
    shutil.rmtree(root, ignore_errors=True)
    (root / ".git").mkdir(parents=True)
    yield root
    shutil.rmtree(root, ignore_errors=True)


def check(name: str, svg: str, fixed: Path | None = None) -> None:
    svg = re.sub(r"terminal-\d+", "terminal-0", svg)  # Rich derives the id from a salted hash()
    if fixed is not None:
        svg = svg.replace(fixed.name, "kx-snap-0000000")
    svg = re.sub(
        r"(servers/[\w.-]+)@[0-9a-f]{10}", r"\1@0000000000", svg
    )  # a project server's state folder: by workspace
    path = SNAPSHOTS / f"{name}.svg"
    if UPDATE or not path.exists():
        SNAPSHOTS.mkdir(exist_ok=True)
        path.write_text(svg, encoding="utf-8")
        if not UPDATE:
            pytest.fail(f"{path} did not exist: written now; review it and commit it")
    assert svg == path.read_text(encoding="utf-8"), (
        f"the screen differs from {path} (KAIROX_UPDATE_SNAPSHOTS=1 rewrites it)"
    )


def offline_app(workspace: Path, isolated_home: Path) -> KairoxApp:
    (isolated_home / "kairox.toml").write_text(
        'model = "gpt-4.1"\nmodel_provider = "openai"\n\n'
        '[mcp_servers.notes]\ncommand = "notes-server"\n\n[mcp_servers.search]\ncommand = "search-server"\n\n'
        '[mcp_servers.tickets]\ncommand = "tickets-server"\n\n'
        '[lsp_servers.python]\ncommand = "jedi-language-server"\nfile_patterns = ["*.py"]\n',
        encoding="utf-8",
    )
    return KairoxApp(
        RuntimeOptions(workspace=workspace), resolve_config(workspace), clock=lambda: FROZEN, start_session=False
    )


async def test_main_screen_with_ready_starting_and_failed_servers(fixed_dir: Path, isolated_home: Path) -> None:
    app = offline_app(fixed_dir, isolated_home)
    async with app.run_test(size=SIZE) as pilot:
        app.query_one("#composer").cursor_blink = False
        app.query_one("#conversation").user("Where are prices computed?")
        for event in (
            McpServerStarting(server="notes", transport="stdio"),
            McpServerStarting(server="search", transport="stdio"),
            McpServerStarting(server="tickets", transport="stdio"),
            McpServerReady(server="notes", tools=4),
            ToolsChanged(origin="notes", tools=4),
            McpServerFailed(
                server="tickets", reason="the server exited with code 1 before finishing the MCP handshake"
            ),
            AssistantTextDelta(text="Prices are computed in `shop/cart.py`:\n\n"),
            AssistantTextDelta(text="- `Cart.total()` sums the items\n"),
            AssistantMessageCompleted(
                turn=1,
                text="",
                tool_calls=({"id": "c1", "name": "fs_read", "tool": "fs.read", "arguments": {"path": "shop/cart.py"}},),
            ),
            ToolCallDecided(
                call_id="c1",
                tool="fs.read",
                decision="allow",
                reason="rule",
                source="rule",
                rule="fs.read(./**)",
                file="kairox.toml",
                line=11,
            ),
            ToolCallFinished(call_id="c1", tool="fs.read", duration_ms=3.0, size_chars=120, is_error=False),
            LspServerStarting(server="python"),
        ):
            app.handle_event(event)
        await pilot.pause(0.5)
        check("main_screen", app.export_screenshot(title="kairox tui"), fixed_dir)


async def test_approval_modal(fixed_dir: Path, isolated_home: Path) -> None:
    app = offline_app(fixed_dir, isolated_home)
    request = ApprovalRequest(
        tool="shell.exec",
        arguments={"command": "git push origin main"},
        command="git push origin main",
        reason="the rule ask shell.exec(git push*) matches (kairox.toml:12)",
        rule="shell.exec(git push*)",
        source="rule",
        grants=(
            GrantOption(
                rule="shell.exec(git push origin main)",
                covers="exactly this command line",
                exact=True,
                persistable=True,
            ),
            GrantOption(rule="shell.exec(git push*)", covers="every `git push` command", persistable=True),
        ),
        layers=(RuleLayer.USER, RuleLayer.PROJECT),
    )
    async with app.run_test(size=SIZE) as pilot:
        app.query_one("#composer").cursor_blink = False
        app.push_screen(ApprovalScreen(request))
        await pilot.pause(0.2)
        check("approval_modal", app.export_screenshot(title="kairox tui"), fixed_dir)


async def test_approval_modal_of_an_edit_shows_its_diff(fixed_dir: Path, isolated_home: Path) -> None:
    (fixed_dir / "shop").mkdir()
    (fixed_dir / "shop" / "cart.py").write_text(CART, encoding="utf-8")
    app = offline_app(fixed_dir, isolated_home)
    arguments = {
        "path": "shop/cart.py",
        "old_string": "        return sum(self.items)\n",
        "new_string": "        return sum(self.items) - self.discount\n",
    }
    request = ApprovalRequest(
        tool="fs.edit",
        arguments=arguments,
        reason="the rule ask fs.edit matches (kairox.toml:3)",
        rule="fs.edit",
        source="rule",
        grants=(GrantOption(rule="fs.edit(./shop/cart.py)", covers="this file", exact=True, persistable=True),),
        layers=(RuleLayer.USER, RuleLayer.PROJECT),
    )
    async with app.run_test(size=SIZE) as pilot:
        app.query_one("#composer").cursor_blink = False
        app.push_screen(ApprovalScreen(request, fixed_dir))
        await pilot.pause(0.2)
        check("approval_edit_modal", app.export_screenshot(title="kairox tui"), fixed_dir)


async def test_mcp_panel(fixed_dir: Path, isolated_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    isolated_home = fixed_dir / "home"  # the panel shows the server's state folder in it: a path of fixed length
    isolated_home.mkdir()
    monkeypatch.setenv("KAIROX_HOME", str(isolated_home))
    launcher = fixed_dir / "basic-server"
    launcher.write_text(f'#!/bin/sh\nexec "{sys.executable}" "{SERVERS / "basic_server.py"}"\n', encoding="utf-8")
    launcher.chmod(0o755)
    (fixed_dir / "kairox.toml").write_text(f'[mcp_servers.basic]\ncommand = "{launcher}"\n', encoding="utf-8")
    (isolated_home / "kairox.toml").write_text(
        '[mcp_servers.off]\ncommand = "never-started"\nenabled = false\n', encoding="utf-8"
    )
    from kairox.config import trust_workspace

    trust_workspace(fixed_dir)
    resolved = resolve_config(fixed_dir)
    app = KairoxApp(RuntimeOptions(workspace=fixed_dir), resolved, clock=lambda: FROZEN, start_session=False)
    async with build_extension_context(resolved=resolved) as context, app.run_test(size=SIZE) as pilot:
        app.query_one("#composer").cursor_blink = False
        app.board.sync(context)
        app.context = context
        app.push_screen(McpPanel(context, app.board, approver=app.approver))
        await pilot.pause(0.3)
        with anyio.fail_after(5):
            while not app.screen.query("#mcp-tools").first().row_count:
                await pilot.pause(0.05)
        check("mcp_panel", app.export_screenshot(title="kairox tui"), fixed_dir)


async def test_main_screen_with_a_plan_above_the_prompt_and_cached_tokens_in_the_meter(
    fixed_dir: Path, isolated_home: Path
) -> None:
    app = offline_app(fixed_dir, isolated_home)
    steps = [
        ("Read shop/cart.py", "completed"),
        ("Add a discount to Cart.total", "in_progress"),
        ("Run the tests", "pending"),
    ]
    async with app.run_test(size=SIZE) as pilot:
        app.query_one("#composer").cursor_blink = False
        app.query_one("#conversation").user("Add a 10% discount to the cart total.")
        app.handle_event(PlanUpdated(entries=tuple(PlanEntry(content=c, status=PlanStatus(s)) for c, s in steps)))
        app.handle_event(
            ContextMeasured(
                used_tokens=14_200,
                window_tokens=200_000,
                tools_tokens=3_100,
                tools=12,
                source="usage",
                share=0.071,
                cached_tokens=13_900,
            )
        )
        await pilot.pause(0.5)
        check("plan", app.export_screenshot(title="kairox tui"), fixed_dir)


async def test_subagent_calls_nest_under_their_running_task(fixed_dir: Path, isolated_home: Path) -> None:
    from kairox.agent import SubagentEvent, SubagentStarted

    app = offline_app(fixed_dir, isolated_home)

    def task(call_id: str, agent: str, what: str) -> dict[str, object]:
        arguments = {"subagent_type": agent, "description": what, "prompt": "..."}
        return {"id": call_id, "name": "task", "tool": "task", "arguments": arguments}

    def child(agent: str, call_id: str, event: object) -> SubagentEvent:
        return SubagentEvent(agent=agent, agent_id=f"{agent}-1", parent_call_id=call_id, inner=event)  # type: ignore[arg-type]

    def read(call_id: str, path: str) -> AssistantMessageCompleted:
        calls = ({"id": call_id, "name": "fs_read", "tool": "fs.read", "arguments": {"path": path}},)
        return AssistantMessageCompleted(turn=1, text="", tool_calls=calls)

    allowed = {"decision": "allow", "reason": "mode", "source": "mode", "rule": None, "file": None, "line": None}
    async with app.run_test(size=SIZE) as pilot:
        app.query_one("#composer").cursor_blink = False
        app.query_one("#conversation").user("Review the cart and its tests, in parallel.")
        for event in (
            AssistantMessageCompleted(
                turn=1, text="", tool_calls=(task("t1", "reviewer", "review cart"), task("t2", "tester", "check tests"))
            ),
            SubagentStarted(
                agent="reviewer",
                agent_id="reviewer-1",
                parent_call_id="t1",
                description="review cart",
                model="m",
                tools=4,
                transcript="x",
            ),
            child("reviewer", "t1", read("c1", "shop/cart.py")),
            child("tester", "t2", read("c1", "tests/test_cart.py")),
            child("reviewer", "t1", ToolCallDecided(call_id="c1", tool="fs.read", **allowed)),  # type: ignore[arg-type]
            child(
                "reviewer",
                "t1",
                ToolCallFinished(call_id="c1", tool="fs.read", duration_ms=2.0, size_chars=9, is_error=False),
            ),
            child("reviewer", "t1", read("c2", "shop/prices.py")),
            child("tester", "t2", ToolCallDecided(call_id="c1", tool="fs.read", **allowed)),  # type: ignore[arg-type]
        ):
            app.handle_event(event)
        await pilot.pause(0.5)
        blocks = app.query_one("#conversation").blocks
        assert [b.call_id for b in app.query_one("#conversation").query(".tool-call")] == [  # type: ignore[attr-defined]
            "t1",
            "reviewer-1/c1",
            "reviewer-1/c2",
            "t2",
            "tester-1/c1",
        ]
        assert blocks["t1"].outcome == "reviewer running: 1 call(s) done"
        check("subagents", app.export_screenshot(title="kairox tui"), fixed_dir)
