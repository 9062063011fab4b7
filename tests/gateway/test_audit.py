"""The audit log's rotation, the listen address, and what ``kairox serve`` refuses to do."""

import json
from pathlib import Path

import pytest
from tests.helpers import kairox

from kairox.gateway import GatewayConfigError, HttpOptions, parse_listen
from kairox.gateway._audit import AuditLog, AuditRecord


def record(tool: str) -> AuditRecord:
    return AuditRecord(
        client="c",
        tool=tool,
        arguments={"token": "[redacted]"},
        decision="allow",
        rule=None,
        duration_ms=1.0,
        outcome="ok",
        ts=1.0,
    )


def test_the_audit_log_rotates_past_its_size_and_keeps_a_few_old_files(tmp_path: Path) -> None:
    log = AuditLog(tmp_path / "logs" / "gateway.jsonl", max_bytes=400, backups=2)
    for index in range(12):
        log.write(record(f"tool-{index:02}"))
    files = sorted(p.name for p in (tmp_path / "logs").iterdir())
    assert files == ["gateway.jsonl", "gateway.jsonl.1", "gateway.jsonl.2"]
    assert all(p.stat().st_size <= 400 for p in (tmp_path / "logs").iterdir())
    newest = [json.loads(line)["tool"] for line in (tmp_path / "logs" / "gateway.jsonl").read_text().splitlines()]
    assert newest[-1] == "tool-11" and log.problems == []


def test_an_unwritable_audit_log_is_reported_once_and_never_raises(tmp_path: Path) -> None:
    (tmp_path / "logs").write_text("a file where the folder should be")
    log = AuditLog(tmp_path / "logs" / "gateway.jsonl")
    log.write(record("a"))
    log.write(record("b"))
    assert len(log.problems) == 1 and log.problems[0].startswith(
        f"cannot write the audit log {tmp_path / 'logs' / 'gateway.jsonl'}"
    )


def test_listen_addresses_default_to_loopback() -> None:
    assert [parse_listen(text) for text in ("8765", "0.0.0.0:80", "[::1]:9000", ":7")] == [
        ("127.0.0.1", 8765),
        ("0.0.0.0", 80),
        ("::1", 9000),
        ("127.0.0.1", 7),
    ]
    assert [HttpOptions(host=h).loopback for h in ("127.0.0.1", "::1", "localhost", "0.0.0.0", "10.1.2.3")] == [
        True,
        True,
        True,
        False,
        False,
    ]
    with pytest.raises(GatewayConfigError, match="expected \\[HOST:\\]PORT"):
        parse_listen("host:http")


def test_serving_beyond_loopback_without_a_token_is_refused(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    run = kairox("serve", "--http", "0.0.0.0:0", cwd=tmp_path, timeout=60)
    assert run.code == 2
    assert "serving on 0.0.0.0 (not loopback) needs a token" in run.stderr and "--token-file" in run.stderr
