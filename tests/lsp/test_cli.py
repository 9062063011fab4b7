"""``kairox lsp status`` and ``kairox dap sessions`` as a user runs them."""

import sys
from pathlib import Path

import pytest
from tests.helpers import kairox
from tests.lsp._fixtures import BIN


def write_config(workspace: Path) -> None:
    (workspace / "kairox.toml").write_text(
        f"""
[lsp_servers.jedi]
command = "{BIN / "jedi-language-server"}"
file_patterns = ["*.py"]

[lsp_servers.ghost]
command = "kairox-no-such-language-server"
file_patterns = ["*.rs"]

[dap_servers.debugpy]
command = "{sys.executable}"
args = ["-m", "debugpy.adapter"]
languages = ["python"]
"""
    )


def test_lsp_status_lists_servers_held_back_by_trust_until_the_workspace_is_trusted(project: Path) -> None:
    write_config(project)
    run = kairox("--workspace", project, "lsp", "status", "--json")
    assert run.code == 0, run.stderr
    assert [(s["server"], s["status"]) for s in run.json()["servers"]] == [
        ("ghost", "held_back"),
        ("jedi", "held_back"),
    ]


@pytest.mark.timeout(60)
def test_lsp_status_probe_starts_each_trusted_server_and_reports_a_missing_command(project: Path) -> None:
    write_config(project)
    assert kairox("--workspace", project, "trust").code == 0
    run = kairox("--workspace", project, "lsp", "status", "--probe", "--json")
    assert run.code == 1
    ghost, jedi = run.json()["servers"]
    assert (jedi["status"], jedi["server_info"]["name"], jedi["position_encoding"]) == (
        "ready",
        "jedi-language-server",
        "utf-32",
    )
    assert "definitionProvider" in jedi["capabilities"]
    assert (ghost["status"], ghost["command"]) == ("missing_command", ["kairox-no-such-language-server"])
    assert jedi["confinement"]["confined"] is True and jedi["confinement"]["sandbox"] == "workspace_write"
    text = kairox("--workspace", project, "lsp", "status")
    lines = text.stdout.splitlines()
    assert lines[0::2] == [
        "ghost: missing_command  (kairox-no-such-language-server; files *.rs)",
        f"jedi: idle  ({BIN / 'jedi-language-server'}; files *.py)",
    ]
    # each with what it runs under: a project's server, confined with a state folder of its own
    assert all(line.startswith("  confined: workspace_write, network on, writes ") for line in lines[1::2]), lines


def test_dap_sessions_lists_the_adapters_and_no_sessions_in_a_fresh_process(project: Path) -> None:
    write_config(project)
    assert kairox("--workspace", project, "trust").code == 0
    run = kairox("--workspace", project, "dap", "sessions", "--json")
    assert run.code == 0, run.stderr
    assert run.json() == {
        "workspace": str(project.resolve()),
        "adapters": [
            {
                "server": "debugpy",
                "status": "idle",
                "reason": None,
                "command": [sys.executable, "-m", "debugpy.adapter"],
                "languages": ["python"],
                "origin": f"{project.resolve() / 'kairox.toml'}:10",
            }
        ],
        "sessions": [],
    }
    text = kairox("--workspace", project, "dap", "sessions")
    assert text.stdout.splitlines() == [
        f"debugpy: ready to launch  ({sys.executable} -m debugpy.adapter)",
        "No debug sessions in this process.",
    ]


def test_lsp_status_finds_a_command_given_with_an_environment_variable(project: Path) -> None:
    (project / "kairox.toml").write_text(
        """
[lsp_servers.jedi]
command = "${KAIROX_TEST_LS_BIN}/jedi-language-server"
file_patterns = ["*.py"]
"""
    )
    assert kairox("--workspace", project, "trust").code == 0
    run = kairox("--workspace", project, "lsp", "status", "--json", env={"KAIROX_TEST_LS_BIN": str(BIN)})
    assert run.code == 0, run.stderr
    assert [(s["server"], s["status"]) for s in run.json()["servers"]] == [("jedi", "idle")]
