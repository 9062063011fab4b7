"""E1-E4: the pipeline on a workspace with broken and good extensions of every kind, through the CLI."""

import json
import sys
from pathlib import Path

import pytest
from tests.helpers import kairox

SERVERS = Path(__file__).resolve().parents[1] / "servers"
GOOD_SKILL = "---\nname: {name}\ndescription: {description}\n---\nDo the thing.\n"


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    (root / ".git").mkdir(parents=True)
    python = json.dumps(sys.executable)
    write(
        root / "kairox.toml",
        f"[mcp_servers.good]\ncommand = {python}\nargs = [{json.dumps(str(SERVERS / 'basic_server.py'))}]\n\n"
        f"[mcp_servers.broken]\ncommand = {python}\nargs = [{json.dumps(str(SERVERS / 'crash_at_start.py'))}]\n",
    )
    write(
        root / ".kairox" / "skills" / "tidy-imports" / "SKILL.md",
        GOOD_SKILL.format(name="tidy-imports", description="Sort and group Python imports."),
    )
    write(root / ".kairox" / "skills" / "mystery" / "SKILL.md", "---\nname: mystery\n---\nNo description here.\n")
    good = root / ".kairox" / "plugins" / "deploy-helper"
    write(
        good / ".kairox-plugin" / "plugin.json",
        json.dumps(
            {"name": "deploy-helper", "version": "2.0.0", "description": "Deployment checklists.", "skills": "skills"}
        ),
    )
    write(
        good / "skills" / "checklist" / "SKILL.md",
        GOOD_SKILL.format(name="checklist", description="The deployment checklist."),
    )
    bad = root / ".kairox" / "plugins" / "half-baked"
    write(bad / ".kairox-plugin" / "plugin.json", '{"name": "half-baked", "version": 3, ')
    write(
        bad / "skills" / "secret-sauce" / "SKILL.md",
        GOOD_SKILL.format(name="secret-sauce", description="Never offered."),
    )
    assert kairox("trust", cwd=root).code == 0
    return root


@pytest.mark.timeout(120)
def test_context_holds_exactly_the_good_extensions_and_doctor_lists_the_three_failures(workspace: Path) -> None:
    run = kairox("context", "--json", cwd=workspace)
    assert run.code == 0, run.stderr
    data = run.json()
    tools = {(t["name"], t["source"], t["origin"]) for t in data["tools"]}
    mcp_tools = {name for name, source, _ in tools if source == "mcp"}
    assert mcp_tools and all(name.startswith("mcp__good__") for name in mcp_tools)
    assert ("skill", "skill", "skills") in tools
    prompt = data["prompt_context"]
    assert "- good: " in prompt
    assert "tidy-imports: Sort and group Python imports." in prompt
    assert "deploy-helper:checklist" in prompt and "- deploy-helper 2.0.0: Deployment checklists." in prompt
    for broken in ("broken", "mystery", "half-baked", "secret-sauce"):
        assert broken not in prompt
    human = kairox("context", cwd=workspace).stdout
    assert "\n\nTools:\n" in human, "a blank line between the prompt context and the tools"
    lines = [" ".join(line.split()) for line in human.split("Tools:\n", 1)[1].splitlines()]
    assert "- fs.read builtin" in lines and "- skill skill skills" in lines and "- mcp__good__add mcp good" in lines

    # none of the three is required (the sandbox is off, so bubblewrap is not either): doctor lists them and exits 0
    no_sandbox = ("-c", "policy.sandbox_policy=danger_full_access")
    doctor = kairox(*no_sandbox, "doctor", "--json", cwd=workspace)
    assert doctor.code == 0
    report = doctor.json()
    failures = sorted((f["kind"], f["name"], Path(f["path"]).name) for f in report["failures"])
    assert failures == [
        ("mcp_server", "broken", "kairox.toml"),
        ("plugin", "half-baked", "plugin.json"),
        ("skill", "mystery", "SKILL.md"),
    ]
    by_kind = {f["kind"]: f for f in report["failures"]}
    assert "missing API key" in by_kind["mcp_server"]["reason"]
    assert by_kind["skill"]["path"] == str(workspace / ".kairox" / "skills" / "mystery" / "SKILL.md")
    assert all(f["fix"] for f in report["failures"])
    assert report["mcp_servers"]["good"]["status"] == "ready"
    assert report["mcp_servers"]["broken"]["status"] == "failed"

    assert report["ok"] is True
    human = kairox(*no_sandbox, "doctor", cwd=workspace)
    assert human.code == 0
    assert "mcp_server (1 failed):" in human.stdout and "fix:" in human.stdout
    assert human.stdout.rstrip().endswith(
        "Doctor: everything required works; 3 extension(s) failed to load (see above)."
    )


