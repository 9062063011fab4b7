"""U1: help as people read it, one-line tool descriptions, JSON that is data, and files left tidy."""

import json
import re
import sys
from pathlib import Path

import pytest
from tests.helpers import kairox

SERVERS = Path(__file__).resolve().parents[1] / "servers"

COMMANDS = [
    [],
    ["config"],
    ["config", "set"],
    ["config", "unset"],
    ["config", "reference"],
    ["trust"],
    ["context"],
    ["doctor"],
    ["mcp"],
    ["mcp", "add"],
    ["mcp", "status"],
    ["mcp", "call"],
    ["tools", "list"],
    ["tools", "call"],
    ["skills", "validate"],
    ["skills", "install"],
    ["plugins", "install"],
    ["plugins", "marketplace", "add"],
    ["hooks", "approve"],
    ["policy", "check"],
    ["lsp"],
    ["dap"],
]


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: " ".join(c) or "kairox")
def test_dash_h_is_help_and_every_metavar_is_a_word_in_capitals(command: list[str]) -> None:
    short = kairox(*command, "-h")
    assert short.code == 0, short.stderr
    assert short.stdout == kairox(*command, "--help").stdout
    assert short.stdout.startswith("Usage: kairox")
    assert not re.search(r"<(?:str|int|float|bool|path|list\[\w+\])>", short.stdout), short.stdout
    assert not re.search(r"\{[a-z_]+\}", short.stdout.splitlines()[0]), short.stdout
    assert "-h, --help" in short.stdout


def test_help_names_arguments_and_option_values_like_other_command_lines() -> None:
    text = kairox("mcp", "add", "-h").stdout
    assert text.splitlines()[0] == "Usage: kairox mcp add [OPTIONS] NAME [COMMAND]..."
    assert "  -e, --env KEY=VALUE " in text and "  --layer LAYER " in text
    assert re.search(r"^  COMMAND\.\.\. +After --", text, re.M)
    assert "  --max-depth N " in kairox("skills", "validate", "-h").stdout
    assert kairox("mcp", "add").stderr.splitlines()[-1] == "Error: Missing argument 'NAME'."


def test_tools_list_shows_one_line_per_description_and_the_full_text_on_request(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    full = "Replace an exact piece of text in a file. The text must occur exactly once unless replace_all is true."

    def line(run_stdout: str) -> str:
        return next(row for row in run_stdout.splitlines() if row.startswith("fs.edit "))

    short = kairox("tools", "list", cwd=tmp_path)
    assert short.code == 0, short.stderr
    assert line(short.stdout).endswith("  Replace an exact piece of text in a file.")
    assert line(kairox("tools", "list", "--verbose", cwd=tmp_path).stdout).endswith(f"  {full}")
    described = {t["name"]: t["description"] for t in kairox("tools", "list", "--json", cwd=tmp_path).json()["tools"]}
    assert described["fs.edit"] == full


def test_unset_and_mcp_remove_leave_no_empty_tables(tmp_path: Path, isolated_home: Path) -> None:
    (tmp_path / ".git").mkdir()
    user = isolated_home / "kairox.toml"
    user.write_text('# mine\nmodel = "m"\n', encoding="utf-8")
    assert kairox("mcp", "add", "time", "--", "uvx", "mcp-server-time", cwd=tmp_path).code == 0
    assert (
        user.read_text()
        == '# mine\nmodel = "m"\n\n[mcp_servers.time]\ntype = "stdio"\ncommand = "uvx"\nargs = ["mcp-server-time"]\n'
    )
    assert kairox("mcp", "remove", "time", cwd=tmp_path).code == 0
    assert kairox("config", "set", "policy.network_access", "true", cwd=tmp_path).code == 0
    assert kairox("config", "unset", "policy.network_access", cwd=tmp_path).code == 0
    text = user.read_text()
    assert "[" not in text, text
    assert text.strip() == '# mine\nmodel = "m"'


def test_trust_and_config_reference_give_data_with_json(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    trusted = kairox("trust", "--json", cwd=tmp_path)
    assert trusted.code == 0, trusted.stderr
    assert trusted.json() == {
        "workspace": str(tmp_path.resolve()),
        "trusted": True,
        "changed": True,
        "allowed": [],
        "new": [],
        "modified": [],
        "removed": [],
    }
    listed = kairox("trust", "--list", "--json", cwd=tmp_path)
    assert listed.code == 0
    assert listed.json() == {"trusted_workspaces": [str(tmp_path.resolve())]}
    revoked = kairox("trust", "--revoke", "--json", cwd=tmp_path)
    assert (revoked.code, revoked.json()) == (
        0,
        {"workspace": str(tmp_path.resolve()), "trusted": False, "changed": True},
    )

    reference = kairox("config", "reference", "--json")
    assert reference.code == 0
    keys = {row["key"]: row for row in reference.json()["keys"]}
    assert keys["policy.approval_policy"] == {
        "key": "policy.approval_policy",
        "type": '"untrusted" | "on_request" | "on_failure" | "never"',
        "default": "on_request",
        "required": False,
        "layer_rules": ["project value waits for trust"],
        "description": "When to ask before a tool runs.",
    }
    assert keys["mcp_servers.NAME.startup_timeout_sec"]["default"] == 30.0


def test_mcp_call_errors_are_json_with_json(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    args = json.dumps([str(SERVERS / "basic_server.py")])
    (tmp_path / "kairox.toml").write_text(
        f"[mcp_servers.basic]\ncommand = {json.dumps(sys.executable)}\nargs = {args}\n", encoding="utf-8"
    )
    missing = kairox("mcp", "call", "basik", "echo", "--json", cwd=tmp_path)
    assert missing.code == 6
    assert missing.json() == {"error": "no MCP server named 'basik'; did you mean 'basic'?", "exit_code": 6}
    bad = kairox("mcp", "call", "basic", "echo", "{not json", "--json", cwd=tmp_path)
    assert bad.code == 2
    assert bad.json()["exit_code"] == 2 and bad.json()["error"].startswith("arguments are not valid JSON")
