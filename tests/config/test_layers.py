"""C1-C3: layers, merge rules and provenance, checked through `kairox config show --provenance --json`."""

from pathlib import Path

from tests.helpers import kairox


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def test_provenance_names_winner_file_line_and_shadowed_layers(
    tmp_path: Path, isolated_home: Path, monkeypatch
) -> None:
    system = write(
        tmp_path / "etc" / "kairox.toml",
        '# system defaults\nmodel = "sys-model"\n\n[tools]\ndefault_timeout_sec = 10.0\noutput_limit_chars = 5000\n',
    )
    monkeypatch.setenv("KAIROX_SYSTEM_CONFIG", str(system))
    user = write(
        isolated_home / "kairox.toml",
        'model = "user-model"\n[tools]\ndefault_timeout_sec = 20.0\n[policy]\nnetwork_access = false\n'
        '[policy.rules]\ndeny = [\n  "fs.read(~/.ssh/**)",\n]\n',
    )
    workspace = tmp_path / "ws"
    (workspace / ".git").mkdir(parents=True)
    project = write(
        workspace / "kairox.toml",
        "[tools]\ndefault_timeout_sec = 30.0\n\n[policy.rules]\n"
        'ask = ["shell.exec(git push*)"]\ndeny = ["fs.write(./dist/**)"]\n',
    )
    local = write(workspace / ".kairox" / "kairox.local.toml", "[tools]\noutput_limit_chars = 7000\n")
    assert kairox("trust", cwd=workspace).code == 0

    run = kairox(
        "-c",
        "policy.network_access=true",
        "config",
        "show",
        "--provenance",
        "--json",
        cwd=workspace,
        env={"KAIROX_MODEL": "env-model"},
    )
    assert run.code == 0, run.stderr
    data = run.json()
    prov = data["provenance"]
    assert prov["model"] == {
        "layer": "env",
        "file": None,
        "line": None,
        "source": "env:KAIROX_MODEL",
        "shadowed": [
            {"layer": "user", "file": str(user), "line": 1},
            {"layer": "system", "file": str(system), "line": 2},
        ],
    }
    assert prov["tools.default_timeout_sec"] == {
        "layer": "project",
        "file": str(project),
        "line": 2,
        "shadowed": [
            {"layer": "user", "file": str(user), "line": 3},
            {"layer": "system", "file": str(system), "line": 5},
            {"layer": "default", "file": None, "line": None},
        ],
    }
    assert prov["tools.output_limit_chars"]["layer"] == "local"
    assert prov["tools.output_limit_chars"]["file"] == str(local)
    assert prov["tools.output_limit_chars"]["line"] == 2
    assert [s["layer"] for s in prov["tools.output_limit_chars"]["shadowed"]] == ["system", "default"]
    assert prov["policy.network_access"]["layer"] == "cli"
    assert data["config"]["policy"]["network_access"] is True
    assert data["config"]["model"] == "env-model"
    assert data["config"]["tools"]["default_timeout_sec"] == 30.0
    # rule lists concatenate across layers, each rule keeps its own file and line
    assert data["rules"] == [
        {"action": "deny", "pattern": "fs.read(~/.ssh/**)", "layer": "user", "file": str(user), "line": 8},
        {"action": "deny", "pattern": "fs.write(./dist/**)", "layer": "project", "file": str(project), "line": 6},
        {"action": "ask", "pattern": "shell.exec(git push*)", "layer": "project", "file": str(project), "line": 5},
    ]
    assert {layer["name"]: layer["status"] for layer in data["layers"]} == {
        "default": "loaded",
        "system": "loaded",
        "user": "loaded",
        "project": "loaded",
        "local": "loaded",
        "env": "loaded",
        "cli": "loaded",
    }


