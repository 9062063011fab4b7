"""The GUI as a user drives it in Chromium: server dots that go live, a catalog install from the npm cache that
ends with a green server, a skill switched off that ``kairox skills list`` then shows off, plugins after the trust
banner's action, and an approval answered in the session against the scripted model server."""

import json
import os
import shutil
import sys
import tomllib
from collections.abc import Callable
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect
from tests.agent._support import BIN
from tests.helpers import Run
from tests.helpers import kairox as run_kairox
from tests.servers.model_server import ScriptedModelServer
from tests.web_browser._browser import (
    GREEN,
    GREY,
    RED,
    ROOT,
    SERVERS,
    YELLOW,
    Gui,
    dot_colour,
    screenshot,
    wait_for_dot,
)

from kairox._rpc._status import ServerStatus
from kairox.runtime import ServerView

pytestmark = pytest.mark.timeout(240)


def word(status: ServerStatus) -> str:
    """The runtime's word for ``status``: the one the TUI and the command line show."""
    return ServerView(kind="mcp", name="-", status=status).label


CLEAR = "rgba(0, 0, 0, 0)"
CYAN = "rgb(23, 146, 171)"  # the idle ring McpStatusIndicator.vue paints

NPM_CACHE = ROOT / "build" / "npm-cache"


def kairox(workspace: Path, *args: str, env: dict[str, str] | None = None) -> Run:
    return run_kairox("--workspace", workspace, *args, env=env)


def server_table(name: str, script: str, *args: str, timeout: int = 60) -> str:
    return (
        f'[mcp_servers.{name}]\ncommand = "{sys.executable}"\n'
        f"args = {json.dumps([str(SERVERS / script), *args])}\nstartup_timeout_sec = {timeout}\n\n"
    )


