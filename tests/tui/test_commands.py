"""Slash commands from extensions (a plugin's commands/, .claude/commands through skills.compat_dirs, a skill) and
/help, driven by keys: the command's prompt, its arguments substituted, reaches the scripted model as the user's
turn; a short name works while it is unambiguous; one waiting for trust or unknown says so."""

from pathlib import Path

import pytest
from tests.agent._support import make_workspace, user_config
from tests.servers.model_server import ScriptedModelServer
from tests.tui.test_session_app import api_key, app_for, paste_text, type_text, until

from kairox.config import trust_workspace
from kairox.tui._commands import all_commands
from kairox.tui._panels import TextPanel

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(120)]
__all__ = ["api_key"]  # the key of the scripted provider, for every test here

COMMIT = (
    "---\ndescription: Commit the staged changes with a message.\n"
    "argument-hint: MESSAGE\n---\nCommit with the message: $ARGUMENTS\n"
)
SHIP = "---\ndescription: Ship a branch to a remote.\n---\nPush branch $1 to remote $2, then say done ($ARGUMENTS).\n"
REVIEW = "---\ndescription: Review the diff.\n---\nReview the staged diff carefully.\n"
TAG = "---\ndescription: Tag a release.\n---\nTag it.\n"


def workspace_with_commands(root: Path) -> Path:
    workspace = make_workspace(root)
    plugin = workspace / ".kairox" / "plugins" / "commit-commands" / "commands"
    plugin.mkdir(parents=True)
    (plugin / "commit.md").write_text(COMMIT, encoding="utf-8")
    (plugin / "ship.md").write_text(SHIP, encoding="utf-8")
    (plugin / "tag.md").write_text(TAG, encoding="utf-8")
    other = workspace / ".kairox" / "plugins" / "release" / "commands"
    other.mkdir(parents=True)
    (other / "tag.md").write_text(TAG, encoding="utf-8")  # two plugins with /tag: only the long names
    claude = workspace / ".claude" / "commands"
    claude.mkdir(parents=True)
    (claude / "review.md").write_text(REVIEW, encoding="utf-8")
    return workspace


def last_notice(app: object) -> str:
    return str(app.query("#conversation .notice").last().render())  # type: ignore[attr-defined]


async def test_plugin_workspace_and_skill_commands_send_their_prompt_with_arguments(
    tmp_path: Path, isolated_home: Path
) -> None:
    workspace = workspace_with_commands(tmp_path / "repo")
    trust_workspace(workspace)
    script = [
        {
            "reply": "text",
            "text": "Committed.",
            "expect": {"last_user_contains": "Commit with the message: fix the cart total"},
        },
        {
            "reply": "text",
            "text": "Shipped.",
            "expect": {
                "last_user_contains": "Push branch feature/x to remote upstream, then say done (feature/x upstream)."
            },
        },
        {
            "reply": "text",
            "text": "Reviewed.",
            "expect": {"last_user_contains": "Review the staged diff carefully.\n\nARGUMENTS: only shop/"},
        },
        {
            "reply": "text",
            "text": "Notes.",
            "expect": {"last_user_contains": "List the changes under Added, Fixed, Removed."},
        },
    ]
    with ScriptedModelServer("openai", script) as server:
        user_config(isolated_home, server, wire="openai")
        app = app_for(workspace)
        async with app.run_test(size=(140, 40)) as pilot:
            await until(
                pilot,
                lambda: app.session is not None,
                what=lambda: [str(w.render()) for w in app.query("#conversation .notice")],
            )
            names = {c.name: c for c in all_commands(app.context.skills)}
            for typed in (
                "/commit-commands:commit fix the cart total",
                "/ship feature/x upstream",
                "/review only shop/",
                "/release-notes",
            ):
                turns = len(app.session.messages)
                await paste_text(pilot, typed)
                await pilot.press("enter")
                await until(
                    pilot,
                    lambda turns=turns: len(app.session.messages) == turns + 2 and not app.turn_running,
                    what=lambda: [str(w.render()) for w in app.query("#conversation .notice")],
                )
            users = [str(w.render()) for w in app.query("#conversation .user")]
            sent = [m.text for m in app.session.messages if m.role.value == "user"]
            await paste_text(pilot, "/tag")
            await pilot.press("escape")  # the menu closes; the text stays
            await pilot.press("enter")
            ambiguous = last_notice(app)
            await paste_text(pilot, "/comit")
            await pilot.press("escape")
            await pilot.press("enter")
            unknown = last_notice(app)
    assert users == [
        "› /commit-commands:commit fix the cart total",
        "› /ship feature/x upstream",
        "› /review only shop/",
        "› /release-notes",
    ]
    assert sent[0].startswith("Commit with the message: fix the cart total")
    assert names["commit"].skill == "commit-commands:commit" and names["commit"].source == "plugin commit-commands"
    assert names["review"].source == "workspace" and names["commit-commands:commit"].argument_hint == "MESSAGE"
    assert "tag" not in names and {"commit-commands:tag", "release:tag"} <= set(names)
    assert ambiguous == "/tag is ambiguous: /commit-commands:tag, /release:tag"
    assert unknown == "unknown command /comit; did you mean /commit?; /help lists every command"


