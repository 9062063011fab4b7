"""C4-C5: every problem of every file at once, with file:line, key and a hint; secrets redacted."""

from pathlib import Path

from tests.helpers import kairox


def test_validate_lists_all_three_mistakes_with_file_line_and_did_you_mean(tmp_path: Path) -> None:
    config = tmp_path / "kairox.toml"
    config.write_text(
        "[policy]\n"
        'aproval_policy = "never"\n'  # misspelt key (line 2)
        "network_access = true\n"
        "[tools]\n"
        'default_timeout_sec = "slow"\n'  # wrong type (line 5)
        "[mcp_servers.broken]\n"  # stdio server that also sets url (line 6)
        'command = "srv"\n'
        'url = "http://127.0.0.1:9/mcp"\n',
        encoding="utf-8",
    )
    run = kairox("config", "validate", cwd=tmp_path)
    assert run.code == 3
    lines = run.stdout.strip().splitlines()
    assert len(lines) == 3, run.stdout
    assert (
        lines[0] == f"{config}:2: policy.aproval_policy: unknown key 'aproval_policy' (did you mean 'approval_policy'?)"
    )
    assert lines[1].startswith(f"{config}:5: tools.default_timeout_sec: ")
    assert "valid number" in lines[1]
    assert (
        lines[2] == f"{config}:8: mcp_servers.broken.url: a stdio server cannot "
        'set url; remove it or set type = "sse" or "streamable_http"'
    )

    as_json = kairox("config", "validate", "--json", cwd=tmp_path)
    assert as_json.code == 3
    assert [(p["line"], p["key"]) for p in as_json.json()["problems"]] == [
        (2, "policy.aproval_policy"),
        (5, "tools.default_timeout_sec"),
        (8, "mcp_servers.broken.url"),
    ]


def test_problems_of_several_files_are_reported_together(tmp_path: Path, isolated_home: Path) -> None:
    (isolated_home / "kairox.toml").write_text("[skils]\n", encoding="utf-8")
    (tmp_path / "kairox.toml").write_text('[policy]\nsandbox_policy = "everything"\n', encoding="utf-8")
    run = kairox("config", "validate", cwd=tmp_path)
    assert run.code == 3
    assert f"{isolated_home / 'kairox.toml'}:1: skils: unknown key 'skils' (did you mean 'skills'?)" in run.stdout
    assert f"{tmp_path / 'kairox.toml'}:2: policy.sandbox_policy:" in run.stdout


def test_toml_syntax_error_names_the_line(tmp_path: Path) -> None:
    (tmp_path / "kairox.toml").write_text('model = "a"\nmodel = \n', encoding="utf-8")
    run = kairox("config", "validate", cwd=tmp_path)
    assert run.code == 3
    assert f"{tmp_path / 'kairox.toml'}:2: not valid TOML" in run.stdout


def test_a_broken_user_file_stops_commands_that_need_configuration(tmp_path: Path, isolated_home: Path) -> None:
    (isolated_home / "kairox.toml").write_text("[policy]\nnetwork = true\n", encoding="utf-8")
    run = kairox("config", "show", cwd=tmp_path)
    assert run.code == 3
    assert "did you mean 'network_access'?" in run.stderr


def test_secrets_are_redacted_in_every_output(tmp_path: Path, isolated_home: Path) -> None:
    (isolated_home / "kairox.toml").write_text(
        '[mcp_servers.remote]\nurl = "http://127.0.0.1:9/mcp"\nheaders = { Authorization = "Bearer s3cr3t" }\n'
        'bearer_token_env_var = "REMOTE_TOKEN"\n'
        '[mcp_servers.local]\ncommand = "srv"\nenv = { API_TOKEN = "t0k3n", PLAIN = "" }\n',
        encoding="utf-8",
    )
    for args in (["config", "show"], ["config", "show", "--json"], ["config", "show", "--provenance"]):
        run = kairox(*args, cwd=tmp_path)
        assert run.code == 0, run.stderr
        assert "s3cr3t" not in run.stdout and "t0k3n" not in run.stdout
        assert "<redacted>" in run.stdout
    data = kairox("config", "show", "--json", cwd=tmp_path).json()
    assert data["config"]["mcp_servers"]["remote"]["bearer_token_env_var"] == "REMOTE_TOKEN"