def test_servers_turn_green_red_and_yellow_then_green_live(
    workspace: Path, isolated_home: Path, gui_factory: Callable[..., Gui], page: Page
) -> None:
    (isolated_home / "kairox.toml").write_text(
        server_table("quick", "basic_server.py")
        + server_table("broken", "crash_at_start.py", timeout=20)
        # long enough for the page to see it starting, whatever the machine's load
        + server_table("slow", "basic_server.py", "--delay-init-ms", "10000")
        + f'[lsp_servers.jedi]\ncommand = "{BIN / "jedi-language-server"}"\nfile_patterns = ["*.py"]\n\n'
        + f'[dap_servers.debugpy]\ncommand = "{sys.executable}"\n'
        'args = ["-m", "debugpy.adapter"]\nlanguages = ["python"]\n',
        encoding="utf-8",
    )
    project_file = server_table("project-notes", "basic_server.py")
    (workspace / "kairox.toml").write_text(project_file, encoding="utf-8")
    gui = gui_factory(workspace)
    page.goto(gui.url)
    expect(page.locator('[data-server="slow"]')).to_be_visible()
    wait_for_dot(page, '[data-server="slow"]', YELLOW)
    assert page.locator('[data-server="slow"]').get_attribute("data-kind") == "mcp"
    screenshot(page, "servers-starting")

    wait_for_dot(page, '[data-server="quick"]', GREEN)
    wait_for_dot(page, '[data-server="broken"]', RED)
    # the page is not reloaded: the event stream turns the slow one green
    wait_for_dot(page, '[data-server="slow"]', GREEN)
    assert [dot_colour(page, f'[data-server="{name}"]') for name in ("quick", "broken", "slow")] == [GREEN, RED, GREEN]
    assert page.url.endswith("/servers") and "token" not in page.url  # the cookie carries the token now
    # a language server starts on first use, a debug adapter per debug session: both idle until then, a hollow
    # cyan ring in the runtime's word, never the grey "stopped" of a server that is down
    assert page.locator('[data-server="jedi"]').get_attribute("data-kind") == "lsp"
    assert page.locator('[data-server="debugpy"]').get_attribute("data-kind") == "dap"
    for name in ("jedi", "debugpy"):
        row = page.locator(f'[data-server="{name}"]')
        expect(row.locator("[data-status]")).to_have_attribute("data-status", "idle")
        expect(row.locator("[data-label]")).to_have_text(word(ServerStatus.IDLE))
        assert dot_colour(page, f'[data-server="{name}"]') == CLEAR
        assert row.locator(".dot").evaluate("dot => getComputedStyle(dot).borderTopColor") == CYAN
    # the project's server waits for trust, in the words the TUI and `kairox mcp status` use
    held = page.locator('[data-server="project-notes"]')
    expect(held.locator("[data-label]")).to_have_text(word(ServerStatus.HELD_BACK))
    for name, status in (("quick", ServerStatus.READY), ("broken", ServerStatus.FAILED)):
        expect(page.locator(f'[data-server="{name}"] [data-label]')).to_have_text(word(status))
    page.click('[data-server="jedi"]')
    page.click('[data-detail="jedi"] [data-action="restart"]')
    wait_for_dot(page, '[data-server="jedi"]', GREEN)

    page.click('[data-server="quick"]')
    tools = page.locator('[data-detail="quick"] [data-tool]')
    expect(tools.first).to_be_visible()
    assert {"echo", "add"} <= set(tools.evaluate_all("rows => rows.map(row => row.dataset.tool)"))
    page.click('[data-server="broken"]')
    expect(page.locator('[data-detail="broken"] [data-stderr]')).to_contain_text("missing API key, giving up")
    expect(page.locator('[data-detail="broken"]')).to_contain_text(str(isolated_home / "kairox.toml"))
    screenshot(page, "servers")

    # disable writes enabled = false to the layer that defines the server and stops it; enable starts it again
    page.click('[data-server="quick"]')
    page.click('[data-detail="quick"] [data-action="disable"]')
    wait_for_dot(page, '[data-server="quick"]', GREY)
    assert (
        tomllib.loads((isolated_home / "kairox.toml").read_text(encoding="utf-8"))["mcp_servers"]["quick"]["enabled"]
        is False
    )
    page.click('[data-detail="quick"] [data-action="enable"]')
    wait_for_dot(page, '[data-server="quick"]', GREEN)
    assert (
        tomllib.loads((isolated_home / "kairox.toml").read_text(encoding="utf-8"))["mcp_servers"]["quick"]["enabled"]
        is True
    )
    # a write to the project file of an untrusted workspace asks first; denied, nothing changes
    page.select_option('[data-detail="quick"] select[aria-label="configuration layer"]', "project")
    page.click('[data-detail="quick"] [data-action="disable"]')
    dialog = page.locator("[data-approval]")
    expect(dialog).to_contain_text("config.write")
    expect(dialog).to_contain_text(str(workspace / "kairox.toml"))
    dialog.locator('[data-answer="deny"]').click()
    expect(page.locator('[data-detail="quick"] .error')).to_be_visible()
    assert dot_colour(page, '[data-server="quick"]') == GREEN
    assert (workspace / "kairox.toml").read_text(encoding="utf-8") == project_file
    page.select_option('[data-detail="quick"] select[aria-label="configuration layer"]', "")
    # one tool off: written to the server's disabled_tools
    echo = page.locator('[data-detail="quick"] [data-tool="echo"]')
    echo.locator("label.toggle").click()
    expect(echo.get_by_role("checkbox")).not_to_be_checked()
    assert tomllib.loads((isolated_home / "kairox.toml").read_text(encoding="utf-8"))["mcp_servers"]["quick"][
        "disabled_tools"
    ] == ["echo"]


@pytest.fixture
def offline_npm(tmp_path: Path) -> dict[str, str]:
    """A HOME whose npm works offline from the cache ``make install`` fills, as the catalog tests use it."""
    assert (NPM_CACHE / ".catalog-installed").is_file(), "run `make install` first: it fills build/npm-cache"
    home = tmp_path / "home"
    home.mkdir()
    (home / ".npmrc").write_text(
        f"cache={NPM_CACHE}\noffline=true\nprefix={tmp_path / 'npm-prefix'}\nupdate-notifier=false\n", encoding="utf-8"
    )
    return {"HOME": str(home), "npm_config_offline": "true"}


