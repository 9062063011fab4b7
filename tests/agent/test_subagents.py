"""Subagents: a session's ``task`` calls run child sessions against the scripted model server, whose requests are
told apart by the agent's prompt; real MCP servers, real processes, the real gate."""

import json
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from tests.agent._support import SERVERS, user_config
from tests.servers.model_server import ScriptedModelServer

from kairox.agent import (
    ApprovalRequested,
    SubagentEvent,
    SubagentStarted,
    SubagentStopped,
    TurnEndReason,
    open_session,
    subagent_history,
)
from kairox.config import trust_workspace
from kairox.events import RecordingSink
from kairox.policy import ApprovalAnswer, ApprovalRequest
from kairox.registry import ToolCallFinished, ToolCallRequested

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(120), pytest.mark.usefixtures("api_key")]

BASIC = SERVERS / "basic_server.py"


def calls(*items: tuple[str, str, dict[str, object]], text: str = "") -> dict[str, object]:
    return {"reply": "tool_calls", "text": text, "calls": [{"id": i, "name": n, "arguments": a} for i, n, a in items]}


def task(call_id: str, agent: str, prompt: str = "Do it.") -> tuple[str, str, dict[str, object]]:
    return call_id, "task", {"subagent_type": agent, "description": f"run {agent}", "prompt": prompt}


def agent_file(workspace: Path, name: str, frontmatter: str, body: str) -> Path:
    path = workspace / ".kairox" / "agents" / f"{name}.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"---\nname: {name}\ndescription: The {name} agent.\n{frontmatter}---\n{body}\n", encoding="utf-8")
    return path


def own_server(name: str = "own") -> str:
    return f"mcpServers:\n  {name}:\n    command: {sys.executable}\n    args: ['{BASIC}', '--name', '{name}']\n"


def tool_names(body: dict[str, Any]) -> list[str]:
    return [t.get("name") or (t.get("function") or {}).get("name") for t in body.get("tools") or []]


def inner(sink: RecordingSink, kind: type) -> list[Any]:
    return [e for e in sink.of_type(SubagentEvent) if isinstance(e.inner, kind)]


async def test_the_child_sees_its_own_servers_tool_the_parent_never_does_and_disallowed_tools_are_gone(
    workspace: Path, isolated_home: Path
) -> None:
    frontmatter = own_server() + "disallowedTools: Write, Bash\nskills: [release-notes]\n"
    agent_file(workspace, "reviewer", frontmatter, "REVIEWER-PROMPT: review.")
    hooks = "".join(
        f'[[hooks.{event}]]\ncommand = "cat >> {workspace / "hooks.log"}; echo >> {workspace / "hooks.log"}"\n\n'
        for event in ("subagent_start", "subagent_stop", "pre_tool_use")
    )
    trust_workspace(workspace)
    seen: dict[str, list[str]] = {}

    def child_tools(body: dict[str, Any]) -> None:
        seen["child"] = tool_names(body)

    def parent_tools(body: dict[str, Any]) -> None:
        seen.setdefault("parent", tool_names(body))

    script = [
        {**calls(task("t1", "reviewer")), "check": parent_tools},
        {"reply": "text", "text": "The reviewer says: fine.", "expect": {"tool_results": {"t1": "echoed: fine"}}},
    ]
    child = [
        {
            **calls(("e1", "mcp__own__echo", {"message": "echoed: fine"})),
            "check": child_tools,
            "expect": {"system_contains": "List the changes under Added"},  # the skill it names, preloaded
        },
        {"reply": "text", "text": "echoed: fine", "expect": {"tool_results": {"e1": "echoed: fine"}}},
    ]
    sink = RecordingSink()
    with ScriptedModelServer("openai", script, routes={"REVIEWER-PROMPT": child}) as server:
        user_config(isolated_home, server, wire="openai", extra='[policy.rules]\nallow = ["mcp__*"]\n\n' + hooks)
        async with open_session(workspace, events=[sink]) as session:
            result = await session.run_turn("Have it reviewed.")
            parent_visible = {s.name for s in session.context.registry.visible_tools()}
            kept = [
                (m.role, [c.id for c in m.tool_calls], [r.call_id for r in m.tool_results]) for m in session.messages
            ]
    assert result.reason is TurnEndReason.COMPLETED and result.text == "The reviewer says: fine."
    assert "mcp__own__echo" in seen["child"] and "fs_read" in seen["child"]
    assert "fs_write" not in seen["child"] and "shell_exec" not in seen["child"] and "task" not in seen["child"]
    assert "task" in seen["parent"] and not any(n.startswith("mcp__own__") for n in seen["parent"])
    assert not any(n.startswith("mcp__own__") for n in parent_visible)
    started, stopped = sink.of_type(SubagentStarted), sink.of_type(SubagentStopped)
    assert [(e.agent, e.parent_call_id) for e in started] == [("reviewer", "t1")]
    assert [(e.reason, e.tool_calls) for e in stopped] == [(TurnEndReason.COMPLETED, 1)]
    finished = inner(sink, ToolCallFinished)
    assert [(e.agent, e.parent_call_id, e.inner.tool, e.inner.is_error) for e in finished] == [
        ("reviewer", "t1", "mcp__own__echo", False)
    ]
    requests = [json.loads(line) for line in (workspace / "hooks.log").read_text().split("\n") if line.strip()]
    agent_id = started[0].agent_id
    assert [(r["hook_event_name"], r.get("agent_id"), r.get("agent_type")) for r in requests] == [
        ("PreToolUse", None, None),  # the parent's task call
        ("SubagentStart", agent_id, "reviewer"),
        ("PreToolUse", agent_id, "reviewer"),
        ("SubagentStop", agent_id, "reviewer"),
    ]
    child_transcript = Path(requests[-1]["agent_transcript_path"])
    assert child_transcript.parent.name == session.session_id and child_transcript.is_file()
    assert '"echoed: fine"' in child_transcript.read_text()
    # the session's conversation (what compaction summarises) holds the task's result; the child's turns are in
    # its own transcript, which a resume shows under the task
    assert kept == [("user", [], []), ("assistant", ["t1"], []), ("tool", [], ["t1"]), ("assistant", [], [])]
    made = ({"id": "e1", "tool": "mcp__own__echo", "arguments": {"message": "echoed: fine"}},)
    assert subagent_history(session.transcript.path) == [("t1", agent_id, made)]