async def test_untrusted_workspace_commands_are_named_as_waiting_for_trust_and_help_lists_every_command(
    tmp_path: Path, isolated_home: Path
) -> None:
    workspace = workspace_with_commands(tmp_path / "repo")  # not trusted: its plugins and commands wait
    (isolated_home / "skills" / "standup").mkdir(parents=True)
    (isolated_home / "skills" / "standup" / "SKILL.md").write_text(
        "---\nname: standup\ndescription: Summarise yesterday's work.\n---\nSummarise.\n"
    )
    app = app_for(workspace)
    async with app.run_test(size=(140, 40)) as pilot:
        await until(pilot, lambda: app.context is not None)
        await paste_text(pilot, "/review")
        await pilot.press("escape")
        await pilot.press("enter")
        refused = last_notice(app)
        await paste_text(pilot, "/help")
        await pilot.press("enter")
        await until(pilot, lambda: isinstance(app.screen, TextPanel) and bool(app.screen.query("#panel-text")))
        shown = str(app.screen.query_one("#panel-text").render())
    assert refused == "/review comes from the workspace, which is not trusted; run `kairox trust` in it, then restart"
    lines = shown.splitlines()
    assert any(line.split()[:1] == ["/help"] and "every command" in line for line in lines)
    assert any(line.split()[:2] == ["/model", "[PROVIDER/]NAME"] for line in lines)
    assert any(
        line.split()[:1] == ["/standup"] and "Summarise yesterday's work." in line and line.endswith("[user]")
        for line in lines
    )
    assert not any(line.split()[:1] == ["/review"] for line in lines)


async def test_help_names_a_plugin_command_once_with_its_short_name(tmp_path: Path, isolated_home: Path) -> None:
    workspace = workspace_with_commands(tmp_path / "repo")
    trust_workspace(workspace)
    app = app_for(workspace)
    async with app.run_test(size=(160, 50)) as pilot:
        await until(pilot, lambda: app.context is not None)
        app.command("/help")
        await until(pilot, lambda: isinstance(app.screen, TextPanel) and bool(app.screen.query("#panel-text")))
        lines = str(app.screen.query_one("#panel-text").render()).splitlines()
    commit = [line for line in lines if "Commit the staged changes" in line]
    assert len(commit) == 1 and commit[0].split()[:2] == ["/commit-commands:commit", "MESSAGE"]
    assert commit[0].endswith("[plugin commit-commands; also /commit]")
    tags = [line.split()[0] for line in lines if "Tag a release." in line]
    assert tags == ["/commit-commands:tag", "/release:tag"]  # two plugins: no short name
    assert any(line.split()[0] == "/review" and line.endswith("[workspace]") for line in lines if line.strip())


def menu_lines(app: object) -> list[str]:
    menu = app.query_one("#completions")  # type: ignore[attr-defined]
    return [] if menu.has_class("empty") else [line.rstrip() for line in str(menu.render()).splitlines()]


async def test_the_completion_menu_opens_on_slash_and_at_and_tab_takes_the_highlighted_option(
    tmp_path: Path, isolated_home: Path
) -> None:
    workspace = workspace_with_commands(tmp_path / "repo")
    trust_workspace(workspace)
    app = app_for(workspace)
    async with app.run_test(size=(140, 40)) as pilot:
        await until(pilot, lambda: app.context is not None)
        composer = app.query_one("#composer")
        await pilot.press("slash")
        await pilot.pause(0.1)
        every, total = menu_lines(app), len(all_commands(app.context.skills))
        await type_text(pilot, "comm")
        await pilot.pause(0.1)
        narrowed = menu_lines(app)
        await pilot.press("down")
        await pilot.pause(0.1)
        moved = menu_lines(app)
        await pilot.press("tab")
        await pilot.pause(0.1)
        taken, after_take = composer.text, menu_lines(app)
        composer.load_text("")
        await type_text(pilot, "look at @sh")
        await pilot.pause(0.1)
        paths = menu_lines(app)
        await pilot.press("tab")
        await pilot.pause(0.1)
        folder, in_folder = composer.text, menu_lines(app)
        await pilot.press("tab")
        await pilot.pause(0.1)
        file = composer.text
        await type_text(pilot, "@nothing-like-this")
        await pilot.pause(0.1)
        nothing = menu_lines(app)
    assert every[0].split()[0] == "/help" and len(every) == 9  # eight shown, the count below
    assert every[-1].startswith(f"1/{total} ") and "Tab takes" in every[-1] and total > 20
    # prefix matches first (/commit, /commit-commands:...), then names holding the text (/release-tools... none here)
    assert [line.split()[0] for line in narrowed[:-1]] == [
        "/commit",
        "/commit-commands:commit",
        "/commit-commands:ship",
        "/commit-commands:tag",
    ]
    assert "MESSAGE  Commit the staged changes with a message." in narrowed[0]
    assert moved == narrowed  # the highlight is a style: the lines stay
    assert taken == "/commit-commands:commit " and after_take == []
    # paths starting with the word first, then those with a part starting with it
    assert [line.split()[0] for line in paths[:-1]] == [
        "@shop/",
        "@shop/cart.py",
        "@.kairox/plugins/commit-commands/commands/ship.md",
    ]
    assert folder == "look at @shop/" and [line.split()[0] for line in in_folder[:-1]] == ["@shop/cart.py"]
    assert file == "look at @shop/cart.py "
    assert nothing == []
