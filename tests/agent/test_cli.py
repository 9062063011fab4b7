"""``kairox run`` and ``kairox sessions`` as a user runs them, against the scripted model server."""

import json
import os
import shutil
from pathlib import Path

import pytest
from tests.agent._support import BIN, make_workspace, user_config
from tests.helpers import kairox
from tests.servers.model_server import ScriptedModelServer

pytestmark = pytest.mark.timeout(180)

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
KEY = {"KAIROX_TEST_MODEL_KEY": "sk-test-0123456789abcdef", "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}"}


def test_run_json_on_the_example_workspace_prints_a_parseable_event_stream(tmp_path: Path, isolated_home: Path) -> None:
    shutil.copytree(EXAMPLES, tmp_path / "examples", ignore=shutil.ignore_patterns("__pycache__"))
    workspace = tmp_path / "examples" / "workspace"
    assert kairox("--workspace", workspace, "trust").code == 0
    script = [
        {
            "reply": "tool_calls",
            "calls": [{"id": "n1", "name": "mcp__notes__search_notes", "arguments": {"query": "release"}}],
            "expect": {
                "system_contains": "Prices are integers in cents",
                "tools_include": ["mcp__notes__search_notes", "skill"],
            },
        },
        {"reply": "text", "text": "The notes mention the release.", "expect": {"tool_results": {"n1": "release"}}},
    ]
    with ScriptedModelServer("openai", script) as server:
        user_config(isolated_home, server, wire="openai")
        run = kairox("--workspace", workspace, "run", "--json", "What do the notes say about the release?", env=KEY)
    assert run.code == 0, run.stderr
    events = [json.loads(line) for line in run.stdout.splitlines()]
    names = [e["event"] for e in events]
    assert names.index("SessionStarted") < names.index("UserMessageSubmitted") < names.index("ModelRequestStarted")
    assert names.index("TurnEnded") < names.index("SessionEnded") < names.index("ExtensionContextClosed")
    finished = [e for e in events if e["event"] == "ToolCallFinished"]
    assert [(e["call_id"], e["tool"], e["is_error"]) for e in finished] == [("n1", "mcp__notes__search_notes", False)]
    decided = [e for e in events if e["event"] == "ToolCallDecided"]
    assert [(e["decision"], e["rule"]) for e in decided] == [("allow", "mcp__notes__*")]
    text = "".join(e["text"] for e in events if e["event"] == "AssistantTextDelta")
    assert text == "The notes mention the release."
    [ended] = [e for e in events if e["event"] == "TurnEnded"]
    assert ended["reason"] == "completed" and ended["tool_calls"] == 1


def test_run_streams_text_to_stdout_and_a_line_per_tool_call_to_stderr(tmp_path: Path, isolated_home: Path) -> None:
    workspace = make_workspace(tmp_path / "repo")
    script = [
        {
            "reply": "tool_calls",
            "calls": [
                {"id": "r1", "name": "fs_read", "arguments": {"path": "notes.txt"}},
                {"id": "w1", "name": "fs_write", "arguments": {"path": "x.txt", "content": "x"}},
            ],
        },
        {
            "reply": "text",
            "text": "Read it; the write was refused.",
            "expect": {"tool_results": {"r1": "first note", "w1": "no one can approve"}},
        },
    ]
    with ScriptedModelServer("anthropic", script) as server:
        user_config(isolated_home, server, wire="anthropic", extra='[policy.rules]\nask = ["fs.write"]\n')
        run = kairox("--workspace", workspace, "run", "Read the notes and write x.txt", env=KEY)
    assert run.code == 0, run.stderr
    assert run.stdout == "Read it; the write was refused.\n"
    lines = [line.strip() for line in run.stderr.splitlines() if line.strip().startswith("tool ")]
    assert len(lines) == 2
    assert lines[0].startswith('tool fs.read {"path": "notes.txt"} -> allow by mode')
    assert lines[1].startswith('tool fs.write {"path": "x.txt", "content": "x"} -> deny by approver (rule fs.write)')