async def test_an_ask_of_a_child_names_the_agent_and_the_denial_reaches_the_childs_model(
    workspace: Path, isolated_home: Path
) -> None:
    agent_file(workspace, "writer", "tools: [Write]\n", "WRITER-PROMPT")
    asked: list[ApprovalRequest] = []

    class Person:
        async def request_approval(self, request: ApprovalRequest) -> ApprovalAnswer:
            asked.append(request)
            return ApprovalAnswer.deny("not in this folder")

    script = [
        calls(task("t1", "writer")),
        {"reply": "text", "text": "It was refused.", "expect": {"tool_results": {"t1": "could not write"}}},
    ]
    child = [
        calls(("w1", "fs_write", {"path": "a.txt", "content": "x"})),
        {"reply": "text", "text": "I could not write.", "expect": {"tool_results": {"w1": "not in this folder"}}},
    ]
    sink = RecordingSink()
    with ScriptedModelServer("openai", script, routes={"WRITER-PROMPT": child}) as server:
        user_config(isolated_home, server, wire="openai", extra='[policy.rules]\nask = ["fs.write"]\n')
        async with open_session(workspace, approver=Person(), events=[sink]) as session:
            result = await session.run_turn("Write it.")
    assert result.reason is TurnEndReason.COMPLETED
    assert [(r.tool, r.agent) for r in asked] == [("fs.write", "writer")]
    assert asked[0].reason.startswith("writer wants to run fs.write: ")
    assert [e.agent for e in sink.of_type(ApprovalRequested)] == ["writer"]
    assert not (workspace / "a.txt").exists()