def test_marketplace_installs_server_memory_from_the_npm_cache_and_it_turns_green(
    workspace: Path, isolated_home: Path, offline_npm: dict[str, str], gui_factory: Callable[..., Gui], page: Page
) -> None:
    (isolated_home / "kairox.toml").write_text("# my settings\n", encoding="utf-8")  # no MCP server yet
    gui = gui_factory(workspace, offline_npm)
    page.goto(gui.url)
    page.click('[data-nav="marketplace"]')
    expect(page.locator('[data-entry$="/filesystem"]')).to_be_visible()
    # a tag narrows the list to its entries; clearing it brings the rest back
    page.locator('[data-entry$="/memory"] .tag', has_text="knowledge-graph").click()
    expect(page.locator("[data-entry]")).to_have_count(1)
    page.get_by_role("button", name="clear").click()
    expect(page.locator('[data-entry$="/filesystem"]')).to_be_visible()
    page.fill("[data-search]", "memory")
    expect(page.locator('[data-entry$="/filesystem"]')).to_have_count(0)  # the search narrowed the list
    entry = page.locator('[data-entry$="/memory"]')
    expect(entry).to_be_visible()
    entry.click()
    detail = page.locator("[data-detail]")
    expect(detail.locator("[data-command]")).to_have_text("npx -y @modelcontextprotocol/server-memory@2026.8.31")
    expect(detail.locator("[data-config]")).to_contain_text("[mcp_servers.memory]")
    node = detail.locator('[data-requirement*="node"]').first
    expect(node).to_have_attribute("data-present", "true")
    page.select_option('select[aria-label="configuration layer"]', "user")
    screenshot(page, "marketplace")

    page.click('[data-action="install"]')
    # writing the configuration goes through the gate, which asks in the GUI's dialog
    dialog = page.locator("[data-approval]")
    expect(dialog).to_be_visible(timeout=60_000)
    # the dialog names the layer: the user's own file, not a project's
    expect(dialog).to_contain_text(f"{isolated_home / 'kairox.toml'} is your user configuration")
    expect(dialog).not_to_contain_text("project configuration")
    screenshot(page, "marketplace-approval")
    page.click('[data-answer="once"]')
    outcome = page.locator("[data-outcome]")
    expect(outcome).to_be_visible(timeout=180_000)
    expect(outcome).to_contain_text("installed")
    expect(outcome.locator("code", has_text="read_graph")).to_be_visible()
    assert page.locator("[data-step]").count() >= 2  # progress came step by step before the outcome
    wait_for_dot(page, '.install-progress [data-server="memory"]', GREEN, timeout=120_000)
    outcome.scroll_into_view_if_needed()
    screenshot(page, "marketplace-installed")

    written = tomllib.loads((isolated_home / "kairox.toml").read_text(encoding="utf-8"))
    assert written["mcp_servers"]["memory"]["args"] == ["-y", "@modelcontextprotocol/server-memory@2026.8.31"]
    assert (isolated_home / "kairox.toml").read_text(encoding="utf-8").startswith("# my settings\n")
    page.click('[data-nav="servers"]')
    wait_for_dot(page, '[data-server="memory"]', GREEN)


