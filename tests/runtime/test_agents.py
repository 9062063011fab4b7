"""Agent files (subagents) as the hosts write them: Claude's markdown with frontmatter, Codex's TOML, from the
workspace, the user's folders and plugins, first source wins; a broken file is a diagnostic, never a stop."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from kairox.config import resolve_config, trust_workspace
from kairox.errors import Severity
from kairox.runtime import build_extension_context, doctor_report, load_agents, load_plugins, toggle_agent
from kairox.runtime._agents import GENERAL_PURPOSE, parse_agent

KAIROX = Path(sys.executable).parent / "kairox"


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def md(name: str, extra: str = "", body: str = "Do the job.") -> str:
    return f"---\nname: {name}\ndescription: The {name}.\n{extra}---\n{body}\n"


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    (root / ".git").mkdir(parents=True)
    return root


def load(workspace: Path):  # type: ignore[no-untyped-def]
    resolved = resolve_config(workspace)
    return load_agents(resolved, load_plugins(resolved).plugins)


def test_sources_load_in_precedence_and_the_loser_of_a_name_is_reported(
    workspace: Path, isolated_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CODEX_HOME", str(tmp_path / "codex"))
    write(workspace / ".kairox" / "agents" / "reviewer.md", md("reviewer", body="KAIROX"))
    shadowed = write(workspace / ".claude" / "agents" / "reviewer.md", md("reviewer", body="CLAUDE"))
    write(workspace / ".claude" / "agents" / "nested" / "explorer.md", md("explorer"))
    write(isolated_home / "agents" / "mine.md", md("mine"))
    write(
        tmp_path / "codex" / "agents" / "auditor.toml",
        'name = "auditor"\ndescription = "Audits."\ndeveloper_instructions = "Audit it."\nmodel = "gpt-5"\n'
        'sandbox_mode = "read-only"\n[mcp_servers.docs]\ncommand = "docs-server"\nargs = ["--stdio"]\n',
    )
    found = load(workspace)
    assert {name: a.source for name, a in found.agents.items()} == {
        GENERAL_PURPOSE: "builtin",
        "reviewer": "workspace",
        "explorer": "workspace",
        "mine": "user",
        "auditor": "user",
    }
    assert found.agents["reviewer"].prompt == "KAIROX"
    assert [(d.source, d.severity) for d in found.diagnostics] == [(str(shadowed), Severity.INFO)]
    auditor = found.agents["auditor"]
    assert (auditor.prompt, auditor.model, auditor.extra) == ("Audit it.", "gpt-5", {"sandbox_mode": "read-only"})
    assert auditor.mcp_servers["docs"].command == "docs-server" and auditor.mcp_servers["docs"].args == ["--stdio"]
    # an untrusted workspace's agents run, but start no server of their own
    assert found.agents["reviewer"].held is not None and found.agents["mine"].held is None


def test_claude_frontmatter_maps_tool_names_and_servers_and_keeps_unknown_keys(tmp_path: Path) -> None:
    path = write(
        tmp_path / "a.md",
        md(
            "reviewer",
            "tools: Read, Grep, Bash(git diff:*), Agent(x, y), mcp__github__*\n"
            "disallowedTools: [Write, Edit]\nmodel: inherit\nmaxTurns: 7\ncolor: green\nskills: [release-notes]\n"
            "effort: high\nmcpServers:\n  - slack\n  - own:\n      type: stdio\n      command: own-server\n"
            "  - web:\n      type: http\n      url: https://example.org/mcp\n",
        ),
    )
    agent, problems = parse_agent(path, source="user")
    assert problems == [] and agent is not None
    assert agent.tools == ("fs.read", "search.ripgrep", "shell.exec", "task", "mcp__github__*")
    assert agent.disallowed == ("fs.write", "fs.edit")
    assert (agent.model, agent.max_turns, agent.color, agent.skills) == (None, 7, "green", ("release-notes",))
    assert agent.server_names == ("slack",) and sorted(agent.mcp_servers) == ["own", "web"]
    assert agent.mcp_servers["web"].transport == "streamable_http"
    assert agent.extra == {"effort": "high"}
    assert agent.allows("fs.read") and agent.allows("mcp__github__issues") and not agent.allows("fs.write")
    assert not agent.allows("lsp.hover") and agent.allows("mcp__slack__post", named=True)


def test_broken_files_are_diagnostics_with_file_and_reason_and_the_others_load(
    workspace: Path, isolated_home: Path
) -> None:
    folder = workspace / ".kairox" / "agents"
    write(folder / "good.md", md("good"))
    write(folder / "nofront.md", "Just text.\n")
    write(folder / "badyaml.md", "---\nname: [unclosed\n---\nx\n")
    write(folder / "turns.md", md("turns", "maxTurns: -3\n"))
    write(folder / "server.md", md("server", "mcpServers:\n  broken:\n    type: stdio\n"))
    write(folder / "nodesc.md", "---\nname: nodesc\n---\nx\n")
    write(folder / "bad.toml", "name = \n")
    found = load(workspace)
    assert sorted(found.agents) == [GENERAL_PURPOSE, "good", "nodesc", "server", "turns"]
    reasons = {Path(str(d.source)).name: d.reason for d in found.diagnostics}
    assert reasons.keys() == {"nofront.md", "badyaml.md", "turns.md", "server.md", "nodesc.md", "bad.toml"}
    assert reasons["nofront.md"].startswith("no frontmatter")
    assert reasons["badyaml.md"].startswith("frontmatter is not valid YAML")
    assert reasons["turns.md"].startswith("maxTurns must be a whole number")
    assert reasons["server.md"].startswith("mcpServers.broken:")
    assert found.agents["turns"].max_turns is None and found.agents["server"].mcp_servers == {}


@pytest.mark.anyio
async def test_doctor_reports_agent_files_that_did_not_load(workspace: Path, isolated_home: Path) -> None:
    write(workspace / ".claude" / "agents" / "broken.md", "no frontmatter\n")
    async with build_extension_context(workspace) as context:
        report = doctor_report(context)
    problems = [p for p in json.dumps(report).split('"kind": ') if p.startswith('"agent"')]
    assert len(problems) == 1 and "broken.md" in problems[0]


def test_plugin_agents_are_plugin_colon_name_with_the_plugin_root_expanded_and_a_switched_off_one_is_gone(
    workspace: Path, isolated_home: Path
) -> None:
    plugin = isolated_home / "plugins" / "kit"
    write(plugin / ".claude-plugin" / "plugin.json", '{"name": "kit"}')
    write(
        plugin / "agents" / "helper.md",
        md("helper", "mcpServers:\n  own:\n    command: python3\n    args: ['${CLAUDE_PLUGIN_ROOT}/server.py']\n"),
    )
    write(plugin / "agents" / "other.md", md("other"))
    write(
        isolated_home / "kairox.toml",
        '[plugins.entries.kit]\ndisabled_contributions = ["agent:other"]\n\n[agent.subagents."general-purpose"]\n'
        "enabled = false\n",
    )
    found = load(workspace)
    assert sorted(found.agents) == [GENERAL_PURPOSE, "kit:helper"]
    helper = found.agents["kit:helper"]
    assert helper.source == "plugin:kit" and helper.held is None
    assert helper.mcp_servers["own"].args == [f"{plugin}/server.py"]
    assert not found.agents[GENERAL_PURPOSE].enabled and found.offered() == [helper]


@pytest.mark.anyio
async def test_an_agent_switched_off_is_written_to_the_user_layer_and_kairox_agents_list_says_so(
    workspace: Path, isolated_home: Path
) -> None:
    write(workspace / ".kairox" / "agents" / "reviewer.md", md("reviewer", "foo: bar\n"))
    trust_workspace(workspace)
    async with build_extension_context(workspace) as context:
        file = toggle_agent(context, "reviewer", False)
        assert not context.agents.agents["reviewer"].enabled
    assert file == isolated_home / "kairox.toml" and "enabled = false" in file.read_text()
    shown = subprocess.run(
        [str(KAIROX), "-w", str(workspace), "agents", "list", "--json"], capture_output=True, text=True, timeout=60
    )
    listed = {a["name"]: a for a in json.loads(shown.stdout)["agents"]}
    assert listed["reviewer"]["enabled"] is False and listed["reviewer"]["extra"] == {"foo": "bar"}
    text = subprocess.run(
        [str(KAIROX), "-w", str(workspace), "agents", "show", "reviewer"], capture_output=True, text=True, timeout=60
    )
    assert "extra: {'foo': 'bar'}" in text.stdout and text.stdout.rstrip().endswith("Do the job.")
    missing = subprocess.run(
        [str(KAIROX), "-w", str(workspace), "agents", "show", "nobody"], capture_output=True, text=True, timeout=60
    )
    assert missing.returncode == 6 and "no agent named 'nobody'" in missing.stderr


def test_every_agent_file_of_the_corpora_loads_or_gets_a_diagnostic(corpora: Path) -> None:
    files = sorted(p for p in corpora.rglob("*") if "agents" in p.parts and p.suffix in (".md", ".toml"))
    files = [p for p in files if p.name.lower() != "readme.md"]
    assert len(files) >= 39
    loaded, reported = 0, 0
    for path in files:
        agent, problems = parse_agent(path, source="plugin:corpus", plugin="corpus", root=path.parent.parent)
        assert agent is not None or problems, path
        loaded += agent is not None
        reported += agent is None
        if agent is not None:
            assert agent.name.startswith("corpus:") and agent.prompt, path
    assert loaded >= 35 and loaded + reported == len(files)
