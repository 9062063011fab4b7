"""The official MCP conformance suite (server mode) against ``kairox serve --http``."""

import subprocess
from pathlib import Path

import pytest
from tests.gateway.conftest import EVERYTHING, NODE, SERVERS, start_gateway, trust, write_workspace

SUITE = SERVERS / "node_modules" / "@modelcontextprotocol" / "conformance" / "dist" / "index.js"
BASELINE = SERVERS / "gateway-conformance-expected-failures.yml"

pytestmark = [
    pytest.mark.timeout(600),
    pytest.mark.skipif(
        not SUITE.exists() or not EVERYTHING.exists(), reason="tests/servers/node_modules is not installed (npm ci)"
    ),
]


def test_server_suite_passes_except_where_the_baseline_says(tmp_path: Path) -> None:
    home = tmp_path / "home"
    workspace = write_workspace(tmp_path / "ws", lsp=False)
    trust(workspace, home)
    served = start_gateway(workspace, home)
    try:
        run = subprocess.run(
            [
                str(NODE),
                str(SUITE),
                "server",
                "--url",
                served.url,
                "--expected-failures",
                str(BASELINE),
                "-o",
                str(tmp_path / "results"),
            ],
            capture_output=True,
            text=True,
            timeout=500,
            cwd=SERVERS,
        )
    finally:
        assert served.stop() == 0, "".join(served.stderr)
    output = run.stdout + run.stderr
    assert run.returncode == 0, output[-4000:]
    assert "Baseline check passed" in output
    passing = (
        "server-initialize",
        "tools-list",
        "prompts-list",
        "resources-list",
        "dns-rebinding-protection",
        "logging-set-level",
        "completion-complete",
        "resources-subscribe",
        "resources-unsubscribe",
    )
    for scenario in passing:
        assert f"✓ {scenario}:" in output