def test_server_entry_is_replaced_whole_by_a_higher_layer(tmp_path: Path, isolated_home: Path) -> None:
    write(
        isolated_home / "kairox.toml",
        '[mcp_servers.docs]\ncommand = "docs-server"\nargs = ["--verbose"]\nenv = { LEVEL = "debug" }\n',
    )
    workspace = tmp_path / "ws"
    write(workspace / "kairox.toml", '[mcp_servers.docs]\ncommand = "other-docs"\n')
    assert kairox("trust", cwd=workspace).code == 0
    data = kairox("config", "show", "--json", cwd=workspace).json()
    server = data["config"]["mcp_servers"]["docs"]
    assert (server["command"], server["args"], server["env"]) == ("other-docs", [], {})


def test_profile_applies_over_files_and_under_cli(tmp_path: Path, isolated_home: Path) -> None:
    write(
        isolated_home / "kairox.toml",
        'model = "base"\n[profiles.review]\nmodel = "careful"\npolicy = { approval_policy = "untrusted" }\n',
    )
    workspace = tmp_path / "ws"
    workspace.mkdir()
    data = kairox("--profile", "review", "config", "show", "--provenance", "--json", cwd=workspace).json()
    assert data["config"]["model"] == "careful"
    assert data["config"]["policy"]["approval_policy"] == "untrusted"
    assert data["provenance"]["model"]["layer"] == "profile"
    assert data["provenance"]["model"]["line"] == 3
    overridden = kairox("--profile", "review", "-c", "model=cli-model", "config", "get", "model", cwd=workspace)
    assert overridden.stdout.strip() == "cli-model"
    unknown = kairox("--profile", "reveiw", "config", "validate", cwd=workspace)
    assert unknown.code == 3
    assert "did you mean 'review'?" in unknown.stdout


def test_cli_value_is_toml_when_it_parses_else_a_string(tmp_path: Path) -> None:
    data = kairox(
        "-c", 'tools.disabled=["shell.exec"]', "-c", "model=gpt 5 mini", "config", "show", "--json", cwd=tmp_path
    ).json()
    assert data["config"]["tools"]["disabled"] == ["shell.exec"]
    assert data["config"]["model"] == "gpt 5 mini"


def test_config_paths_reports_each_layer(tmp_path: Path, isolated_home: Path) -> None:
    write(isolated_home / "kairox.toml", "model = [\n")
    data = kairox("config", "paths", "--json", cwd=tmp_path).json()
    status = {layer["name"]: (layer["status"], layer["exists"]) for layer in data["layers"]}
    assert status["user"] == ("error", True)
    assert status["project"] == ("not_found", False)


def test_human_provenance_shows_a_server_entry_as_written(tmp_path: Path, isolated_home: Path) -> None:
    write(isolated_home / "kairox.toml", '[mcp_servers.docs]\ncommand = "docs-server"\nenv = { API_TOKEN = "t0k3n" }\n')
    run = kairox("config", "show", "--provenance", cwd=tmp_path)
    assert run.code == 0, run.stderr
    (line,) = [line for line in run.stdout.splitlines() if "mcp_servers.docs" in line]
    assert line.endswith(
        'mcp_servers.docs = {"type": "stdio", "command": "docs-server", "env": {"API_TOKEN": "<redacted>"}}'
    )


def test_a_model_provider_key_set_with_dash_c_keeps_the_rest_of_the_entry(tmp_path: Path, isolated_home: Path) -> None:
    write(
        isolated_home / "kairox.toml",
        '[model_providers.local]\nbase_url = "http://127.0.0.1:1/v1"\n'
        'api_key_env = "LOCAL_KEY"\ncontext_window = 32000\n',
    )
    workspace = tmp_path / "ws"
    workspace.mkdir()
    override = "model_providers.local.base_url=http://127.0.0.1:2/v1"
    data = kairox("-c", override, "config", "show", "--provenance", "--json", cwd=workspace).json()
    entry = data["config"]["model_providers"]["local"]
    assert (entry["base_url"], entry["context_window"], entry["api_key_env"]) == (
        "http://127.0.0.1:2/v1",
        32000,
        "LOCAL_KEY",
    )
    assert data["provenance"]["model_providers.local.context_window"]["layer"] == "user"