def test_continue_and_resume_carry_the_history_and_sessions_list_shows_the_session(
    tmp_path: Path, isolated_home: Path
) -> None:
    workspace = make_workspace(tmp_path / "repo")

    def sees(*needles: str):  # type: ignore[no-untyped-def]
        def check(body: dict[str, object]) -> None:
            text = json.dumps(body["messages"])
            for needle in needles:
                assert needle in text, f"{needle!r} is not in the history"

        return check

    script = [
        {"reply": "text", "text": "Answer one."},
        {"reply": "text", "text": "Answer two.", "check": sees("Question one", "Answer one.")},
        {"reply": "text", "text": "Answer three.", "check": sees("Question one", "Answer two.", "Question three")},
    ]
    with ScriptedModelServer("openai", script) as server:
        user_config(isolated_home, server, wire="openai")
        first = kairox("--workspace", workspace, "run", "Question one", env=KEY)
        assert first.code == 0, first.stderr
        second = kairox("--workspace", workspace, "run", "--continue", "Question two", env=KEY)
        assert second.code == 0, second.stderr
        listed = kairox("--workspace", workspace, "sessions", "list", "--json")
        [session] = listed.json()
        third = kairox("--workspace", workspace, "run", "--resume", session["id"], "Question three", env=KEY)
    assert third.code == 0, third.stderr
    assert third.stdout == "Answer three.\n"
    assert session["turns"] == 2 and session["first_prompt"] == "Question one" and session["model"] == "scripted-model"
    assert kairox("--workspace", workspace, "sessions", "list", "--json").json()[0]["turns"] == 3
    missing = kairox("--workspace", workspace, "run", "--resume", "no-such-session", "hi", env=KEY)
    assert missing.code == 6 and "no session 'no-such-session'" in missing.stderr


def test_run_without_the_api_key_exits_3_naming_the_variable(tmp_path: Path, isolated_home: Path) -> None:
    workspace = make_workspace(tmp_path / "repo")
    with ScriptedModelServer("openai", []) as server:
        user_config(isolated_home, server, wire="openai")
        run = kairox("--workspace", workspace, "run", "hi", env={"KAIROX_TEST_MODEL_KEY": ""})
    assert run.code == 3
    assert "KAIROX_TEST_MODEL_KEY is not set" in run.stderr


def test_run_that_hits_max_turns_exits_7(tmp_path: Path, isolated_home: Path) -> None:
    workspace = make_workspace(tmp_path / "repo")
    script = [{"reply": "tool_calls", "calls": [{"id": "r1", "name": "fs_read", "arguments": {"path": "notes.txt"}}]}]
    with ScriptedModelServer("openai", script) as server:
        user_config(isolated_home, server, wire="openai", extra="[agent]\nmax_turns = 1\n")
        run = kairox("--workspace", workspace, "run", "Read forever", env=KEY)
    assert run.code == 7
    assert "max_turns" in run.stderr


