"""Errors of Kairox end a command with a message and a documented exit code, never a traceback."""

from pathlib import Path

from tests.helpers import kairox

from kairox.cli._common import ExitCode


def test_a_broken_trust_store_is_reported_not_a_traceback(tmp_path: Path, isolated_home: Path) -> None:
    (isolated_home / "trusted_workspaces.json").write_text("{broken", encoding="utf-8")
    for args in (["config", "show"], ["tools", "list"], ["trust"]):
        run = kairox(*args, cwd=tmp_path)
        assert "Traceback" not in run.stderr, run.stderr
        assert "cannot read the trust store" in run.stderr
        assert "fix or delete the file" in run.stderr
        assert run.code in (ExitCode.CONFIG, ExitCode.FAILURE), (args, run.code)
    assert kairox("config", "show", cwd=tmp_path).code == ExitCode.CONFIG