async def test_a_session_grant_in_a_child_holds_for_that_child_only_unless_given_for_the_whole_session(
    workspace: Path, isolated_home: Path
) -> None:
    agent_file(workspace, "writer", "", "WRITER-PROMPT")
    answers = iter([ApprovalAnswer.allow_session(), ApprovalAnswer.allow_session(whole_session=True)])
    asked: list[ApprovalRequest] = []

    class Person:
        async def request_approval(self, request: ApprovalRequest) -> ApprovalAnswer:
            asked.append(request)
            return next(answers)

    write = ("fs_write", {"path": "a.txt", "content": "x"})
    script = [
        calls(task("t1", "writer")),
        calls(task("t2", "writer")),
        calls(task("t3", "writer")),
        {**calls(("w9", *write)), "expect": {"tool_results": {"t3": "done"}}},
        {"reply": "text", "text": "All written.", "expect": {"tool_results": {"w9": "a.txt"}}},
    ]
    child = [step for n in (1, 2, 3) for step in (calls((f"w{n}", *write)), calls((f"v{n}", *write)), {"text": "done"})]
    with ScriptedModelServer("openai", script, routes={"WRITER-PROMPT": child}) as server:
        user_config(isolated_home, server, wire="openai", extra='[policy]\napproval_policy = "untrusted"\n')
        async with open_session(workspace, approver=Person()) as session:
            result = await session.run_turn("Write it three times.")
    assert result.reason is TurnEndReason.COMPLETED
    # the first child's grant answered its second write only; the second child asked again and granted it for the
    # whole session: the third child and the session itself were not asked
    assert [r.agent for r in asked] == ["writer", "writer"]


async def test_two_tasks_of_one_answer_run_side_by_side(workspace: Path, isolated_home: Path) -> None:
    agent_file(workspace, "a", own_server("slowa"), "AGENT-A")
    agent_file(workspace, "b", own_server("slowb"), "AGENT-B")
    trust_workspace(workspace)
    script = [
        calls(task("ta", "a"), task("tb", "b")),
        {"reply": "text", "text": "Both back.", "expect": {"tool_results": {"ta": "A done", "tb": "B done"}}},
    ]
    routes = {
        f"AGENT-{x}": [
            calls((f"s{x}", f"mcp__slow{x.lower()}__slow", {"steps": 1, "delay": 1.0})),
            {"reply": "text", "text": f"{x} done"},
        ]
        for x in "AB"
    }
    sink = RecordingSink()
    with ScriptedModelServer("openai", script, routes=routes) as server:
        user_config(isolated_home, server, wire="openai", extra='[policy.rules]\nallow = ["mcp__*"]\n')
        async with open_session(workspace, events=[sink]) as session:
            result = await session.run_turn("Run both.")
    assert result.reason is TurnEndReason.COMPLETED
    order = [
        ("start" if isinstance(e.inner, ToolCallRequested) else "end", e.agent)
        for e in sink.of_type(SubagentEvent)
        if isinstance(e.inner, ToolCallRequested | ToolCallFinished)
    ]
    # each slow call began before either ended: the children ran at the same time
    assert sorted(order[:2]) == [("start", "a"), ("start", "b")] and {o[0] for o in order[2:]} == {"end"}


async def test_cancelling_the_turn_stops_both_children_and_their_servers(workspace: Path, isolated_home: Path) -> None:
    agent_file(workspace, "a", own_server("hanga"), "AGENT-A")
    agent_file(workspace, "b", own_server("hangb"), "AGENT-B")
    trust_workspace(workspace)
    script = [calls(task("ta", "a"), task("tb", "b"))]
    routes = {f"AGENT-{x}": [calls((f"h{x}", f"mcp__hang{x.lower()}__wait_forever", {}))] for x in "AB"}
    sink = RecordingSink()
    with ScriptedModelServer("openai", script, routes=routes) as server:
        user_config(isolated_home, server, wire="openai", extra='[policy.rules]\nallow = ["mcp__*"]\n')
        async with open_session(workspace, events=[sink]) as session, anyio.create_task_group() as group:
            outcome: list[Any] = []

            async def turn() -> None:
                outcome.append(await session.run_turn("Run both."))

            group.start_soon(turn)
            with anyio.fail_after(60):
                while len(inner(sink, ToolCallRequested)) < 2:
                    await anyio.sleep(0.05)
            session.cancel()
    assert outcome[0].reason is TurnEndReason.CANCELLED
    assert sorted((e.agent, e.reason) for e in sink.of_type(SubagentStopped)) == [
        ("a", TurnEndReason.CANCELLED),
        ("b", TurnEndReason.CANCELLED),
    ]
    # no_process_left (autouse) fails the test if a server of either child still runs


