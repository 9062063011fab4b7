"""E3: doctor fails only for what is required, fits each hint to its cause, reads versions sanely and counts
tools as `mcp status` and `context` do."""

import json
import os
import sys
from pathlib import Path

import pytest
from tests.helpers import kairox

SERVERS = Path(__file__).resolve().parents[1] / "servers"
# bubblewrap is required under a sandboxed policy; these tests are about extensions, so the sandbox is off
NO_SANDBOX = ("-c", "policy.sandbox_policy=danger_full_access")

pytestmark = pytest.mark.timeout(120)


def _user_config(home: Path, text: str) -> None:
    (home / "kairox.toml").write_text(text, encoding="utf-8")


def _workspace(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    (root / ".git").mkdir(parents=True)
    return root


def _crash_server(name: str, *, required: bool) -> str:
    args = json.dumps([str(SERVERS / "crash_at_start.py")])
    return (
        f"[mcp_servers.{name}]\ncommand = {json.dumps(sys.executable)}"
        f"\nargs = {args}\nrequired = {str(required).lower()}\n"
    )


def test_a_failing_server_that_is_not_required_does_not_fail_doctor(tmp_path: Path, isolated_home: Path) -> None:
    workspace = _workspace(tmp_path)
    _user_config(isolated_home, _crash_server("flaky", required=False))
    run = kairox(*NO_SANDBOX, "doctor", cwd=workspace)
    assert run.code == 0, run.stdout
    assert "  flaky: the server exited with code 3 before finishing the MCP handshake" in run.stdout
    assert run.stdout.rstrip().endswith("Doctor: everything required works; 1 extension(s) failed to load (see above).")
    report = kairox(*NO_SANDBOX, "doctor", "--json", cwd=workspace).json()
    assert (report["ok"], [(f["name"], f["required"]) for f in report["failures"]]) == (True, [("flaky", False)])


def test_a_failing_required_server_fails_doctor(tmp_path: Path, isolated_home: Path) -> None:
    workspace = _workspace(tmp_path)
    _user_config(isolated_home, _crash_server("db", required=True))
    run = kairox(*NO_SANDBOX, "doctor", "--json", cwd=workspace)
    assert run.code == 1, run.stderr
    report = run.json()
    assert (report["ok"], [(f["name"], f["required"]) for f in report["failures"]]) == (False, [("db", True)])
    text = kairox(*NO_SANDBOX, "doctor", cwd=workspace)
    assert text.code == 1
    assert "  db (required): the server exited with code 3" in text.stdout
    assert text.stdout.rstrip().endswith("Doctor: something required is broken (see above).")


def test_a_url_server_gets_a_url_and_login_hint(tmp_path: Path, isolated_home: Path, free_tcp_port: int) -> None:
    workspace = _workspace(tmp_path)
    _user_config(
        isolated_home, f'[mcp_servers.remote]\nurl = "http://127.0.0.1:{free_tcp_port}/mcp"\nstartup_timeout_sec = 10\n'
    )
    report = kairox(*NO_SANDBOX, "doctor", "--json", cwd=workspace).json()
    (failure,) = report["failures"]
    assert failure["name"] == "remote"
    assert (
        failure["fix"] == "check mcp_servers.remote.url and its authorization: "
        "`kairox mcp login remote`, headers or bearer_token_env_var"
    )


def test_a_missing_variable_gets_an_export_hint(tmp_path: Path, isolated_home: Path) -> None:
    workspace = _workspace(tmp_path)
    args = json.dumps([str(SERVERS / "basic_server.py"), "--token", "${KAIROX_TEST_UNSET_TOKEN}"])
    _user_config(isolated_home, f"[mcp_servers.tokened]\ncommand = {json.dumps(sys.executable)}\nargs = {args}\n")
    report = kairox(*NO_SANDBOX, "doctor", "--json", cwd=workspace).json()
    (failure,) = report["failures"]
    assert "uses ${KAIROX_TEST_UNSET_TOKEN}, which is not set" in failure["reason"]
    assert (
        failure["fix"] == "export KAIROX_TEST_UNSET_TOKEN (or give a default in the "
        "entry with ${KAIROX_TEST_UNSET_TOKEN:-value}), then try again"
    )


def test_a_missing_bearer_variable_of_a_url_server_gets_an_export_hint(tmp_path: Path, isolated_home: Path) -> None:
    workspace = _workspace(tmp_path)
    _user_config(
        isolated_home,
        '[mcp_servers.remote]\nurl = "http://127.0.0.1:9/mcp"\nbearer_token_env_var = "KAIROX_TEST_NO_BEARER"\n',
    )
    report = kairox(*NO_SANDBOX, "doctor", "--json", cwd=workspace).json()
    (failure,) = report["failures"]
    assert failure["fix"].startswith("export KAIROX_TEST_NO_BEARER ")


def _node_program(folder: Path, name: str, body: str) -> Path:
    program = folder / name
    program.write_text(f"#!{os.path.realpath(_node())}\n{body}\n", encoding="utf-8")
    program.chmod(0o755)
    return program


def _node() -> str:
    import shutil

    found = shutil.which("node")
    if found is None:
        pytest.fail("node is not on PATH (scripts/system-packages.sh installs it)")
    return found


def test_versions_of_node_language_servers_are_parsed(tmp_path: Path, isolated_home: Path) -> None:
    workspace = _workspace(tmp_path)
    # a language server without --version dies with a stack trace; another prints its version
    crashing = _node_program(
        tmp_path,
        "crashing-langserver",
        '(function(){var e={1:e=>{"use strict";throw new Error("Connection input stream is not set")}};e[1]()})()',
    )
    plain = _node_program(tmp_path, "plain-langserver", 'console.log("4.3.3")')
    _user_config(
        isolated_home,
        f'[lsp_servers.crashing]\ncommand = "{crashing}"\nfile_patterns = ["*.py"]\n'
        f'[lsp_servers.plain]\ncommand = "{plain}"\nfile_patterns = ["*.ts"]\n',
    )
    report = kairox(*NO_SANDBOX, "doctor", "--json", cwd=workspace).json()
    versions = {c["check"]: c["version"] for c in report["environment"] if c["check"] in (str(crashing), str(plain))}
    assert versions == {str(crashing): None, str(plain): "4.3.3"}


def test_doctor_and_mcp_status_count_the_same_tools(tmp_path: Path, isolated_home: Path) -> None:
    workspace = _workspace(tmp_path)
    args = json.dumps([str(SERVERS / "basic_server.py")])
    _user_config(isolated_home, f"[mcp_servers.basic]\ncommand = {json.dumps(sys.executable)}\nargs = {args}\n")
    status = kairox("mcp", "status", "--json", cwd=workspace).json()["servers"][0]
    doctor = kairox(*NO_SANDBOX, "doctor", "--json", cwd=workspace).json()["mcp_servers"]["basic"]
    context = kairox("context", "--json", cwd=workspace).json()
    in_context = sum(1 for t in context["tools"] if t["origin"] == "basic")
    assert (status["tools"], status["resource_tools"]) == (doctor["tools"], doctor["resource_tools"]) == (in_context, 2)
    text = kairox("mcp", "status", cwd=workspace).stdout
    first, confinement = text.splitlines()
    assert first == f"basic: ready (stdio, {in_context} tools, 2 of them the resource tools Kairox adds)"
    assert confinement.startswith("  confined: workspace_write, network on, writes "), (
        confinement
    )  # the user's own server too
    assert (
        f"  basic: ready, {in_context} tool(s) (2 of them the resource tools Kairox adds)"
        in kairox(*NO_SANDBOX, "doctor", cwd=workspace).stdout
    )


def test_a_rule_naming_an_argument_the_tool_does_not_take_is_a_warning(tmp_path: Path, isolated_home: Path) -> None:
    workspace = _workspace(tmp_path)
    args = json.dumps([str(SERVERS / "hostile_server.py"), "--tools", "1"])
    _user_config(
        isolated_home,
        f"[mcp_servers.h]\ncommand = {json.dumps(sys.executable)}\nargs = {args}\n\n"
        '[policy.rules]\ndeny = ["mcp__h__t0(.sql=*DROP*)", "mcp__h__t0(.x=*DROP*)", "mcp__other__*(.sql=*)"]\n'
        'allow = ["shell.exec(.command=git status*)"]\n',
    )
    report = kairox(*NO_SANDBOX, "doctor", "--json", cwd=workspace).json()

    warnings = [
        (w["kind"], w["name"], w["reason"], w["line"], w["fix"])
        for w in report["warnings"]
        if w["kind"] == "policy_rule"
    ]
    where = isolated_home / "kairox.toml"
    assert warnings == [
        (
            "policy_rule",
            "shell.exec(.command=git status*)",
            f"allow rule 'shell.exec(.command=git status*)' ({where}:7) names arguments of "
            "shell.exec, which is vouched for by its command or paths: it never allows a call",
            7,
            "write a command rule instead, e.g. shell.exec(git status*)",
        ),
        (
            "policy_rule",
            "mcp__h__t0(.sql=*DROP*)",
            f"deny rule 'mcp__h__t0(.sql=*DROP*)' ({where}:6) names "
            "argument 'sql', which mcp__h__t0 does not take (it takes: x)",
            6,
            "fix the argument's name: a rule about an argument the call never has holds for no call",
        ),
    ]
    assert report["ok"] is True


# --- plugins and language servers ----------------------------------------------------------------------------------

PYLSP = Path(sys.executable).parent / "pylsp"


def _plugin(root: Path, manifest: dict[str, object], hooks: dict[str, object] | None = None) -> Path:
    from tests.plugins.conftest import make_plugin, write_json

    make_plugin(root, manifest)
    if hooks is not None:
        write_json(root / "hooks" / "hooks.json", {"hooks": hooks})
    return root


def _noisy_hooks() -> dict[str, object]:
    # two things Kairox warns about: an event it does not have, a hook type it does not run
    return {
        "NoSuchEvent": [{"hooks": [{"type": "command", "command": "true"}]}],
        "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "prompt", "prompt": "check it"}]}],
    }


def test_a_disabled_plugin_and_its_hook_warnings_are_not_mentioned(tmp_path: Path, isolated_home: Path) -> None:
    workspace = _workspace(tmp_path)
    noisy = _plugin(tmp_path / "noisy", {"name": "noisy", "version": "1.0.0"}, _noisy_hooks())
    _user_config(isolated_home, f"[plugins]\npaths = [{json.dumps(str(noisy))}]\n")
    enabled = kairox(*NO_SANDBOX, "doctor", cwd=workspace)
    # enabled, its hooks' problems are said (so the test below shows a silence that means something)
    assert "hook noisy: event 'NoSuchEvent' is not supported by Kairox; its hooks are skipped" in enabled.stdout
    assert kairox("plugins", "disable", "noisy", cwd=workspace).code == 0

    run = kairox(*NO_SANDBOX, "doctor", cwd=workspace)
    assert run.code == 0, run.stdout
    assert "noisy" not in run.stdout and "noisy" not in run.stderr
    report = kairox(*NO_SANDBOX, "doctor", "--json", cwd=workspace).json()
    assert [w for w in report["warnings"] if w["name"] == "noisy"] == []
    # nor once on every other command
    listing = kairox("plugins", "list", cwd=workspace)
    assert listing.stderr == "" and "disabled" in next(
        line for line in listing.stdout.splitlines() if line.startswith("noisy")
    )
    # `plugins validate` still checks the folder itself
    checked = kairox("plugins", "validate", str(noisy), cwd=workspace)
    assert "event 'NoSuchEvent' is not supported by Kairox" in checked.stderr


def test_a_plugins_missing_language_server_is_a_warning_with_an_install_or_disable_fix(
    tmp_path: Path, isolated_home: Path
) -> None:
    workspace = _workspace(tmp_path)
    manifest = {
        "name": "pytools",
        "version": "1.0.0",
        "lspServers": {
            "pyright": {
                "command": "basedpyright-langserver-absent",
                "args": ["--stdio"],
                "extensionToLanguage": {".py": "python"},
            }
        },
    }
    _user_config(isolated_home, f"[plugins]\npaths = [{json.dumps(str(_plugin(tmp_path / 'pytools', manifest)))}]\n")
    run = kairox(*NO_SANDBOX, "doctor", cwd=workspace)
    assert run.code == 0, run.stdout
    lines = run.stdout.splitlines()
    row = lines.index(
        "  [warn] basedpyright-langserver-absent: language server 'pyright' for *.py (from plugin pytools)"
    )
    assert (
        lines[row + 1] == "         fix: install 'basedpyright-langserver-absent' so that it "
        "is on PATH; or disable the plugin: kairox plugins disable pytools"
    )
    assert "lsp_servers.pyright.command" not in run.stdout
    assert run.stdout.rstrip().endswith("Doctor: everything required works.")
    report = kairox(*NO_SANDBOX, "doctor", "--json", cwd=workspace).json()
    check = next(c for c in report["environment"] if c["check"] == "basedpyright-langserver-absent")
    assert (report["ok"], check["ok"], check["required"]) == (True, False, False)


def test_a_known_language_server_gets_its_install_command(tmp_path: Path, isolated_home: Path) -> None:
    workspace = _workspace(tmp_path)
    # a PATH without the test environment: the program is not found, as on a machine without it
    env = {"PATH": "/usr/bin:/bin"}
    manifest = {
        "name": "pytools",
        "lspServers": {"pyright": {"command": "basedpyright-langserver", "extensionToLanguage": {".py": "python"}}},
    }
    _user_config(isolated_home, f"[plugins]\npaths = [{json.dumps(str(_plugin(tmp_path / 'pytools', manifest)))}]\n")
    report = kairox(*NO_SANDBOX, "doctor", "--json", cwd=workspace, env=env).json()
    check = next(c for c in report["environment"] if c["check"] == "basedpyright-langserver")
    assert check["fix"] == "install it: pip install basedpyright; or disable the plugin: kairox plugins disable pytools"
    # a language server of the user's own configuration stays required, and its fix names the entry
    _user_config(isolated_home, '[lsp_servers.py]\ncommand = "basedpyright-langserver"\nfile_patterns = ["*.py"]\n')
    run = kairox(*NO_SANDBOX, "doctor", "--json", cwd=workspace, env=env)
    assert run.code == 1
    check = next(c for c in run.json()["environment"] if c["check"] == "basedpyright-langserver")
    assert (check["required"], check["fix"]) == (
        True,
        "install it: pip install basedpyright; or fix lsp_servers.py.command",
    )


def test_two_language_servers_claiming_the_same_files_are_a_warning(tmp_path: Path, isolated_home: Path) -> None:
    workspace = _workspace(tmp_path)
    manifest = {
        "name": "pytools",
        "lspServers": {"pyright": {"command": str(PYLSP), "extensionToLanguage": {".py": "python"}}},
    }
    plugin = _plugin(tmp_path / "pytools", manifest)
    user = f'[lsp_servers.pyls]\ncommand = {json.dumps(str(PYLSP))}\nfile_patterns = ["*.py"]\n'
    user += f'[lsp_servers.docs]\ncommand = {json.dumps(str(PYLSP))}\nfile_patterns = ["*.md"]\n'
    _user_config(isolated_home, user + f"[plugins]\npaths = [{json.dumps(str(plugin))}]\n")
    run = kairox(*NO_SANDBOX, "doctor", cwd=workspace)
    assert run.code == 0, run.stdout
    lines = run.stdout.splitlines()
    row = lines.index(
        "  lsp_server pyls, pyright: language servers 'pyls' and 'pyright' both "
        "claim *.py: 'pyls' answers for those files, 'pyright' is never asked"
    )
    assert (
        lines[row + 1] == "    fix: narrow the file_patterns of one, or turn one off (enabled "
        "= false in [lsp_servers.pyls] / kairox plugins disable pytools)"
    )
    report = kairox(*NO_SANDBOX, "doctor", "--json", cwd=workspace).json()
    overlaps = [w["name"] for w in report["warnings"] if w["kind"] == "lsp_server"]
    assert overlaps == ["pyls, pyright"]  # docs (*.md) claims nothing the others do
    # with one of them off, nothing is said
    kairox("plugins", "disable", "pytools", cwd=workspace)
    report = kairox(*NO_SANDBOX, "doctor", "--json", cwd=workspace).json()
    assert [w for w in report["warnings"] if w["kind"] == "lsp_server"] == []


def test_an_untrusted_workspace_says_once_per_server_what_is_held_back_language_servers_and_debuggers_too(
    tmp_path: Path, isolated_home: Path
) -> None:
    workspace = _workspace(tmp_path)
    (workspace / "kairox.toml").write_text(
        '[mcp_servers.notes]\ncommand = "notes-server"\n\n'
        '[lsp_servers.py]\ncommand = "pylsp"\nfile_patterns = ["*.py"]\n'
        '\n[dap_servers.debugpy]\ncommand = "python3"\nargs = ["-m", "debugpy.adapter"]\nlanguages = ["python"]\n'
    )
    text = kairox(*NO_SANDBOX, "doctor", cwd=workspace).stdout
    assert text.count("servers from an untrusted workspace do not start") == 3, text
    assert "  lsp py: servers from an untrusted workspace" in text and "  dap debugpy: " in text
    assert "install 'notes-server'" not in text, "a held-back server needs trust, not an install"
