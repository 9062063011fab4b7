"""The catalog-install operation reports typed steps (``InstallStep``) in their order, whoever runs it: the
command line renders them on stderr, the GUI sends them as ``install.progress`` events."""

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from kairox.catalog import catalog_sources, load_catalog, plan_install
from kairox.config import resolve_config
from kairox.policy import ApprovalAnswer, ApprovalRequest
from kairox.runtime import InstallOptions, InstallOutcome, InstallStage, InstallStep, install_catalog_entry

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(240)]


class Yes:
    async def request_approval(self, request: ApprovalRequest) -> ApprovalAnswer:
        return ApprovalAnswer(approved=True)


class No:
    async def request_approval(self, request: ApprovalRequest) -> ApprovalAnswer:
        return ApprovalAnswer(approved=False)


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    (root / ".git").mkdir(parents=True)
    return root


def _remote_plan(workspace: Path, isolated_home: Path, registry: Any) -> Any:
    (isolated_home / "kairox.toml").write_text(
        f'[[mcp_catalog.sources]]\nname = "test"\nurl = "{registry.url}"\nkind = "registry"\n'
    )
    resolved = resolve_config(workspace)
    sources, held = catalog_sources(resolved)
    [entry] = load_catalog(sources, held=held).find("io.example/weather")
    return resolved, plan_install(entry, package="remote")


async def test_an_install_reports_each_stage_in_order_with_its_outcome(
    workspace: Path, isolated_home: Path, registry: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("EXAMPLE_TOKEN", "tok-steps-0123")
    resolved, plan = _remote_plan(workspace, isolated_home, registry)
    steps: list[InstallStep] = []
    result = await install_catalog_entry(
        resolved, plan, approver=Yes(), options=InstallOptions(), progress=steps.append
    )
    assert result.outcome is InstallOutcome.WRITTEN_DISABLED  # nothing speaks MCP at the entry's URL
    stages = [step.stage for step in steps]
    # pre-flight first (its checks carry the check), then the gate, the dry run started and failed, the write
    assert stages[0] is InstallStage.PREFLIGHT and steps[0].check is None
    checks = [step for step in steps if step.check is not None]
    assert checks and all(
        step.stage is InstallStage.PREFLIGHT and step.ok == step.check.ok for step in checks if step.check
    )
    assert stages[len(checks) + 1 :] == [
        InstallStage.APPROVAL,
        InstallStage.DRY_RUN,
        InstallStage.DRY_RUN,
        InstallStage.WRITE,
    ]
    started, ran = steps[-3], steps[-2]
    assert started.ok is None and ran.ok is False and ran.message.startswith("dry run: failed")
    assert steps[-1].ok is True and str(result.file) in steps[-1].message and "(disabled)" in steps[-1].message
    assert all(step.to_json()["step"] == str(step.stage) for step in steps)
    assert "tok-steps-0123" not in repr([step.to_json() for step in steps])


async def test_a_denied_install_stops_after_the_gates_step(workspace: Path, isolated_home: Path, registry: Any) -> None:
    resolved, plan = _remote_plan(workspace, isolated_home, registry)
    steps: list[InstallStep] = []
    result = await install_catalog_entry(resolved, plan, approver=No(), options=InstallOptions(), progress=steps.append)
    assert result.outcome is InstallOutcome.DENIED
    assert steps[-1].stage is InstallStage.APPROVAL
    assert {step.stage for step in steps} == {InstallStage.PREFLIGHT, InstallStage.APPROVAL}


def test_the_command_line_renders_the_steps(workspace: Path, isolated_home: Path, registry: Any) -> None:
    (isolated_home / "kairox.toml").write_text(
        f'[[mcp_catalog.sources]]\nname = "test"\nurl = "{registry.url}"\nkind = "registry"\n'
    )
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "kairox",
            "--workspace",
            str(workspace),
            "mcp",
            "catalog",
            "install",
            "io.example/weather",
            "--package",
            "remote",
            "--yes",
        ],
        capture_output=True,
        text=True,
        timeout=200,
        stdin=subprocess.DEVNULL,
        env={**os.environ, "EXAMPLE_TOKEN": "tok"},
    )
    assert run.returncode == 1, run.stderr
    lines = run.stderr.splitlines()
    gate = next(
        i for i, line in enumerate(lines) if line.startswith("the gate decides the write of [mcp_servers.weather]")
    )
    failed = next(i for i, line in enumerate(lines) if line.startswith("dry run: failed"))
    wrote = next(
        i
        for i, line in enumerate(lines)
        if line.startswith("wrote [mcp_servers.weather] to ") and line.endswith("(disabled)")
    )
    assert any(line.startswith("checking what io.example/weather") for line in lines[:gate])
    assert any(line.strip().startswith("[ok] variable EXAMPLE_TOKEN") for line in lines[:gate])
    assert gate < failed < wrote