def test_a_skill_switched_off_in_the_gui_is_off_for_kairox_skills_list(
    workspace: Path, isolated_home: Path, gui_factory: Callable[..., Gui], page: Page
) -> None:
    for name, text in (("commit-msg", "Write a commit message."), ("release-notes", "Write release notes.")):
        skill = isolated_home / "skills" / name / "SKILL.md"
        skill.parent.mkdir(parents=True)
        skill.write_text(f"---\nname: {name}\ndescription: {text}\n---\nSteps.\n", encoding="utf-8")
    # the workspace's skill of the same name loses to the user's while the workspace is not trusted
    project_skill = workspace / ".kairox" / "skills" / "release-notes" / "SKILL.md"
    project_skill.parent.mkdir(parents=True)
    project_skill.write_text(
        "---\nname: release-notes\ndescription: The project's own.\n---\nSteps.\n", encoding="utf-8"
    )
    gui = gui_factory(workspace)
    page.goto(gui.url)
    page.click('[data-nav="skills"]')
    shadowed = page.locator('[data-skill="release-notes"][data-scope="workspace"]')
    expect(shadowed.locator(".badge.shadow")).to_have_text("shadowed")
    expect(shadowed).to_contain_text(str(isolated_home / "skills" / "release-notes" / "SKILL.md"))
    expect(shadowed.get_by_role("checkbox")).to_be_disabled()
    row = page.locator('[data-skill="commit-msg"][data-scope="user"]')
    switch = row.get_by_role("checkbox")
    expect(switch).to_be_checked()
    row.locator("label.toggle").click()
    expect(switch).not_to_be_checked()
    expect(page.locator('[data-skill="release-notes"][data-scope="user"]').get_by_role("checkbox")).to_be_checked()
    screenshot(page, "skills")

    listed = kairox(workspace, "skills", "list", "--json")
    assert listed.returncode == 0, listed.stderr
    states = {(skill["name"], skill["scope"]): skill["enabled"] for skill in json.loads(listed.stdout)["skills"]}
    assert states == {("commit-msg", "user"): False, ("release-notes", "user"): True}
    text = kairox(workspace, "skills", "list").stdout
    assert any(line.split()[:3] == ["commit-msg", "user", "disabled"] for line in text.splitlines()), text

    row.locator("label.toggle").click()
    expect(switch).to_be_checked()
    states = {
        (s["name"], s["scope"]): s["enabled"]
        for s in json.loads(kairox(workspace, "skills", "list", "--json").stdout)["skills"]
    }
    assert states == {("commit-msg", "user"): True, ("release-notes", "user"): True}


def test_trust_banner_trusts_the_workspace_and_the_plugin_shows_its_contributions(
    workspace: Path, isolated_home: Path, gui_factory: Callable[..., Gui], page: Page
) -> None:
    shutil.copytree(ROOT / "examples" / "workspace" / ".kairox" / "plugins", workspace / ".kairox" / "plugins")
    (workspace / "kairox.toml").write_text(server_table("project-notes", "basic_server.py"), encoding="utf-8")
    # the compatibility check shows where python3 is: here, beside the workspace
    tools = isolated_home.parent / "bin"
    tools.mkdir()
    (tools / "python3").symlink_to(sys.executable)
    gui = gui_factory(workspace, {"PATH": f"{tools}{os.pathsep}{os.environ['PATH']}"})
    page.goto(gui.url)
    page.click('[data-nav="plugins"]')
    banner = page.locator(".trust-banner")
    expect(banner).to_be_visible()
    expect(banner).to_contain_text("not trusted")
    # what is held back, with the file and line
    expect(banner.locator(".held-back")).to_contain_text("mcp_servers.project-notes")
    expect(banner.locator(".held-back")).to_contain_text(f"{workspace / 'kairox.toml'}:1")
    plugin = page.locator('[data-plugin*="release-tools"]')
    expect(plugin).to_be_visible()
    screenshot(page, "trust-banner")
    page.click('[data-action="trust"]')
    expect(banner).to_be_hidden()
    assert str(workspace) in kairox(workspace, "trust", "--list").stdout
    page.click('[data-nav="servers"]')
    wait_for_dot(page, '[data-server="project-notes"]', GREEN)  # the project's server starts once trusted
    page.click('[data-nav="plugins"]')

    expect(plugin.locator(".badge.trusted")).to_be_visible()
    for contribution in ("skill/changelog", "tool/next_version", "mcp_server/clock"):
        expect(plugin.locator(f'[data-contribution="{contribution}"]')).to_be_visible()
    expect(plugin).to_contain_text("workspace_write")
    switch = plugin.locator(".plugin-head").get_by_role("checkbox")
    toggle = plugin.locator(".plugin-head label.toggle")
    # off, then on again: kairox plugins list agrees each time
    for wanted in (["disabled"] if switch.is_checked() else []) + ["enabled"]:
        toggle.click()
        (expect(switch).to_be_checked if wanted == "enabled" else expect(switch).not_to_be_checked)()
        listed = kairox(workspace, "plugins", "list")
        assert listed.returncode == 0, listed.stderr
        assert listed.stdout.split()[:3] == ["release-tools", "1.2.0", wanted], listed.stdout
    expect(plugin.locator('[data-contribution="tool/next_version"]').get_by_role("checkbox")).to_be_enabled()

    # the path override: the same plugin from another folder, from the next session on
    other = isolated_home.parent / "release-tools-dev"
    shutil.copytree(workspace / ".kairox" / "plugins" / "release-tools", other)
    plugin.locator('[aria-label="plugin folder override"]').fill(str(other))
    plugin.locator('[data-action="save-path"]').click()
    expect(page.locator("[data-notice]")).to_contain_text("from the next session")
    expect(plugin.locator('[data-action="clear-path"]')).to_be_visible()
    saved = tomllib.loads((isolated_home / "kairox.toml").read_text(encoding="utf-8"))
    assert saved["plugins"]["entries"]["release-tools"]["path"] == str(other)
    screenshot(page, "plugins")


