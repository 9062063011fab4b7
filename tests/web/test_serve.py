"""``kairox gui --no-browser`` for real: uvicorn on 127.0.0.1 with a free port, the URL with the token printed, the
cookie, the event stream over HTTP, the guard on the wire, and Ctrl+C stopping it with its servers."""

import json
import os
import re
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from tests.agent._support import SERVERS

pytestmark = pytest.mark.timeout(180)
URL = re.compile(r"^Kairox GUI: (http://127\.0\.0\.1:(\d+))/\?token=([A-Za-z0-9_-]{40,})$")


@pytest.fixture
def gui_process(workspace: Path, isolated_home: Path) -> Iterator[tuple[subprocess.Popen[str], str, str]]:
    (isolated_home / "kairox.toml").write_text(
        f'[mcp_servers.basic]\ncommand = "{sys.executable}"\nargs = ["{SERVERS / "basic_server.py"}"]\n',
        encoding="utf-8",
    )
    process = subprocess.Popen(
        [sys.executable, "-m", "kairox", "--workspace", str(workspace), "gui", "--no-browser"],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=dict(os.environ),
    )
    try:
        assert process.stdout is not None
        line = process.stdout.readline().strip()  # the first line, printed once the server listens
        match = URL.match(line)
        assert match, (line, process.stderr.read() if process.poll() is not None and process.stderr else "")
        yield process, match.group(1), match.group(3)
    finally:
        if process.poll() is None:
            process.send_signal(signal.SIGINT)
            try:
                process.wait(30)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(10)


def test_kairox_gui_prints_its_url_serves_the_event_stream_and_stops_on_ctrl_c(
    gui_process: tuple[subprocess.Popen[str], str, str],
) -> None:
    process, base, token = gui_process
    with httpx.Client(base_url=base, timeout=60) as browser:
        page = browser.get(f"/?token={token}", follow_redirects=True)
        assert [r.status_code for r in page.history] == [303] and str(
            page.url
        ) == f"{base}/"  # the token left the address
        assert page.status_code in (200, 503)  # 503 until the page is built (`make`), with how to build it
        if page.status_code == 503:
            assert "make" in page.json()["error"]
        assert "kairox_token" in browser.cookies
        assert browser.get("/api/state").status_code == 200  # the cookie from now on
        with httpx.Client(base_url=base, timeout=10) as stranger:
            assert stranger.get("/api/state").status_code == 401
            port = base.rsplit(":", 1)[1]
            assert (
                stranger.get(
                    "/api/state", headers={"Host": f"attacker.example:{port}", "Authorization": f"Bearer {token}"}
                ).status_code
                == 403
            )
        events: list[tuple[str, dict[str, object]]] = []
        with browser.stream("GET", "/api/events") as stream:
            assert stream.status_code == 200 and stream.headers["content-type"].startswith("text/event-stream")
            assert "access-control-allow-origin" not in stream.headers
            restarted = False
            kind = None
            for line in stream.iter_lines():
                if not restarted and line == "":  # the stream is open: ask for something that makes events
                    answer = httpx.post(
                        f"{base}/api/servers/mcp/basic/restart",
                        headers={"Authorization": f"Bearer {token}"},
                        timeout=60,
                    )
                    assert answer.status_code == 200
                    restarted = True
                if line.startswith("event: "):
                    kind = line[7:]
                elif line.startswith("data: ") and kind is not None:
                    events.append((kind, json.loads(line[6:])))
                    seen = [data.get("status") for k, data in events if k == "server.status"]
                    if "stopped" in seen and seen[-1] == "ready":  # restarted
                        break
    statuses = [data for kind, data in events if kind == "server.status"]
    assert statuses[-3:-1] == [
        {"kind": "mcp", "name": "basic", "status": "stopped", "label": "stopped", "reason": None},
        {"kind": "mcp", "name": "basic", "status": "starting", "label": "starting", "reason": None},
    ]
    assert statuses[-1] == {"kind": "mcp", "name": "basic", "status": "ready", "label": "ready", "reason": None}
    process.send_signal(signal.SIGINT)
    assert process.wait(60) == 0


def test_gui_help_loads_neither_the_web_stack_nor_the_sdks(tmp_path: Path) -> None:
    from tests.cli.test_startup_imports import loaded_modules

    modules = loaded_modules(["gui", "--help"], tmp_path)
    assert "kairox" in modules
    assert not modules & {"starlette", "uvicorn", "mcp", "textual", "openai", "anthropic"}


def read_events(stream: httpx.Response, until: str) -> list[tuple[str, str | None, dict[str, object]]]:
    """``(type, id, data)`` of each event up to and including the first of type ``until``."""
    found: list[tuple[str, str | None, dict[str, object]]] = []
    kind, seq = None, None
    for line in stream.iter_lines():
        if line.startswith("event: "):
            kind = line[7:]
        elif line.startswith("id: "):
            seq = line[4:]
        elif line.startswith("data: ") and kind is not None:
            found.append((kind, seq, json.loads(line[6:])))
            if kind == until:
                return found
            kind, seq = None, None
    return found


def test_a_page_that_connects_again_gets_the_waiting_approval_and_what_it_missed(
    gui_process: tuple[subprocess.Popen[str], str, str], workspace: Path
) -> None:
    import threading

    _, base, token = gui_process
    auth = {"Authorization": f"Bearer {token}"}
    answers: list[httpx.Response] = []
    with httpx.Client(base_url=base, headers=auth, timeout=60) as client:
        assert client.get("/api/skills").status_code == 200  # the session is up
        asking = threading.Thread(
            target=lambda: answers.append(client.post("/api/servers/mcp/basic/disable", json={"layer": "project"})),
            daemon=True,
        )
        asking.start()  # a project file of an untrusted workspace: the POST waits for the dialog
        with client.stream("GET", "/api/events", headers={"Last-Event-ID": "0"}) as stream:
            replayed = read_events(stream, until="approval.request")
        kinds = [kind for kind, _, _ in replayed]
        assert kinds[0] == "server.status" and replayed[0][1] is not None  # missed events come with their ids
        request = replayed[-1][2]
        assert request["tool"] == "config.write" and request["arguments"]["path"] == str(workspace / "kairox.toml")  # type: ignore[index]
        assert answers == []
        assert client.post(f"/api/approvals/{request['id']}", json={"answer": "deny"}).json() == {"ok": True}
        asking.join(30)
    assert answers[0].status_code == 403 and answers[0].json()["denied"] is True
    assert not (workspace / "kairox.toml").exists()
