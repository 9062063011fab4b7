"""A confined language server is as reliable as an unconfined one on a busy machine.

typescript-language-server (and pyright) check every 3 s that the client whose ``processId`` they were given is
alive, and exit with code 1 when it is not. A confined server lives in a PID namespace of its own, where Kairox's
pid names no process: each check failed, and the server exited whenever a request took longer than the first
check (on a busy machine, most of them). Through a real host process, as root and as an unprivileged user, with
busy loops on every core, several requests spread past the server's checks all answer, from one server."""

import json
import os
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest
from tests.helpers import as_user, give_to
from tests.lsp._fixtures import NODE_MODULES
from tests.security._sockets import PYTHON, place_for

pytestmark = pytest.mark.timeout(240)

SOURCE = Path(__file__).resolve().parents[2] / "src"
SITE = Path(anyio.__file__).resolve().parents[1]
"""This environment's packages, for a Python both users can run."""
WATCH_SEC = 3.0
"""How often the server checks that its client is alive (typescript-language-server's own interval)."""

HOST = textwrap.dedent(
    """
    import json, sys, time
    from pathlib import Path
    import anyio
    import kairox

    async def main(workspace: Path, rounds: int, pause: float) -> None:
        answers = []
        async with kairox.build_extension_context(workspace) as context:
            for _ in range(rounds):
                result = await context.registry.call(
                    kairox.ToolCall(
                        name="lsp.rename", arguments={"path": "src/greet.ts", "symbol": "greet", "new_name": "hello"}
                    )
                )
                answers.append([result.is_error, result.text_content()[:300]])
                await anyio.sleep(pause)  # past the server's next check that its client is alive
        print(json.dumps(answers))

    anyio.run(main, Path(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3]))
    """
)


@pytest.fixture
def place(user: str) -> Iterator[Path]:
    with place_for(user, "kairox-lsp-load-") as base:
        yield base


@pytest.fixture
def busy() -> Iterator[None]:
    """Two busy loops per core for the length of the test."""
    loops = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(2 * (os.cpu_count() or 1))]
    try:
        yield
    finally:
        for loop in loops:
            loop.kill()
            loop.wait()


def typescript_workspace(ws: Path) -> None:
    (ws / "src").mkdir()
    (ws / "src" / "greet.ts").write_text('export function greet(name: string): string {\n  return "Hi " + name;\n}\n')
    (ws / "src" / "main.ts").write_text('import { greet } from "./greet";\nconsole.log(greet("world"));\n')
    (ws / "tsconfig.json").write_text('{"compilerOptions": {"strict": true}, "include": ["src"]}\n')
    (ws / "kairox.toml").write_text(
        textwrap.dedent(f"""
            [lsp_servers.ts]
            command = "{NODE_MODULES / ".bin" / "node"}"
            args = ["{NODE_MODULES / "typescript-language-server" / "lib" / "cli.mjs"}", "--stdio"]
            file_patterns = ["*.ts"]
            languages = ["typescript"]
        """)
    )


def run(place: Path, user: str, *args: str) -> "subprocess.CompletedProcess[str]":
    environment = {
        **os.environ,
        "KAIROX_HOME": str(place / "home"),
        "HOME": str(place),
        "KAIROX_SYSTEM_CONFIG": str(place / "no-system.toml"),
        "PYTHONPATH": f"{SOURCE}:{SITE}",
    }
    return subprocess.run(
        [*as_user(user), PYTHON, *args],
        cwd=place / "ws",
        env=environment,
        capture_output=True,
        text=True,
        timeout=200,
        check=False,
    )


def test_a_confined_typescript_server_answers_every_request_on_a_busy_machine(
    place: Path, user: str, busy: None
) -> None:
    ws = place / "ws"
    typescript_workspace(ws)
    give_to(user, place)
    trusted = run(place, user, "-m", "kairox", "trust")
    assert trusted.returncode == 0, trusted.stderr
    host = run(place, user, "-c", HOST, str(ws), "3", str(WATCH_SEC + 0.5))
    assert host.returncode == 0, host.stderr[-3000:]
    answers = json.loads(host.stdout.splitlines()[-1])
    assert [error for error, _ in answers] == [False, False, False], answers
    assert all("renaming to 'hello' changes 3 line(s) in 2 file(s)" in text for _, text in answers), answers
    # one server did it all: no restart after a death (a restart is recorded in the server's log)
    log = (place / "home" / "logs" / "lsp-ts.log").read_text(errors="replace")
    assert "exited" not in log, log[-2000:]


@pytest.mark.parametrize("stderr", ["busy: cannot load the project index\n", ""], ids=["said why", "silent"])
def test_a_confined_server_that_dies_says_how_in_the_error_the_log_and_lsp_status(
    place: Path, user: str, stderr: str
) -> None:
    ws = place / "ws"
    (ws / "app.py").write_text("x = 1\n")
    busy = Path(__file__).resolve().parent / "servers" / "busy_server.py"
    (ws / "kairox.toml").write_text(
        textwrap.dedent(f"""
            [lsp_servers.busy]
            command = "{PYTHON}"
            args = ["{busy}", "--die-on-definition", {json.dumps(stderr)}]
            file_patterns = ["*.py"]
        """)
    )
    give_to(user, place)
    assert run(place, user, "-m", "kairox", "trust").returncode == 0
    where = json.dumps({"path": "app.py", "line": 1, "column": 1})
    call = run(place, user, "-m", "kairox", "tools", "call", "lsp.definition", where)
    log = place / "home" / "logs" / "lsp-busy.log"
    said = "stderr ends with: busy: cannot load the project index" if stderr else "it wrote nothing on stderr"
    assert call.returncode == 5
    assert f"the server closed its output and exited with code 1; {said} (log: {log})" in call.stderr, call.stderr
    # the log keeps what it wrote and how it ended, for a later look from another process
    assert log.read_text().endswith(f"kairox: the server closed its output and exited with code 1; {said}\n")
    status = run(place, user, "-m", "kairox", "lsp", "status")
    assert f"  log: {log}, ending with:" in status.stdout, status.stdout
    assert said in status.stdout