def test_session_streams_the_answer_and_the_approval_dialog_answers_like_the_tui(
    workspace: Path, isolated_home: Path, gui_factory: Callable[..., Gui], page: Page
) -> None:
    script = [
        {
            "reply": "tool_calls",
            "text": "",
            "calls": [{"id": "w1", "name": "fs_write", "arguments": {"path": "a.txt", "content": "one"}}],
        },
        {
            "reply": "tool_calls",
            "text": "",
            "calls": [{"id": "w2", "name": "fs_write", "arguments": {"path": "b.txt", "content": "two"}}],
            "expect": {"tool_results": {"w1": "a.txt"}},
        },
        {
            "reply": "text",
            "text": "Wrote a.txt; b.txt goes to drafts next time.",
            "delay_sec": 0.05,
            "expect": {"tool_results": {"w2": "use drafts please"}},
        },
    ]
    with ScriptedModelServer("openai", script) as model:
        (isolated_home / "kairox.toml").write_text(
            'model = "scripted-model"\nmodel_provider = "scripted"\n\n'
            f'[model_providers.scripted]\nwire_api = "chat"\nbase_url = "{model.base_url}"\n'
            'api_key_env = "KAIROX_TEST_MODEL_KEY"\nmax_retries = 2\nrequest_timeout_sec = 30\n\n'
            '[policy.rules]\nask = ["fs.write"]\n',
            encoding="utf-8",
        )
        gui = gui_factory(workspace, {"KAIROX_TEST_MODEL_KEY": "sk-test-0123456789abcdef"})
        page.goto(gui.url)
        page.click('[data-nav="session"]')
        page.fill("[data-composer]", "Write two files.")
        expect(page.locator('[data-action="send"]')).to_be_enabled(timeout=60_000)  # the session has opened
        page.press("[data-composer]", "Enter")

        dialog = page.locator("[data-approval]")
        expect(dialog).to_be_visible()
        expect(dialog).to_contain_text("fs.write")
        expect(dialog).to_contain_text('"path": "a.txt"')
        screenshot(page, "session-approval")
        page.click('[data-answer="once"]')

        expect(dialog).to_contain_text('"path": "b.txt"')
        page.click('[data-answer="deny-message"]')
        page.fill('[aria-label="message to the model"]', "use drafts please")
        page.press('[aria-label="message to the model"]', "Enter")
        expect(dialog).to_be_hidden()

        answer = page.locator('[data-role="assistant"]').last
        expect(answer).to_have_text("Wrote a.txt; b.txt goes to drafts next time.")
        expect(page.locator('[data-call="w1"]')).to_have_attribute("data-state", "ok")
        expect(page.locator('[data-call="w2"]')).to_have_attribute("data-state", "failed")
        expect(page.locator('[data-call="w2"] [data-decision]')).to_have_text("deny")
        expect(page.locator('[data-action="send"]')).to_be_visible()  # the turn ended
        screenshot(page, "session")

        page.click('[data-nav="trace"]')
        decided = page.locator('.trace-row[data-type="ToolCallDecided"]')
        expect(decided.filter(has_text="call_id=w2 tool=fs.write decision=deny")).to_have_count(1)
        expect(decided.filter(has_text="call_id=w1 tool=fs.write decision=allow")).to_have_count(1)
        expect(decided.first.locator("[data-event]")).to_have_text("tool call decided")  # words, not a class name
        screenshot(page, "trace")
        page.fill('[aria-label="filter the trace"]', "decision=deny")
        expect(page.locator(".trace-row")).to_have_count(1)
        expect(page.locator(".trace-row")).to_have_attribute("data-type", "ToolCallDecided")
    assert (workspace / "a.txt").read_text(encoding="utf-8") == "one"
    assert not (workspace / "b.txt").exists()


