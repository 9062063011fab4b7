"""The gateway's store on SQLite (the default), and ``kairox audit`` reading it or the JSON-lines log."""

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest
from tests.gateway.conftest import kairox_env

from kairox.gateway import Store
from kairox.gateway._store import StoreError

MIGRATE = "import sys; from kairox.gateway import Store; s = Store(sys.argv[1]); print(s.migrate()); s.close()"


def test_two_processes_migrating_one_new_store_at_once_apply_each_migration_once(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'state' / 'gateway.sqlite3'}"
    procs = [
        subprocess.Popen([sys.executable, "-c", MIGRATE, url], stdout=subprocess.PIPE, text=True) for _ in range(2)
    ]
    assert [p.communicate(timeout=60)[0].strip() for p in procs] == ["2", "2"]
    store = Store(url)
    assert store._run("SELECT version FROM kx_schema ORDER BY version", fetch=True) == [(1,), (2,)]
    assert store.migrate() == 2  # again: nothing to do
    store.close()


def test_a_store_of_a_newer_kairox_is_refused_saying_what_to_do(tmp_path: Path) -> None:
    store = Store(f"sqlite:///{tmp_path / 'g.sqlite3'}")
    store.migrate()
    store._run("INSERT INTO kx_schema (version, applied) VALUES (7, 0)")
    with pytest.raises(StoreError, match="has schema version 7; this Kairox knows up to 2") as caught:
        store.migrate()
    assert caught.value.hint == "upgrade Kairox on this replica to the version the others run"
    store.close()


def test_an_unknown_store_kind_and_an_unreachable_database_are_clear_errors(tmp_path: Path) -> None:
    with pytest.raises(StoreError, match="unknown kind 'mysql'"):
        Store("mysql://db/kairox")
    with pytest.raises(StoreError, match=r"cannot open the store postgresql://kairox:\*\*\*@127.0.0.1:1/x"):
        Store("postgresql://kairox:hunter2@127.0.0.1:1/x?connect_timeout=1", open_timeout=1)


def test_a_call_id_is_claimed_once_and_a_retry_sees_the_first_result(tmp_path: Path) -> None:
    store = Store(f"sqlite:///{tmp_path / 'g.sqlite3'}")
    store.migrate()
    assert store.claim_call("alice", "c1", "r1") is None
    running = store.claim_call("alice", "c1", "r2")
    assert running is not None and (running.replica, running.result) == ("r1", None)
    assert store.claim_call("bob", "c1", "r2") is None  # ids are per user
    store.finish_call("alice", "c1", '{"content": []}')
    done = store.claim_call("alice", "c1", "r2")
    assert done is not None and done.result == '{"content": []}'
    store.release_call("bob", "c1")
    assert store.claim_call("bob", "c1", "r3") is None  # released before it ran: the retry runs it
    store.close()


def test_an_approval_is_answered_once_and_only_in_its_own_session_by_its_own_user(tmp_path: Path) -> None:
    store = Store(f"sqlite:///{tmp_path / 'g.sqlite3'}")
    store.migrate()
    store.open_ask("kx-ask-1", session="s1", user="alice", tool="t", replica="r1")
    assert not store.answer_ask("kx-ask-1", session="s2", user="alice", answer={"action": "accept"}, replica="r2")
    assert not store.answer_ask("kx-ask-1", session="s1", user="bob", answer={"action": "accept"}, replica="r2")
    assert store.ask_answer("kx-ask-1") is None
    assert store.answer_ask("kx-ask-1", session="s1", user="alice", answer={"action": "decline"}, replica="r2")
    assert not store.answer_ask("kx-ask-1", session="s1", user="alice", answer={"action": "accept"}, replica="r2")
    assert store.ask_answer("kx-ask-1") == {"action": "decline"}
    store.close()


def audit_cli(home: Path, *args: str) -> list[str]:
    done = subprocess.run(
        [sys.executable, "-m", "kairox", "audit", *args],
        env=kairox_env(home),
        capture_output=True,
        text=True,
        timeout=60,
        cwd=home,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.splitlines()


def test_calls_are_counted_per_user_and_minute_and_a_login_is_replaced_by_the_next(tmp_path: Path) -> None:
    store = Store(f"sqlite:///{tmp_path / 'g.sqlite3'}")
    store.migrate()
    counted = [store.count_call("ann", 60), store.count_call("ann", 60), store.count_call("ben", 60)]
    assert [*counted, store.count_call("ann", 120), store.count_call("ann", 120)] == [1, 2, 1, 1, 2]
    store.save_login("ann", "github", "first")
    store.save_login("ann", "github", "second")
    assert [store.load_login("ann", "github"), store.load_login("ben", "github")] == ["second", None]
    store.close()


def test_kairox_audit_reads_the_json_lines_log_or_a_store_by_user_and_time(tmp_path: Path) -> None:
    home = tmp_path / "home"
    now = time.time()
    rows = [
        {
            "ts": now - 7200,
            "user": "alice",
            "tool": "fs.read",
            "decision": "allow",
            "outcome": "ok",
            "duration_ms": 1.5,
        },
        {
            "ts": now - 60,
            "user": "bob",
            "tool": "shell.exec",
            "decision": "deny",
            "outcome": "refused",
            "duration_ms": 0,
        },
        {
            "ts": now - 30,
            "user": "alice",
            "tool": "fs.write",
            "decision": "approved",
            "outcome": "ok",
            "duration_ms": 2,
        },
    ]
    (home / "logs").mkdir(parents=True)
    (home / "logs" / "gateway.jsonl.1").write_text(json.dumps(rows[0]) + "\n")
    (home / "logs" / "gateway.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows[1:]))
    url = f"sqlite:///{tmp_path / 'g.sqlite3'}"
    store = Store(url)
    store.migrate()
    for row in rows:
        store.write_audit({**row, "user_name": row["user"], "client": "c", "arguments": {"a": 1}, "replica": "r1"})
    store.close()

    assert [json.loads(line)["tool"] for line in audit_cli(home, "--json")] == ["fs.read", "shell.exec", "fs.write"]
    assert [json.loads(line)["tool"] for line in audit_cli(home, "--json", "--user", "alice", "--since", "1h")] == [
        "fs.write"
    ]
    from_store = [json.loads(line) for line in audit_cli(home, "--store", url, "--json", "--user", "alice")]
    assert [(r["tool"], r["user"], r["replica"], r["arguments"]) for r in from_store] == [
        ("fs.read", "alice", "r1", {"a": 1}),
        ("fs.write", "alice", "r1", {"a": 1}),
    ]
    [line] = audit_cli(home, "--store", url, "--since", "45s")
    assert line.split()[2:] == ["alice", "fs.write", "approved", "ok", "2.0", "ms", "r1"]