def test_ctrl_c_during_a_slow_tool_cancels_the_turn_exits_130_and_the_server_is_told(
    tmp_path: Path, isolated_home: Path
) -> None:
    import signal
    import subprocess
    import sys
    import time

    from tests.agent._support import SERVERS

    workspace = make_workspace(tmp_path / "repo")
    marker = tmp_path / "cancelled"
    extra = (
        '[policy.rules]\nallow = ["mcp__slow__wait_forever"]\n\n'
        f'[mcp_servers.slow]\ncommand = "{sys.executable}"\nargs = ["{SERVERS / "basic_server.py"}"]\n'
        f'env = {{ KAIROX_TEST_MARKER = "{marker}" }}\n'
    )
    script = [{"reply": "tool_calls", "calls": [{"id": "x1", "name": "mcp__slow__wait_forever", "arguments": {}}]}]
    with ScriptedModelServer("openai", script) as server:
        user_config(isolated_home, server, wire="openai", extra=extra)
        proc = subprocess.Popen(
            [sys.executable, "-m", "kairox", "--workspace", str(workspace), "run", "--json", "Wait."],
            env={**os.environ, **KEY},
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        try:
            assert proc.stdout is not None
            for line in proc.stdout:  # wait until the tool call is running
                if json.loads(line)["event"] == "ToolCallRequested":
                    break
            time.sleep(0.5)
            proc.send_signal(signal.SIGINT)
            rest, stderr = proc.communicate(timeout=60)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    assert proc.returncode == 130, stderr
    events = [json.loads(line) for line in rest.splitlines()]
    [ended] = [e for e in events if e["event"] == "TurnEnded"]
    assert ended["reason"] == "cancelled"
    assert [e["call_id"] for e in events if e["event"] == "ToolCallFinished"] == ["x1"]
    assert marker.read_text() == "cancelled"
    [session] = kairox("--workspace", workspace, "sessions", "list", "--json").json()
    records = [json.loads(line) for line in Path(session["path"]).read_text().splitlines()]
    assert [r["message"]["role"] for r in records if r["type"] == "message"] == ["user", "assistant", "tool"]


@pytest.mark.parametrize("wire", ["openai", "anthropic"])
def test_a_finished_run_leaves_its_whole_answer_trace_and_transcript_although_it_skips_the_teardown(
    wire: str, tmp_path: Path, isolated_home: Path
) -> None:
    workspace = make_workspace(tmp_path / "repo")
    answer = "".join(f"line {i} of a long answer\n" for i in range(4000))  # more than a pipe holds: flushed at the end
    trace = tmp_path / "trace.jsonl"
    with ScriptedModelServer(wire, [{"reply": "text", "text": answer}]) as server:
        user_config(isolated_home, server, wire=wire)
        run = kairox("--workspace", workspace, "--trace", trace, "run", "Write a long answer.", env=KEY)
    assert run.code == 0, run.stderr
    assert run.stdout == answer
    traced = [json.loads(line)["event"] for line in trace.read_text().splitlines()]
    assert traced[-1] == "ExtensionContextClosed" and "SessionEnded" in traced
    [transcript] = (isolated_home / "sessions").glob("*.jsonl")
    records = [json.loads(line) for line in transcript.read_text().splitlines()]
    assert records[-1].get("event") == "ExtensionContextClosed" and any(
        r.get("event") == "SessionEnded" for r in records
    )
    assert [
        r["message"]["text"] for r in records if r["type"] == "message" and r["message"]["role"] == "assistant"
    ] == [answer]


def test_run_prints_the_tool_definitions_warning_and_the_compaction_on_stderr(
    tmp_path: Path, isolated_home: Path
) -> None:
    workspace = make_workspace(tmp_path / "repo")
    long = "The release steps are listed in order. " * 260  # past 85% of a 4,000-token window with the next prompt
    summary = "SUMMARY: one question about the release steps was answered at length."

    def summarised(body: dict[str, object]) -> None:
        text = json.dumps(body["messages"])
        assert summary in text and long[:200] not in text, "the second request starts from the summary"

    script = [
        {"reply": "text", "text": long},
        {"reply": "text", "text": summary, "expect": {"last_user_contains": "Summarise the conversation"}},
        {"reply": "text", "text": "Answer two.", "check": summarised},
    ]
    extra = 'context_window = 4000\n\n[agent]\ntools_warning_share = 0.2\n\n[tools]\nsearch_threshold = "off"\n'
    with ScriptedModelServer("anthropic", script) as server:
        user_config(isolated_home, server, wire="anthropic", extra=extra)
        first = kairox("--workspace", workspace, "run", "Question one", env=KEY)
        assert first.code == 0, first.stderr
        [session] = kairox("--workspace", workspace, "sessions", "list", "--json").json()
        second = kairox("--workspace", workspace, "run", "--resume", session["id"], "Question two", env=KEY)
    assert second.code == 0, second.stderr
    assert second.stdout == "Answer two.\n", "the summary itself is not printed as an answer"
    for run in (first, second):
        [warning] = [line for line in run.stderr.splitlines() if line.startswith("kairox: warning:")]
        assert (
            "9 tool definitions alone take about" in warning and "of the model's 4000-token context window" in warning
        )
    assert "compacting" not in first.stderr
    compacting = [line for line in second.stderr.splitlines() if line.startswith("kairox: compact")]
    assert len(compacting) == 2
    assert compacting[0].startswith(
        "kairox: compacting the conversation near the context window (agent.compact_threshold)"
    )
    assert "the model summarises 2 older messages" in compacting[0]
    assert compacting[1].startswith("kairox: compacted: 2 messages replaced by their summary, 1 kept")


@pytest.mark.parametrize("wire", ["openai", "anthropic"])
def test_run_json_carries_the_plan_and_the_cache_figures(wire: str, tmp_path: Path, isolated_home: Path) -> None:
    workspace = make_workspace(tmp_path / "repo")
    (workspace / "AGENTS.md").write_text("Name the files you read.\n" * 200)  # a prefix worth caching
    todos = [{"content": "Read the notes", "status": "in_progress"}]
    script = [
        {"reply": "tool_calls", "calls": [{"id": "p1", "name": "todo_write", "arguments": {"todos": todos}}]},
        {"reply": "text", "text": "Planned."},
    ]
    with ScriptedModelServer(wire, script) as server:
        user_config(isolated_home, server, wire=wire)
        run = kairox("--workspace", workspace, "run", "--json", "Plan it", env=KEY)
    assert run.code == 0, run.stderr
    events = [json.loads(line) for line in run.stdout.splitlines()]
    plan = next(e for e in events if e["event"] == "PlanUpdated")
    assert (plan["kind"], plan["entries"]) == ("agent.plan", [{"content": "Read the notes", "status": "in_progress"}])
    usage = [e for e in events if e["event"] == "UsageReported"]
    assert usage[1]["cache_read_tokens"] > 0 and usage[1]["session_cache_read_tokens"] == sum(
        u["cache_read_tokens"] for u in usage
    )


@pytest.mark.parametrize("as_json", [True, False])
def test_run_shows_a_subagents_calls_with_their_parent_ids_and_names(
    as_json: bool, tmp_path: Path, isolated_home: Path
) -> None:
    workspace = make_workspace(tmp_path / "repo")
    agent = workspace / ".claude" / "agents" / "reader.md"
    agent.parent.mkdir(parents=True)
    agent.write_text("---\nname: reader\ndescription: Reads.\ntools: Read\n---\nREADER-AGENT\n", encoding="utf-8")
    task = {"subagent_type": "reader", "description": "read the notes", "prompt": "Read notes.txt"}
    script = [
        {"reply": "tool_calls", "calls": [{"id": "t1", "name": "task", "arguments": task}]},
        {"reply": "text", "text": "It says: first note.", "expect": {"tool_results": {"t1": "first note"}}},
    ]
    child = [
        {"reply": "tool_calls", "calls": [{"id": "r1", "name": "fs_read", "arguments": {"path": "notes.txt"}}]},
        {"reply": "text", "text": "first note", "expect": {"tool_results": {"r1": "first note"}}},
    ]
    with ScriptedModelServer("openai", script, routes={"READER-AGENT": child}) as server:
        user_config(isolated_home, server, wire="openai")
        run = kairox("--workspace", workspace, "run", *["--json"] * as_json, "Read the notes with the reader.", env=KEY)
    assert run.code == 0, run.stderr
    if not as_json:
        assert run.stdout == "It says: first note.\n"
        assert '  reader: tool fs.read {"path": "notes.txt"} -> allow by mode' in run.stderr, run.stderr
        return
    events = [json.loads(line) for line in run.stdout.splitlines()]
    [started] = [e for e in events if e["event"] == "SubagentStarted"]
    assert (started["agent"], started["parent_call_id"], started["tools"]) == ("reader", "t1", 1)
    nested = [e for e in events if e["event"] == "SubagentEvent"]
    assert {(e["agent"], e["agent_id"], e["parent_call_id"]) for e in nested} == {("reader", started["agent_id"], "t1")}
    finished = [e["inner"] for e in nested if e["inner"]["event"] == "ToolCallFinished"]
    assert [(f["call_id"], f["tool"], f["is_error"]) for f in finished] == [("r1", "fs.read", False)]
    assert "".join(e["text"] for e in events if e["event"] == "AssistantTextDelta") == "It says: first note."
    [stopped] = [e for e in events if e["event"] == "SubagentStopped"]
    assert stopped["reason"] == "completed" and stopped["input_tokens"] > 0


def test_run_on_responses_makes_two_tool_calls_in_a_turn_and_continue_sends_the_reasoning_back(
    tmp_path: Path, isolated_home: Path
) -> None:
    workspace = make_workspace(tmp_path / "repo")
    read = [("r1", "notes.txt"), ("r2", "todo.txt")]
    script = [
        {
            "reply": "tool_calls",
            "reasoning": "Both files.",
            "calls": [{"id": i, "name": "fs_read", "arguments": {"path": p}} for i, p in read],
        },
        {"reply": "text", "text": "Two notes.", "expect": {"tool_results": {"r1": "first", "r2": "second"}}},
        {"reply": "text", "text": "Still two.", "expect": {"last_user_contains": "Again"}},
    ]
    with ScriptedModelServer("responses", script) as server:  # it checks that rs_1 comes back with request 3
        user_config(isolated_home, server, wire="responses")
        first = kairox("--workspace", workspace, "run", "Read both", env=KEY)
        again = kairox("--workspace", workspace, "run", "--continue", "Again?", env=KEY)
    assert (first.code, first.stdout) == (0, "Two notes.\n"), first.stderr
    assert (again.code, again.stdout) == (0, "Still two.\n"), again.stderr
    assert [line.split()[:2] for line in first.stderr.splitlines() if line.strip().startswith("tool ")] == [
        ["tool", "fs.read"],
        ["tool", "fs.read"],
    ]
