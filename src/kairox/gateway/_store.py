"""The gateway's shared state in one SQL store: SQLite under ``$KAIROX_HOME`` by default (nothing to start), or
PostgreSQL (``psycopg`` 3 and its pool) for replicas behind a load balancer.

What lives here: the audit (one row per call), the 2025-era client sessions (so a session opened on one replica
goes on on another), approvals waiting for a person's answer (answered on any replica), the call ids that make a
retried call run at most once, each person's own OAuth logins to upstream servers (encrypted by the gateway),
each person's calls this minute, and the key that seals 2026-era ``requestState`` (shared, so any replica
unseals).

The methods are synchronous (the drivers are); the gateway calls them in worker threads. The schema is versioned:
each replica applies the missing migrations on start, under a lock (PostgreSQL's advisory lock, SQLite's
``BEGIN IMMEDIATE``), so two replicas starting at once apply each migration once.
"""

import json
import secrets
import sqlite3
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from kairox.errors import KairoxError

MIGRATIONS: tuple[tuple[str, ...], ...] = (
    (
        "CREATE TABLE kx_audit (id {serial} PRIMARY KEY, ts DOUBLE PRECISION NOT NULL, user_name TEXT, client TEXT,"
        " session TEXT, tool TEXT NOT NULL, arguments TEXT, decision TEXT, rule TEXT, outcome TEXT,"
        " duration_ms DOUBLE PRECISION, approval_wait_ms DOUBLE PRECISION, replica TEXT, call_key TEXT)",
        "CREATE INDEX kx_audit_ts ON kx_audit (ts)",
        "CREATE TABLE kx_sessions (id TEXT PRIMARY KEY, user_name TEXT, params TEXT NOT NULL,"
        " created DOUBLE PRECISION NOT NULL)",
        "CREATE TABLE kx_calls (user_name TEXT NOT NULL, call_key TEXT NOT NULL, replica TEXT NOT NULL,"
        " started DOUBLE PRECISION NOT NULL, result TEXT, PRIMARY KEY (user_name, call_key))",
        "CREATE TABLE kx_asks (id TEXT PRIMARY KEY, session TEXT NOT NULL, user_name TEXT, tool TEXT, replica TEXT,"
        " asked DOUBLE PRECISION NOT NULL, answer TEXT, answered_on TEXT, answered DOUBLE PRECISION)",
        "CREATE TABLE kx_secrets (name TEXT PRIMARY KEY, value TEXT NOT NULL)",
    ),
    (
        "CREATE TABLE kx_logins (user_name TEXT NOT NULL, server TEXT NOT NULL, value TEXT NOT NULL,"
        " PRIMARY KEY (user_name, server))",
        "CREATE TABLE kx_rates (user_name TEXT PRIMARY KEY, minute BIGINT NOT NULL, calls INTEGER NOT NULL)",
    ),
)
"""Migration N+1 is ``MIGRATIONS[N]``; append, never edit one that shipped."""

_AUDIT = "ts user_name client session tool arguments decision rule outcome duration_ms approval_wait_ms replica"
AUDIT_COLUMNS = (*_AUDIT.split(), "call_key")
_LOCK_KEY = 0x6B616972  # the advisory lock the replicas take while migrating ("kair")


class StoreError(KairoxError):
    """The gateway's store cannot be opened, migrated or used."""


@dataclass(frozen=True, slots=True)
class PriorCall:
    """A call id seen before: on which replica it started, and its result once it finished."""

    replica: str
    started: float
    result: str | None


def redact_url(url: str) -> str:
    parts = urlsplit(url)
    if parts.password is None:
        return url
    netloc = parts.netloc.replace(f":{parts.password}@", ":***@")
    return urlunsplit(parts._replace(netloc=netloc))


def default_url(home: Path) -> str:
    return f"sqlite:///{home / 'gateway.sqlite3'}"