async def test_agents_of_an_untrusted_workspace_start_no_server_and_its_plugins_bring_none(
    workspace: Path, isolated_home: Path
) -> None:
    agent_file(workspace, "local", own_server("never"), "LOCAL-AGENT")
    plugin = workspace / ".kairox" / "plugins" / "p"
    (plugin / ".claude-plugin").mkdir(parents=True)
    (plugin / ".claude-plugin" / "plugin.json").write_text('{"name": "p"}', encoding="utf-8")
    (plugin / "agents").mkdir()
    (plugin / "agents" / "helper.md").write_text(
        f"---\nname: helper\ndescription: Helps.\n{own_server('neither')}---\nHELPER", encoding="utf-8"
    )
    script = [
        calls(task("t1", "local"), task("t2", "p:helper")),
        {
            "reply": "text",
            "text": "Done.",
            "expect": {"tool_results": {"t1": "were not started", "t2": "'p:helper' does not exist"}},
        },
    ]
    child = [
        {"reply": "text", "text": "no tools", "check": lambda body: not any("never" in n for n in tool_names(body))}
    ]
    sink = RecordingSink()
    with ScriptedModelServer("openai", script, routes={"LOCAL-AGENT": child}) as server:
        user_config(isolated_home, server, wire="openai")
        async with open_session(workspace, events=[sink]) as session:
            assert session.context.agents.get("p:helper") is None
            result = await session.run_turn("Try both.")
    assert result.reason is TurnEndReason.COMPLETED
    assert [e for e in sink.of_type(SubagentEvent) if type(e.inner).__name__.startswith("McpServer")] == []


async def test_with_depth_two_a_child_starts_its_own_subagent_whose_events_nest_twice(
    workspace: Path, isolated_home: Path
) -> None:
    agent_file(workspace, "lead", "", "LEAD-AGENT")
    script = [calls(task("t1", "lead")), {"reply": "text", "text": "Done.", "expect": {"tool_results": {"t1": "deep"}}}]
    routes = {
        "LEAD-AGENT": [
            {**calls(task("g1", "general-purpose")), "expect": {"tools_include": ["task"]}},
            {"reply": "text", "text": "deep", "expect": {"tool_results": {"g1": "from below"}}},
        ],
        "subagent 'general-purpose'": [
            {"reply": "text", "text": "from below", "check": lambda body: "task" not in tool_names(body)}
        ],
    }
    sink = RecordingSink()
    with ScriptedModelServer("openai", script, routes=routes) as server:
        user_config(isolated_home, server, wire="openai", extra="[agent]\nmax_task_depth = 2\n")
        async with open_session(workspace, events=[sink]) as session:
            result = await session.run_turn("Go deep.")
    assert result.reason is TurnEndReason.COMPLETED
    deep = [e for e in sink.of_type(SubagentEvent) if isinstance(e.inner, SubagentStarted)]
    assert [(e.agent, e.parent_call_id, e.inner.agent, e.inner.parent_call_id, e.inner.depth) for e in deep] == [
        ("lead", "t1", "general-purpose", "g1", 2)
    ]


async def test_a_plugin_agent_gets_only_the_tools_its_plugin_manifest_permits(
    workspace: Path, isolated_home: Path
) -> None:
    # the manifest's permissions.tools narrow what its agents may use, whatever the agent file asks for
    plugin = isolated_home / "plugins" / "kit"
    manifest = {"name": "kit", "permissions": {"tools": ["fs.read", "fs.list"]}}
    (plugin / ".claude-plugin").mkdir(parents=True)
    (plugin / ".claude-plugin" / "plugin.json").write_text(json.dumps(manifest), encoding="utf-8")
    (plugin / "agents").mkdir()
    (plugin / "agents" / "helper.md").write_text(
        "---\nname: helper\ndescription: The helper.\ntools: Read, Bash, Write\n---\nHELPER-PROMPT: help.\n",
        encoding="utf-8",
    )
    seen: dict[str, list[str]] = {}

    def child_tools(body: dict[str, Any]) -> None:
        seen["child"] = tool_names(body)

    script = [calls(task("t1", "kit:helper")), {"reply": "text", "text": "Helped."}]
    child = [{"reply": "text", "text": "done", "check": child_tools}]
    with ScriptedModelServer("openai", script, routes={"HELPER-PROMPT": child}) as server:
        user_config(isolated_home, server, wire="openai")
        async with open_session(workspace) as session:
            result = await session.run_turn("Get help.")
    assert result.reason is TurnEndReason.COMPLETED
    assert sorted(seen["child"]) == ["fs_read"]  # Bash and Write asked for, not permitted; fs.list permitted, not asked