def test_session_and_always_answers_grant_what_they_say(
    workspace: Path, isolated_home: Path, gui_factory: Callable[..., Gui], page: Page
) -> None:
    def call(call_id: str, name: str, arguments: dict[str, str]) -> dict[str, object]:
        return {"reply": "tool_calls", "text": "", "calls": [{"id": call_id, "name": name, "arguments": arguments}]}

    script = [
        call("w1", "fs_write", {"path": "a.txt", "content": "one"}),
        {**call("w2", "fs_write", {"path": "a.txt", "content": "two"}), "expect": {"tool_results": {"w1": "a.txt"}}},
        {**call("s1", "shell_exec", {"command": "echo hi"}), "expect": {"tool_results": {"w2": "a.txt"}}},
        {**call("s2", "shell_exec", {"command": "echo hi"}), "expect": {"tool_results": {"s1": "hi"}}},
        {"reply": "text", "text": "Done.", "expect": {"tool_results": {"s2": "hi"}}},
    ]
    with ScriptedModelServer("openai", script) as model:
        (isolated_home / "kairox.toml").write_text(
            'model = "scripted-model"\nmodel_provider = "scripted"\n\n'
            f'[model_providers.scripted]\nwire_api = "chat"\nbase_url = "{model.base_url}"\n'
            'api_key_env = "KAIROX_TEST_MODEL_KEY"\nmax_retries = 2\nrequest_timeout_sec = 30\n\n'
            '[policy]\napproval_policy = "untrusted"  # every write and command asks\n',
            encoding="utf-8",
        )
        gui = gui_factory(workspace, {"KAIROX_TEST_MODEL_KEY": "sk-test-0123456789abcdef"})
        page.goto(gui.url)
        page.click('[data-nav="session"]')
        page.fill("[data-composer]", "Write a.txt twice, then say hi twice.")
        expect(page.locator('[data-action="send"]')).to_be_enabled(timeout=60_000)  # the session has opened
        page.press("[data-composer]", "Enter")

        dialog = page.locator("[data-approval]")
        path_rule = f"fs.write({workspace / 'a.txt'})"
        grant = dialog.locator(f'[data-answer="session"][data-grant="{path_rule}"]')
        expect(grant).to_contain_text("every call of fs.write on paths matching")
        grant.click()
        # the second write to a.txt runs under the session grant; the next question is the command
        expect(dialog).to_contain_text("$ echo hi")
        # one "always" per rule that may be saved: the exact command first, then the prefix
        always = dialog.locator('[data-answer="always"]')
        expect(always).to_have_count(2)
        expect(always.first).to_contain_text("rule 'shell.exec(echo hi)'")
        expect(always.last).to_contain_text("rule 'shell.exec(echo hi*)'")
        # the workspace is not trusted: an "always" can only be saved in the user layer, and the dialog says so
        expect(dialog).to_contain_text("in the user configuration")
        expect(dialog.locator('select[aria-label="configuration layer"]')).to_have_count(0)
        always.first.click()
        expect(page.locator('[data-role="assistant"]').last).to_have_text("Done.")
        for call_id in ("w1", "w2", "s1", "s2"):
            expect(page.locator(f'[data-call="{call_id}"]')).to_have_attribute("data-state", "ok")

        page.click('[data-nav="trace"]')
        expect(page.locator('.trace-row[data-type="ToolCallDecided"]').first).to_be_visible()
        assert page.locator('.trace-row[data-type="ApprovalRequested"]').count() == 2  # w2 and s2 never asked
    assert (workspace / "a.txt").read_text(encoding="utf-8") == "two"
    assert "shell.exec(echo hi)" in (isolated_home / "kairox.toml").read_text(encoding="utf-8")
    saved = tomllib.loads((isolated_home / "kairox.toml").read_text(encoding="utf-8"))
    assert saved["policy"]["rules"]["allow"] == ["shell.exec(echo hi)"]
    assert saved["policy"]["approval_policy"] == "untrusted"
    assert 'approval_policy = "untrusted"  # every write and command asks\n' in (
        isolated_home / "kairox.toml"
    ).read_text(encoding="utf-8")


