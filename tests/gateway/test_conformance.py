"""The official MCP conformance suite (server mode, both requirement sets and the skills extension) against the
conformance fixture directly, through ``kairox proxy``, and against ``kairox serve --http``.

A scenario passes when it has at least one successful check of its own and no failed one nor a warning (the suite
counts a warning as failed). The proxy must pass every scenario the fixture passes directly; ``kairox serve`` keeps
its own baseline, each line with its reason.
"""

import json
import re
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from tests.gateway.conftest import EVERYTHING, NODE, SERVERS, kairox_env, start_gateway, trust, write_workspace

SUITE = SERVERS / "node_modules" / "@modelcontextprotocol" / "conformance" / "dist" / "index.js"
FIXTURE = SERVERS / "conformance_fixture_server.py"
BASELINE = SERVERS / "gateway-conformance-expected-failures.yml"
REVISIONS = ("2025-11-25", "2026-07-28")
EXTENSION_SCENARIOS = ("sep-2640-skills-directory", "sep-2640-skills-enumeration", "sep-2640-skills-manifest")
_RESULT_DIR = re.compile(r"^server-(?P<scenario>.+?)-\d{4}-\d{2}-\d{2}T")

pytestmark = pytest.mark.timeout(900)


def run_suite(url: str, out: Path) -> dict[str, bool]:
    """``revision/scenario`` -> passed, for both requirement sets and the extension scenarios run at 2026-07-28."""
    if not SUITE.exists() or not NODE.exists():
        pytest.fail("tests/servers/node_modules is not installed: run `npm ci` in tests/servers (make install)")
    runs = [(revision, ["--requirements", revision]) for revision in REVISIONS]
    runs += [("extension", ["--scenario", scenario]) for scenario in EXTENSION_SCENARIOS]
    outcome: dict[str, bool] = {}
    for label, selection in runs:
        folder = out / label
        subprocess.run(
            [str(NODE), str(SUITE), "server", "--url", url, *selection, "-o", str(folder)],
            capture_output=True,
            text=True,
            timeout=400,
            cwd=SERVERS,
        )
        for result in sorted(folder.glob("server-*")):
            match = _RESULT_DIR.match(result.name)
            if match is None or not (result / "checks.json").exists():
                continue
            checks = json.loads((result / "checks.json").read_text())
            statuses = {check["status"] for check in checks}
            # the wire-schema checks ride along every scenario: a scenario whose own checks were all skipped
            # (an extension not declared) has not passed
            own = {check["status"] for check in checks if not check["id"].startswith("wire-schema-")}
            passed = "SUCCESS" in own and not statuses & {"FAILURE", "WARNING"}
            outcome[f"{label}/{match['scenario']}"] = passed
    return outcome


def _serving(
    command: list[str], marker: str, env: dict[str, str] | None = None, cwd: Path | None = None
) -> tuple[subprocess.Popen[str], str]:
    """Start ``command`` and wait for the line of stderr that says where it serves."""
    proc = subprocess.Popen(
        command,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        cwd=cwd,
    )
    lines: list[str] = []
    found: list[str] = []
    ready = threading.Event()

    def drain() -> None:
        assert proc.stderr is not None
        for line in proc.stderr:
            lines.append(line)
            if marker in line and not found:
                found.append(re.findall(r"http://\S+/mcp", line)[0])
                ready.set()
        ready.set()

    threading.Thread(target=drain, daemon=True).start()
    deadline = time.monotonic() + 120
    while not ready.wait(0.2):
        if time.monotonic() > deadline:
            break
    if not found:
        proc.kill()
        proc.wait(10)
        raise AssertionError(f"{command[:3]} did not start:\n{''.join(lines)}")
    return proc, found[0]


def _stop(proc: subprocess.Popen[str]) -> None:
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(10)


@pytest.fixture(scope="module")
def direct(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, bool]]:
    """The fixture's own results: it serves Streamable HTTP itself."""
    proc, url = _serving([sys.executable, str(FIXTURE), "--http", "0"], "serving on")
    try:
        yield run_suite(url, tmp_path_factory.mktemp("direct"))
    finally:
        _stop(proc)


@pytest.fixture(scope="module")
def proxied(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, bool]]:
    """The same fixture as a stdio upstream of ``kairox proxy --http``, its tools allowed by a user rule."""
    home = tmp_path_factory.mktemp("proxy-home")
    workspace = tmp_path_factory.mktemp("proxy-ws")
    (home / "kairox.toml").write_text('[policy.rules]\nallow = ["mcp__fixture__*"]\n')
    command = [sys.executable, "-m", "kairox", "proxy", "--name", "fixture", "--http", "127.0.0.1:0", "--"]
    proc, url = _serving([*command, sys.executable, str(FIXTURE)], "serving MCP on", kairox_env(home), workspace)
    try:
        yield run_suite(url, tmp_path_factory.mktemp("proxied"))
    finally:
        _stop(proc)
    audit = [json.loads(line) for line in (home / "logs" / "proxy.jsonl").read_text().splitlines()]
    assert audit and all(record["tool"].startswith("mcp__fixture__") for record in audit)


def test_the_fixture_passes_at_least_45_server_scenarios(direct: dict[str, bool]) -> None:
    passed = sorted(name for name, ok in direct.items() if ok)
    assert len(passed) >= 45, passed


def test_the_proxy_passes_every_scenario_the_fixture_passes_directly(
    direct: dict[str, bool], proxied: dict[str, bool]
) -> None:
    lost = sorted(name for name, ok in direct.items() if ok and not proxied.get(name, False))
    assert lost == [], f"passed directly, not through kairox proxy: {lost}"
    assert sum(proxied.values()) >= 45


def test_kairox_serve_passes_every_scenario_but_its_baseline(tmp_path: Path) -> None:
    if not EVERYTHING.exists():
        pytest.fail("tests/servers/node_modules is not installed: run `npm ci` in tests/servers (make install)")
    home = tmp_path / "home"
    workspace = write_workspace(tmp_path / "ws", lsp=False)
    trust(workspace, home)
    served = start_gateway(workspace, home)
    try:
        outcome = run_suite(served.url, tmp_path / "results")
    finally:
        assert served.stop() == 0, "".join(served.stderr)
    baseline = yaml.safe_load(BASELINE.read_text())["server"]
    failing = sorted(name for name, ok in outcome.items() if not ok and name not in baseline)
    assert failing == [], "kairox serve fails these: fix them, or add each to the baseline with its reason"
    for scenario in ("server-initialize", "tools-list", "prompts-list", "resources-list", "dns-rebinding-protection"):
        assert outcome[f"2025-11-25/{scenario}"]
    # the workspace's skill through the skills extension: its folder, its listing, its SKILL.md
    assert [outcome[f"extension/{scenario}"] for scenario in EXTENSION_SCENARIOS] == [True, True, True]
