"""``make demo`` passes wherever the clone is: here from a copy under the temp folder, a writable root of every
sandbox, where the demo's refused writes outside the workspace must still be refused. Its recorded model server
ends with the demo, a failed run included."""

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

ROOT = Path(__file__).resolve().parents[1]
VENV = Path(sys.prefix)

pytestmark = pytest.mark.timeout(600)


def clone_under_temp(tmp_path: Path) -> Path:
    """The files the demo runs from, under the temp folder, with the suite's own environment as its ``.venv``
    (make is told the install steps are done, so nothing is installed or rebuilt)."""
    clone = tmp_path / "clone"
    clone.mkdir()
    for name in ("Makefile", "examples", "scripts", "tests/servers/model_server.py"):
        source = ROOT / name
        target = clone / name
        target.parent.mkdir(parents=True, exist_ok=True)
        if source.is_dir():
            shutil.copytree(source, target, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy2(source, target)
    (clone / ".venv").symlink_to(VENV)
    return clone


def test_make_demo_passes_from_a_clone_under_the_temp_folder(tmp_path: Path) -> None:
    clone = clone_under_temp(tmp_path)
    assert str(clone).startswith(os.path.realpath(os.environ.get("TMPDIR", "/tmp"))) or str(clone).startswith("/tmp")
    run = subprocess.run(
        ["make", "-o", "demo-install", "-o", "demo-preflight", "demo"],
        cwd=clone,
        env={**os.environ, "KAIROX_HOME": str(tmp_path / "unused-home")},
        capture_output=True,
        text=True,
        timeout=540,
    )
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    assert "(build/demo-outside.txt was not written)" in run.stdout
    assert not (clone / "build" / "demo-outside.txt").exists()
    assert (clone / "build" / "demo-report.md").is_file() and not (clone / "build" / "demo-report-copy.md").exists()
    assert not (tmp_path / "unused-home").exists()  # the demo keeps its own home in build/


def test_the_recorded_model_server_exits_when_its_run_fails(tmp_path: Path) -> None:
    script = tmp_path / "script.json"
    script.write_text(json.dumps([{"reply": "text", "text": "one"}, {"reply": "text", "text": "two"}]))
    port_file = tmp_path / "port"
    server = subprocess.Popen(
        [
            *(sys.executable, str(ROOT / "tests" / "servers" / "model_server.py"), "--wire", "openai"),
            *("--script", str(script), "--port-file", str(port_file), "--idle-timeout", "300"),
        ],
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 30
        while not (port_file.exists() and port_file.read_text()) and time.monotonic() < deadline:
            time.sleep(0.05)
        port = int(port_file.read_text())
        wrong = httpx.post(f"http://127.0.0.1:{port}/v1/nothing-here", json={}, timeout=10)
        assert wrong.status_code == 400
        # a failed script ends the program at once, not after the idle timeout
        assert server.wait(timeout=30) == 1
        assert server.stderr is not None and "unexpected request POST /v1/nothing-here" in server.stderr.read()
    finally:
        if server.poll() is None:
            server.kill()
            server.wait()