def test_a_secret_typed_for_an_install_is_never_shown_back_and_a_failed_install_shows_its_diagnostic(
    workspace: Path, isolated_home: Path, offline_npm: dict[str, str], gui_factory: Callable[..., Gui], page: Page
) -> None:
    secret = "brave-key-0123456789-do-not-show"
    gui = gui_factory(workspace, offline_npm)  # the package is not in the npm cache: offline, the fetch fails
    page.goto(gui.url)
    page.click('[data-nav="marketplace"]')
    page.fill("[data-search]", "brave")
    page.locator('[data-entry="io.github.brave/brave-search-mcp-server"]').click()
    field = page.locator('[data-variable="BRAVE_API_KEY"] input')
    expect(field).to_have_attribute("type", "password")
    expect(page.locator('[data-action="install"]')).to_be_disabled()  # a required value is missing
    field.fill(secret)
    # a project file of an untrusted workspace: the write asks, in the GUI's dialog
    page.select_option('select[aria-label="configuration layer"]', "project")
    project_file = workspace / "kairox.toml"
    expect(page.locator("[data-target]")).to_have_text(f"to {project_file}")
    page.click('[data-action="install"]')
    expect(page.locator("[data-approval]")).to_contain_text(f"{project_file} is this workspace's project configuration")
    page.click('[data-answer="once"]')
    outcome = page.locator("[data-outcome]")
    expect(outcome).to_be_visible(timeout=120_000)
    expect(outcome).to_contain_text("written_disabled")
    expect(outcome.locator(".diagnostic")).to_contain_text("the dry run failed")
    steps = page.locator(".install-progress [data-step]")
    # the offline fetch fails, then the dry run: each failure is its own step, said once
    expect(steps.filter(has_text="dry run: failed")).to_have_count(1)
    expect(steps.filter(has_text="dry run: failed")).to_contain_text("exited with code 1")
    expect(steps.filter(has_text="-- node --version exited with code 1")).to_have_count(1)
    expect(field).to_have_value("")  # the page forgets the secret once sent
    outcome.scroll_into_view_if_needed()
    screenshot(page, "marketplace-failed")

    shown = page.evaluate("document.documentElement.outerHTML")
    trace = page.evaluate("fetch('/api/trace?limit=1000').then(r => r.text())")
    entry = page.evaluate("fetch('/api/catalog/io.github.brave%2Fbrave-search-mcp-server').then(r => r.text())")
    assert secret not in shown and secret not in trace and secret not in entry
    written = project_file.read_text(encoding="utf-8")
    assert secret not in written
    table = tomllib.loads(written)["mcp_servers"]["brave-search-mcp-server"]
    assert (table["enabled"], table["env_vars"]) == (False, ["BRAVE_API_KEY"])