class Store:
    """One store, by URL: ``postgresql://...`` (or ``postgres://``) or ``sqlite:///PATH``."""

    def __init__(self, url: str, *, pool_size: int = 8, open_timeout: float = 30.0) -> None:
        self.url = url
        self.shown = redact_url(url)
        scheme = urlsplit(url).scheme
        self._pool: Any = None
        self._db: sqlite3.Connection | None = None
        self._lock = threading.Lock()
        try:
            if scheme in ("postgresql", "postgres"):
                try:
                    from psycopg_pool import ConnectionPool
                except ImportError as exc:
                    raise StoreError(
                        f"store {self.shown}: the PostgreSQL driver is not installed ({exc.name})",
                        hint="pip install 'kairox[postgres]'",
                    ) from exc

                self._pool = ConnectionPool(
                    url, min_size=1, max_size=pool_size, kwargs={"autocommit": True}, open=False, name="kairox"
                )
                self._pool.open(wait=True, timeout=open_timeout)
            elif scheme == "sqlite":
                path = Path(urlsplit(url).path)
                path.parent.mkdir(parents=True, exist_ok=True)
                self._db = sqlite3.connect(path, check_same_thread=False, isolation_level=None, timeout=30)
                self._db.execute("PRAGMA journal_mode=WAL")
                self._db.execute("PRAGMA synchronous=NORMAL")
            else:
                raise StoreError(
                    f"store {self.shown!r}: unknown kind {scheme!r}",
                    hint="use postgresql://USER@HOST/DB or sqlite:///PATH",
                )
        except StoreError:
            raise
        except Exception as exc:
            self.close()
            raise StoreError(f"cannot open the store {self.shown}: {exc}", hint=_HINT) from exc

    @property
    def kind(self) -> str:
        return "postgresql" if self._pool is not None else "sqlite"

    def close(self) -> None:
        if self._pool is not None:
            self._pool.close()
        if self._db is not None:
            self._db.close()

    def _run(self, sql: str, params: Sequence[Any] = (), *, fetch: bool = False) -> Any:
        try:
            if self._pool is not None:
                with self._pool.connection() as conn:
                    cursor = conn.execute(sql.replace("?", "%s"), params)
                    return cursor.fetchall() if fetch else cursor.rowcount
            assert self._db is not None
            with self._lock:
                cursor = self._db.execute(sql, params)
                return cursor.fetchall() if fetch else cursor.rowcount
        except Exception as exc:
            raise StoreError(f"the store {self.shown} failed: {exc}", hint=_HINT) from exc

    # --- schema --------------------------------------------------------------------------------------------

    def migrate(self) -> int:
        """Apply the missing migrations, once across replicas starting together; the schema version after."""
        serial = "BIGSERIAL" if self._pool is not None else "INTEGER"
        table = "CREATE TABLE IF NOT EXISTS kx_schema (version INTEGER PRIMARY KEY, applied DOUBLE PRECISION)"
        try:
            if self._pool is not None:
                with self._pool.connection() as conn, conn.transaction():
                    conn.execute("SELECT pg_advisory_xact_lock(%s)", (_LOCK_KEY,))
                    return self._apply(lambda sql, p=(): conn.execute(sql.replace("?", "%s"), p), table, serial)
            assert self._db is not None
            with self._lock:
                self._db.execute("BEGIN IMMEDIATE")
                try:
                    version = self._apply(self._db.execute, table, serial)
                except BaseException:
                    self._db.execute("ROLLBACK")
                    raise
                self._db.execute("COMMIT")
                return version
        except StoreError:
            raise
        except Exception as exc:
            raise StoreError(f"cannot migrate the store {self.shown}: {exc}", hint=_HINT) from exc

    def _apply(self, execute: Any, table: str, serial: str) -> int:
        execute(table)
        done = {row[0] for row in execute("SELECT version FROM kx_schema").fetchall()}
        newest = max(done, default=0)
        if newest > len(MIGRATIONS):
            raise StoreError(
                f"the store {self.shown} has schema version {newest}; this Kairox knows up to {len(MIGRATIONS)}",
                hint="upgrade Kairox on this replica to the version the others run",
            )
        for version, statements in enumerate(MIGRATIONS, start=1):
            if version in done:
                continue
            for statement in statements:
                execute(statement.format(serial=serial))
            execute("INSERT INTO kx_schema (version, applied) VALUES (?, ?)", (version, time.time()))
        return len(MIGRATIONS)

    def prune(self, *, days: float = 30.0) -> None:
        """Forget sessions, call ids and questions older than ``days`` (the audit is kept)."""
        before = time.time() - days * 86400
        for table, column in (("kx_sessions", "created"), ("kx_calls", "started"), ("kx_asks", "asked")):
            self._run(f"DELETE FROM {table} WHERE {column} < ?", (before,))

    def ping(self) -> bool:
        try:
            return bool(self._run("SELECT 1", fetch=True))
        except StoreError:
            return False

    def secret(self, name: str) -> str:
        """A random secret shared by every replica of this store, made by the first that asks."""
        self._run(
            "INSERT INTO kx_secrets (name, value) VALUES (?, ?) ON CONFLICT (name) DO NOTHING",
            (name, secrets.token_hex(32)),
        )
        return str(self._run("SELECT value FROM kx_secrets WHERE name = ?", (name,), fetch=True)[0][0])

    # --- audit ---------------------------------------------------------------------------------------------

    def write_audit(self, row: dict[str, Any]) -> None:
        values = [row.get(c) for c in AUDIT_COLUMNS]
        values[AUDIT_COLUMNS.index("arguments")] = json.dumps(row.get("arguments"), ensure_ascii=False, default=str)
        marks = ", ".join("?" * len(AUDIT_COLUMNS))
        self._run(f"INSERT INTO kx_audit ({', '.join(AUDIT_COLUMNS)}) VALUES ({marks})", values)

    def read_audit(self, *, user: str | None = None, since: float | None = None) -> list[dict[str, Any]]:
        where, params = ["1 = 1"], list[Any]()
        if user is not None:
            where.append("user_name = ?")
            params.append(user)
        if since is not None:
            where.append("ts >= ?")
            params.append(since)
        rows = self._run(
            f"SELECT {', '.join(AUDIT_COLUMNS)} FROM kx_audit WHERE {' AND '.join(where)} ORDER BY ts, id",
            params,
            fetch=True,
        )
        out = []
        for row in rows:
            record = dict(zip(AUDIT_COLUMNS, row, strict=True))
            record["user"] = record.pop("user_name")
            record["arguments"] = json.loads(record["arguments"]) if record["arguments"] else None
            out.append(record)
        return out

    # --- sessions of 2025-era clients ----------------------------------------------------------------------

    def save_session(self, session: str, user: str | None, params: dict[str, Any]) -> None:
        self._run(
            "INSERT INTO kx_sessions (id, user_name, params, created) VALUES (?, ?, ?, ?) ON CONFLICT (id) DO NOTHING",
            (session, user, json.dumps(params), time.time()),
        )

    def load_session(self, session: str) -> tuple[str | None, dict[str, Any]] | None:
        rows = self._run("SELECT user_name, params FROM kx_sessions WHERE id = ?", (session,), fetch=True)
        return (rows[0][0], json.loads(rows[0][1])) if rows else None

    def end_session(self, session: str) -> None:
        self._run("DELETE FROM kx_sessions WHERE id = ?", (session,))

    # --- calls by id: at most once ------------------------------------------------------------------------

    def claim_call(self, user: str, key: str, replica: str) -> PriorCall | None:
        """Claim a call id for this run; the call of that id seen before instead, when there was one."""
        claimed = self._run(
            "INSERT INTO kx_calls (user_name, call_key, replica, started) VALUES (?, ?, ?, ?)"
            " ON CONFLICT (user_name, call_key) DO NOTHING",
            (user, key, replica, time.time()),
        )
        if claimed:
            return None
        rows = self._run(
            "SELECT replica, started, result FROM kx_calls WHERE user_name = ? AND call_key = ?",
            (user, key),
            fetch=True,
        )
        return PriorCall(*rows[0]) if rows else None

    def release_call(self, user: str, key: str) -> None:
        """Forget a claimed call that did not run (it asked first, or failed before the gate): a retry runs it."""
        self._run("DELETE FROM kx_calls WHERE user_name = ? AND call_key = ? AND result IS NULL", (user, key))

    def finish_call(self, user: str, key: str, result: str) -> None:
        self._run("UPDATE kx_calls SET result = ? WHERE user_name = ? AND call_key = ?", (result, user, key))

    # --- approvals waiting for a person -------------------------------------------------------------------

    def open_ask(self, ask: str, *, session: str, user: str | None, tool: str, replica: str) -> None:
        self._run(
            "INSERT INTO kx_asks (id, session, user_name, tool, replica, asked) VALUES (?, ?, ?, ?, ?, ?)",
            (ask, session, user, tool, replica, time.time()),
        )

    def answer_ask(self, ask: str, *, session: str, user: str | None, answer: dict[str, Any], replica: str) -> bool:
        """Record the answer to an open question of ``session`` and ``user``; False when there is none to answer."""
        return bool(
            self._run(
                "UPDATE kx_asks SET answer = ?, answered_on = ?, answered = ?"
                " WHERE id = ? AND session = ? AND user_name = ? AND answer IS NULL",
                (json.dumps(answer), replica, time.time(), ask, session, user),
            )
        )

    def ask_answer(self, ask: str) -> dict[str, Any] | None:
        rows = self._run("SELECT answer FROM kx_asks WHERE id = ?", (ask,), fetch=True)
        return json.loads(rows[0][0]) if rows and rows[0][0] is not None else None

    # --- a person's own upstream logins (encrypted before they come here) ---------------------------------

    def load_login(self, user: str, server: str) -> str | None:
        rows = self._run("SELECT value FROM kx_logins WHERE user_name = ? AND server = ?", (user, server), fetch=True)
        return str(rows[0][0]) if rows else None

    def save_login(self, user: str, server: str, value: str) -> None:
        self._run(
            "INSERT INTO kx_logins (user_name, server, value) VALUES (?, ?, ?)"
            " ON CONFLICT (user_name, server) DO UPDATE SET value = excluded.value",
            (user, server, value),
        )

    def count_call(self, user: str, minute: int) -> int:
        """Count one more call of ``user`` in the minute starting at ``minute``; the calls of that minute so far
        (one row per user: a new minute starts again at one)."""
        rows = self._run(
            "INSERT INTO kx_rates (user_name, minute, calls) VALUES (?, ?, 1) ON CONFLICT (user_name) DO UPDATE"
            " SET calls = CASE WHEN kx_rates.minute = excluded.minute THEN kx_rates.calls + 1 ELSE 1 END,"
            " minute = excluded.minute RETURNING calls",
            (user, minute),
            fetch=True,
        )
        return int(rows[0][0])


_HINT = "check the --store URL (or [gateway] store), that the database is up, and that its user may create tables"