@pytest.mark.timeout(120)
def test_trace_shows_the_pipeline_order(workspace: Path, tmp_path: Path) -> None:
    trace = tmp_path / "trace.jsonl"
    assert kairox("--trace", trace, "context", "--json", cwd=workspace).code == 0
    names = [json.loads(line)["event"] for line in trace.read_text().splitlines()]

    def first(name: str) -> int:
        return names.index(name)

    def last(name: str) -> int:
        return len(names) - 1 - names[::-1].index(name)

    assert first("ConfigLoaded") < first("PluginsLoaded") < first("McpServerStarting")
    assert first("RegistryBuilt") > last("McpServerReady")
    assert first("RegistryBuilt") > last("McpServerFailed")
    assert first("RegistryBuilt") > first("SkillsReady")
    assert names.index("ExtensionContextReady") > first("RegistryBuilt")
    assert names[-1] == "ExtensionContextClosed"


@pytest.mark.timeout(120)
def test_prompt_context_is_deterministic(workspace: Path) -> None:
    first = kairox("context", "--json", cwd=workspace).json()
    second = kairox("context", "--json", cwd=workspace).json()
    assert first["prompt_context"] == second["prompt_context"]
    assert first["tools"] == second["tools"]


def test_untrusted_workspace_starts_nothing_and_says_so(workspace: Path) -> None:
    assert kairox("trust", "--revoke", cwd=workspace).code == 0
    data = kairox("context", "--json", cwd=workspace).json()
    assert [t for t in data["tools"] if t["source"] in ("mcp", "plugin")] == []
    assert "untrusted" in data["prompt_context"]
    assert "tidy-imports" not in data["prompt_context"]
    pending = [d for d in data["diagnostics"] if d["kind"] == "mcp_server"]
    assert {d["name"] for d in pending} == {"good", "broken"}
    assert all(d["severity"] == "info" for d in pending)


def test_provider_definitions_come_from_the_whole_registry(workspace: Path) -> None:
    run = kairox("context", "--provider", "openai", cwd=workspace)
    assert run.code == 0, run.stderr
    names = {d["function"]["name"] if "function" in d else d["name"] for d in run.json()}
    assert any(name.startswith("mcp__good__") for name in names)
    assert "fs_read" in names or "fs.read" in names


@pytest.mark.timeout(60)
def test_an_untrusted_project_cannot_pull_files_from_outside_into_the_prompt(tmp_path: Path) -> None:
    write(tmp_path / "secret.txt", "token-4711")
    root = tmp_path / "cloned"
    (root / ".git").mkdir(parents=True)
    write(root / "kairox.toml", '[instructions]\nfiles = ["../secret.txt", "STYLE.md"]\n')
    write(root / "STYLE.md", "Prefer small functions.")
    (root / "AGENTS.md").symlink_to(tmp_path / "secret.txt")
    untrusted = kairox("context", "--json", cwd=root)
    assert untrusted.code == 0, untrusted.stderr
    prompt = untrusted.json()["prompt_context"]
    # an untrusted project names no instruction files beyond the standard ones: the list waits for trust
    assert "Prefer small functions." not in prompt
    assert "token-4711" not in prompt
    pending = kairox("config", "show", "--json", cwd=root).json()["pending_trust"]
    assert [(p["key"], p["line"]) for p in pending] == [("instructions.files", 2)]
    # once trusted, the project may name files outside it; a memory file linking out is still not read
    assert kairox("trust", cwd=root).code == 0
    trusted = kairox("context", "--json", cwd=root).json()["prompt_context"]
    assert "Prefer small functions." in trusted
    assert trusted.count("token-4711") == 1


@pytest.mark.timeout(120)
def test_untrusted_language_server_with_a_quoted_name_does_not_start(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    (root / ".git").mkdir(parents=True)
    jedi = Path(sys.executable).parent / "jedi-language-server"
    write(
        root / "kairox.toml", f'[lsp_servers."py.jedi"]\ncommand = {json.dumps(str(jedi))}\nfile_patterns = ["*.py"]\n'
    )
    write(root / "app.py", "def greet():\n    return 1\n")
    run = kairox("tools", "call", "lsp.document_symbols", '{"path": "app.py"}', cwd=root)
    # the only language server waits for trust, so its tools are not offered at all
    assert run.code == 6, run.stdout + run.stderr
    assert "greet" not in run.stdout
    assert kairox("trust", cwd=root).code == 0
    trusted = kairox("tools", "call", "lsp.document_symbols", '{"path": "app.py"}', cwd=root)
    assert trusted.code == 0, trusted.stderr
    assert "greet" in trusted.stdout
