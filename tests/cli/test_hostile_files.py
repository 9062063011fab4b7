"""Files built to break the loaders never end a command in a traceback: deeply nested TOML, a TOML integer of
more than 4,300 digits, deeply nested JSON in plugin.json, hooks.json, .mcp.json or marketplace.json, and a NUL
byte in a plugin's path field each become a diagnostic naming the file and line, and the rest still loads."""

import json
from dataclasses import dataclass
from pathlib import Path

import pytest
from tests.helpers import kairox

from kairox.cli._common import ExitCode

pytestmark = pytest.mark.timeout(300)

DEEP = "[" * 5000 + "]" * 5000
DIGITS = "9" * 5000
COMMANDS = ("config validate", "doctor", "context", "skills list", "plugins list", "plugins validate")


@dataclass
class Setup:
    workspace: Path
    home: Path
    plugins: Path
    market: Path


def setup(root: Path) -> Setup:
    """A workspace and a home with a good plugin, a plugin to break, and a marketplace listing the good one."""
    workspace, home = root / "ws", root / "home"
    (workspace / ".git").mkdir(parents=True)
    plugins, market = home / "plugins", home / "market"
    for name in ("good", "bad"):
        skill = plugins / name / "skills" / f"{name}-skill"
        skill.mkdir(parents=True)
        (skill / "SKILL.md").write_text(f"---\nname: {name}-skill\ndescription: a skill of {name}\n---\nBody.\n")
        (plugins / name / ".claude-plugin").mkdir()
        (plugins / name / ".claude-plugin" / "plugin.json").write_text(json.dumps({"name": name, "version": "1.0.0"}))
    (market / ".claude-plugin").mkdir(parents=True)
    (market / ".claude-plugin" / "marketplace.json").write_text(
        json.dumps({"name": "m", "owner": {"name": "o"}, "plugins": [{"name": "good", "source": "../plugins/good"}]})
    )
    (home / "kairox.toml").write_text(
        f'[plugins]\npaths = ["plugins/good", "plugins/bad"]\n[plugins.marketplaces.m]\nsource = "{market}"\n'
    )
    return Setup(workspace, home, plugins, market)


def break_it(case: str, where: Setup) -> tuple[Path, int]:
    """Write the hostile file of ``case``; returns the file and the line its diagnostic must name."""
    bad = where.plugins / "bad"
    if case == "deep_toml":
        file, text, line = where.workspace / "kairox.toml", f'model = "m"\ndeep = {DEEP}\n', 2
    elif case == "long_integer_toml":
        file, text, line = where.workspace / "kairox.toml", f'model = "m"\n\nbig = {DIGITS}\n', 3
    elif case == "deep_plugin_json":
        file, text, line = bad / ".claude-plugin" / "plugin.json", f'{{\n"name": "bad",\n"keywords": {DEEP}\n}}', 3
    elif case == "deep_hooks_json":
        file, text, line = bad / "hooks" / "hooks.json", f'{{\n"hooks": {DEEP}\n}}', 2
    elif case == "deep_mcp_json":
        file, text, line = where.workspace / ".mcp.json", f'{{\n"mcpServers": {DEEP}\n}}', 2
    elif case == "deep_marketplace_json":
        file, text, line = (
            where.market / ".claude-plugin" / "marketplace.json",
            f'{{\n"name": "m",\n"plugins": {DEEP}\n}}',
            3,
        )
    else:
        assert case == "nul_in_plugin_path"
        file, line = bad / ".claude-plugin" / "plugin.json", 3
        text = json.dumps({"name": "bad", "skills": "./skills\u0000/x"}, indent=0)
    file.parent.mkdir(parents=True, exist_ok=True)
    file.write_text(text, encoding="utf-8")
    return file, line


NAMED_BY = {
    # configuration errors stop every command that reads the configuration (exit 3), naming file and line
    "deep_toml": {"config validate", "doctor", "context", "skills list", "plugins list"},
    "long_integer_toml": {"config validate", "doctor", "context", "skills list", "plugins list"},
    "deep_plugin_json": {"doctor", "context", "skills list", "plugins list", "plugins validate"},
    "deep_hooks_json": {"doctor", "context", "skills list", "plugins list", "plugins validate"},
    "deep_mcp_json": {"doctor", "context"},
    "deep_marketplace_json": {"plugins validate", "plugins marketplace list"},
    "nul_in_plugin_path": {"doctor", "context", "skills list", "plugins list", "plugins validate"},
}


@pytest.mark.parametrize("case", sorted(NAMED_BY))
def test_a_hostile_file_is_a_diagnostic_with_file_and_line_in_every_command(tmp_path: Path, case: str) -> None:
    where = setup(tmp_path)
    file, line = break_it(case, where)
    env = {"KAIROX_HOME": str(where.home), "KAIROX_SYSTEM_CONFIG": str(where.home / "none.toml")}
    commands = COMMANDS + (("plugins marketplace list",) if case == "deep_marketplace_json" else ())
    for command in commands:
        args = command.split()
        if command == "plugins validate":
            args.append(str(where.market if case == "deep_marketplace_json" else where.plugins))
        run = kairox("--workspace", where.workspace, *args, env=env)
        output = run.stdout + run.stderr
        assert "Traceback" not in output, (command, run.stderr)
        if command in NAMED_BY[case]:
            assert f"{file}:{line}" in output, (command, output)
        if case.endswith("_toml") and command != "plugins validate":
            assert run.code == ExitCode.CONFIG, (command, run.code)
        elif command in ("context", "skills list"):
            # the rest loads: the good plugin's skill is there
            assert "good:good-skill" in output, (command, output)
        elif command == "plugins list":
            assert [row.split()[0] for row in run.stdout.splitlines()][:1] == ["good"], run.stdout