def test_credentials_in_urls_and_server_arguments_are_redacted(tmp_path: Path, isolated_home: Path) -> None:
    (isolated_home / "kairox.toml").write_text(
        '[mcp_servers.remote]\nurl = "https://bot:pa55word@mcp.example/x?api_key=k3y&team=a"\n'
        '[mcp_servers.local]\ncommand = "srv"\nargs = ["--api-key", "sk-l1ve", "--token=t0k", "--verbose", "https://ghp_abc@git.example/r"]\n'
        '[model_providers.corp]\nbase_url = "https://llm.example/v1?token=zzz9"\n',
        encoding="utf-8",
    )
    data = kairox("config", "show", "--json", cwd=tmp_path).json()["config"]
    assert data["mcp_servers"]["remote"]["url"] == "https://bot:<redacted>@mcp.example/x?api_key=<redacted>&team=a"
    assert data["mcp_servers"]["local"]["args"] == [
        "--api-key",
        "<redacted>",
        "--token=<redacted>",
        "--verbose",
        "https://<redacted>@git.example/r",
    ]
    assert data["model_providers"]["corp"]["base_url"] == "https://llm.example/v1?token=<redacted>"
    for args in (
        ["config", "show"],
        ["config", "show", "--provenance"],
        ["config", "get", "mcp_servers.local.args"],
        ["config", "get", "mcp_servers.remote"],
    ):
        run = kairox(*args, cwd=tmp_path)
        assert run.code == 0, run.stderr
        for secret in ("pa55word", "k3y", "sk-l1ve", "t0k", "ghp_abc", "zzz9"):
            assert secret not in run.stdout, (args, secret)


def test_every_problem_of_a_server_entry_is_reported_at_its_own_key(tmp_path: Path) -> None:
    config = tmp_path / "kairox.toml"
    config.write_text(
        "[mcp_servers.broken]\n"  # line 1
        'command = "srv"\n'
        'url = "http://127.0.0.1:9/mcp"\n'  # a stdio server with a url (line 3)
        'startup_timeout_sec = "slow"\n'  # wrong type (line 4)
        'headers = { A = "b" }\n',  # another remote key (line 5)
        encoding="utf-8",
    )
    run = kairox("config", "validate", "--json", cwd=tmp_path)
    assert run.code == 3
    assert [(p["line"], p["key"]) for p in run.json()["problems"]] == [
        (3, "mcp_servers.broken.url"),
        (5, "mcp_servers.broken.headers"),
        (4, "mcp_servers.broken.startup_timeout_sec"),
    ]
    text = kairox("config", "validate", cwd=tmp_path).stdout
    assert f"{config}:4: mcp_servers.broken.startup_timeout_sec: Input should be a valid number" in text
    assert f"{config}:5: mcp_servers.broken.headers: a stdio server cannot set headers;" in text


def test_a_misspelt_key_in_a_server_entry_gets_a_did_you_mean(tmp_path: Path) -> None:
    config = tmp_path / "kairox.toml"
    config.write_text('[mcp_servers.files]\ncomand = "npx"\nargs = ["-y", "server-filesystem"]\n', encoding="utf-8")
    run = kairox("config", "validate", cwd=tmp_path)
    assert run.code == 3
    assert run.stdout.splitlines() == [
        f"{config}:1: mcp_servers.files: set `command` (stdio) or `url` (sse / streamable_http)",
        f"{config}:2: mcp_servers.files.comand: unknown key 'comand' (did you mean 'command'?)",
    ]


def test_validate_checks_the_workspace_mcp_json_too(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    mcp_json = tmp_path / ".mcp.json"
    mcp_json.write_text('{\n  "mcpServers": {\n    "files": {"command": "npx",}\n  }\n}\n', encoding="utf-8")
    run = kairox("config", "validate", cwd=tmp_path)
    assert run.code == 3
    assert (
        run.stdout == f"{mcp_json}:3: not valid JSON: Expecting property name "
        "enclosed in double quotes (fix the syntax at that line)\n"
    )

    mcp_json.write_text(
        '{"mcpServers": {\n "files": {"command": "npx", "url": '
        '"http://127.0.0.1:9/mcp"},\n "time": {"command": "uvx"}\n}}\n',
        encoding="utf-8",
    )
    run = kairox("config", "validate", "--json", cwd=tmp_path)
    assert run.code == 3
    assert [(p["file"], p["line"], p["key"], p["layer"]) for p in run.json()["problems"]] == [
        (str(mcp_json), 2, "mcpServers.files", ".mcp.json")
    ]

    mcp_json.write_text('{"mcpServers": {"time": {"command": "uvx", "args": ["mcp-server-time"]}}}\n', encoding="utf-8")
    run = kairox("config", "validate", cwd=tmp_path)
    assert (run.code, run.stdout) == (0, "configuration is valid\n")


def test_a_rule_pattern_the_policy_cannot_read_is_a_problem_with_its_line(tmp_path: Path) -> None:
    config = tmp_path / "kairox.toml"
    config.write_text(
        "[policy.rules]\n"
        'allow = ["mcp__db__query(.sql=SELECT *, .limit=*)"]\n'
        'deny = ["fs.read(secrets/**)", "mcp__db__query(.options.mode=drop)"]\n'
        'ask = ["fs.write(.path=src/**)"]\n',
        encoding="utf-8",
    )
    run = kairox("config", "validate", cwd=tmp_path)

    assert run.code == 3
    assert run.stdout.strip().splitlines() == [
        f"{config}:3: policy.rules.deny: '.options.mode=drop' names "
        "an argument inside another; name the top-level argument "
        "(.options=...): deny and ask rules see every value below it (fix the rule; it is ignored until then)",
        f"{config}:4: policy.rules.ask: fs.write rules take a path glob such as fs.write(src/**), not named arguments "
        "(fix the rule; it is ignored until then)",
    ]
