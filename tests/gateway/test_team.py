"""``kairox serve`` for a team, with real engines on 127.0.0.1: three replicas on one PostgreSQL store (started
together), HAProxy round robin in front, two users with their own tokens, and one replica SIGKILLed mid-run."""

import collections
import contextlib
import hashlib
import json
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import httpx2
import mcp_types as types
import psycopg
import pytest
from mcp.client.streamable_http import streamable_http_client
from tests.gateway.conftest import Served, start_gateway, trust
from tests.gateway.team import haproxy, kill_replica, postgres, team_workspace

from mcp import Client

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(600)]

TOKENS = {"alice": "alice-token-7c1e", "bob": "bob-token-93aa"}


@dataclass
class Deployment:
    url: str
    store: str
    workspace: Path
    replicas: dict[str, Served]
    killed: list[str] = field(default_factory=list)

    def sql(self, query: str, *params: Any) -> list[tuple[Any, ...]]:
        with psycopg.connect(self.store, autocommit=True) as conn:
            return conn.execute(query, params).fetchall()

    def audit(self) -> list[dict[str, Any]]:
        rows = self.sql("SELECT user_name, tool, arguments, decision, outcome, replica, call_key FROM kx_audit")
        keys = ("user", "tool", "arguments", "decision", "outcome", "replica", "call_key")
        return [{**dict(zip(keys, row, strict=True)), "arguments": json.loads(row[2])} for row in rows]

    def ledger(self) -> list[str]:
        path = self.workspace / "ledger.txt"
        return path.read_text().split() if path.exists() else []


@pytest.fixture(scope="module")
def deployment(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Deployment]:
    root = tmp_path_factory.mktemp("team")
    workspace = team_workspace(root / "ws")
    users = root / "users.toml"  # one plain token, one by its digest
    digest = hashlib.sha256(TOKENS["bob"].encode()).hexdigest()
    users.write_text(f'alice = "{TOKENS["alice"]}"\nbob = {{ token = "sha256:{digest}", groups = ["contractors"] }}\n')
    with postgres() as pg, contextlib.ExitStack() as stack:
        started: dict[str, Served] = {}

        def start(name: str) -> None:
            home = root / f"home-{name}"
            trust(workspace, home)
            # a rule for one group only, on top of the policy (the user layer: project files may not set it)
            # and a rate limit no test reaches: every call is counted in PostgreSQL
            rules = '[gateway]\ncalls_per_minute = 100000\n[gateway.rules."@contractors"]\n'
            rules += 'deny = ["mcp__ledger__record(secret*)"]\n'
            (home / "kairox.toml").write_text(rules)
            started[name] = start_gateway(
                workspace,
                home,
                *("--store", pg.url, "--users-file", str(users), "--replica-id", name),
                *("--allow-host", "127.0.0.1:*"),
            )

        # the three start at once on an empty database: each applies the migrations it misses, under one lock
        with anyio.from_thread.start_blocking_portal() as portal:
            futures = [portal.start_task_soon(anyio.to_thread.run_sync, start, n) for n in ("r1", "r2", "r3")]
            for future in futures:
                future.result()
        for served in started.values():
            stack.callback(served.stop)
        ports = [int(s.url.rsplit(":", 1)[1].split("/")[0]) for s in started.values()]
        port = stack.enter_context(haproxy(ports, root))
        yield Deployment(url=f"http://127.0.0.1:{port}/mcp", store=pg.url, workspace=workspace, replicas=started)


@contextlib.asynccontextmanager
async def connect(deployment: Deployment, user: str, **options: Any) -> AsyncIterator[Client]:
    headers = {"Authorization": f"Bearer {TOKENS[user]}"}
    mode = options.pop("mode", "legacy")
    async with (
        httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(30, read=60)) as http,
        Client(streamable_http_client(deployment.url, http_client=http), mode=mode, **options) as client,
    ):
        yield client


def allow_once(seen: list[str]) -> Any:
    async def elicit(ctx: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        seen.append(params.message)
        return types.ElicitResult(action="accept", content={"decision": "allow once"})

    return elicit


def text(result: types.CallToolResult) -> str:
    return "\n".join(block.text for block in result.content if isinstance(block, types.TextContent))


def test_replicas_started_together_applied_each_migration_once(deployment: Deployment) -> None:
    assert deployment.sql("SELECT version FROM kx_schema ORDER BY version") == [(1,), (2,)]
    assert all(s.proc.poll() is None for s in deployment.replicas.values())


def test_health_and_readiness_answer_without_a_token(deployment: Deployment) -> None:
    base = deployment.url.removesuffix("/mcp")
    assert httpx2.get(f"{base}/healthz").status_code == 200
    ready = httpx2.get(f"{base}/readyz")
    assert (ready.status_code, ready.text) == (200, "ready")


def test_a_token_of_no_user_is_refused_before_anything_runs(deployment: Deployment) -> None:
    before = len(deployment.audit())
    for token in ("nobody-knows-this", TOKENS["alice"] + "x"):
        refused = httpx2.post(
            deployment.url,
            headers={"Authorization": f"Bearer {token}", "Accept": "application/json, text/event-stream"},
            json={"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "mcp__ledger__record"}},
        )
        assert refused.status_code == 401
    assert len(deployment.audit()) == before


async def test_a_session_and_its_approvals_go_on_across_replicas(deployment: Deployment) -> None:
    seen: list[str] = []
    async with connect(deployment, "alice", elicitation_callback=allow_once(seen)) as client:
        tools = [t.name for t in (await client.list_tools()).tools]
        results = [await client.call_tool("mcp__ledger__record", {"tag": f"ask-legacy-{i}"}) for i in range(4)]
    async with connect(deployment, "bob", mode="auto", elicitation_callback=allow_once(seen)) as client:
        modern = await client.call_tool("mcp__ledger__record", {"tag": "ask-modern-bob"})
    assert "mcp__ledger__record" in tools
    assert [(text(r), r.is_error) for r in results] == [(f"recorded ask-legacy-{i}", False) for i in range(4)]
    assert (text(modern), modern.is_error) == ("recorded ask-modern-bob", False)
    assert len(seen) == 5
    asks = deployment.sql("SELECT replica, answered_on, user_name FROM kx_asks")
    assert len(asks) == 4 and all(answered is not None for _, answered, _ in asks)
    assert {user for _, _, user in asks} == {"alice"}
    # round robin: the answer to a question asked on one replica came in on another, and completed the call there
    assert any(asked != answered for asked, answered, _ in asks)
    rows = [r for r in deployment.audit() if str(r["arguments"].get("tag", "")).startswith("ask-")]
    approved = sorted((r["arguments"]["tag"], r["user"]) for r in rows if r["decision"] == "approved")
    assert approved == sorted([*((f"ask-legacy-{i}", "alice") for i in range(4)), ("ask-modern-bob", "bob")])
    assert len({r["replica"] for r in rows}) >= 2  # one session, served by more than one replica


async def test_a_rule_of_a_group_refuses_its_members_calls_only(deployment: Deployment) -> None:
    async with connect(deployment, "bob") as client:
        refused = await client.call_tool("mcp__ledger__record", {"tag": "secret-bob"})
    async with connect(deployment, "alice") as client:
        allowed = await client.call_tool("mcp__ledger__record", {"tag": "secret-alice"})
    assert refused.is_error and "gateway.rules.@contractors" in text(refused)
    assert (text(allowed), allowed.is_error) == ("recorded secret-alice", False)
    assert "secret-bob" not in deployment.ledger()
    rows = {r["arguments"]["tag"]: r for r in deployment.audit() if r["arguments"].get("tag", "").startswith("secret")}
    assert (rows["secret-bob"]["decision"], rows["secret-bob"]["outcome"]) == ("deny", "refused")
    assert rows["secret-bob"]["user"] == "bob" and rows["secret-alice"]["user"] == "alice"


def test_another_users_token_cannot_take_over_a_session(deployment: Deployment) -> None:
    accept = {"Accept": "application/json, text/event-stream", "MCP-Protocol-Version": "2025-11-25"}
    opened = httpx2.post(
        deployment.url,
        headers={**accept, "Authorization": f"Bearer {TOKENS['alice']}"},
        json={
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "t", "version": "1"},
            },
        },
    )
    session = opened.headers["mcp-session-id"]
    for _ in range(3):  # whichever replica it lands on
        taken = httpx2.post(
            deployment.url,
            headers={**accept, "Authorization": f"Bearer {TOKENS['bob']}", "Mcp-Session-Id": session},
            json={"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
        )
        assert taken.status_code == 404


async def test_a_replica_killed_mid_run_loses_no_completed_call_and_runs_none_twice(deployment: Deployment) -> None:
    outcomes: dict[str, str] = {}
    failures: collections.Counter[str] = collections.Counter()

    async def worker(user: str, lane: int) -> None:
        for i in range(8):
            tag = f"{user}-{lane}-{i}"
            for _attempt in range(6):
                try:
                    async with connect(deployment, user, mode="auto") as client:
                        result = await client.call_tool(
                            "mcp__ledger__record", {"tag": tag, "sleep": 1.0}, meta={"kairox/call-id": tag}
                        )
                    outcomes[tag] = "ok" if not result.is_error else text(result)
                    break
                except Exception:  # the replica died under the call: retried with the same call id
                    failures[tag] += 1
                    await anyio.sleep(0.3)

    async def killer() -> None:
        # kill r1 while it runs a call: a claimed call id of r1 with no result yet
        with anyio.fail_after(120):
            while not deployment.sql("SELECT 1 FROM kx_calls WHERE replica = 'r1' AND result IS NULL"):
                await anyio.sleep(0.05)
        kill_replica(deployment.replicas["r1"].proc)
        deployment.killed.append("r1")

    async with anyio.create_task_group() as tasks:
        tasks.start_soon(killer)
        for user in TOKENS:
            for lane in range(2):
                tasks.start_soon(worker, user, lane)

    tags = [f"{u}-{lane}-{i}" for u in TOKENS for lane in range(2) for i in range(8)]
    assert deployment.killed == ["r1"]
    assert sorted(outcomes) == sorted(tags)  # every call ended: completed, or reported as not run again
    ran = collections.Counter(t for t in deployment.ledger() if not t.startswith("ask-"))
    assert max(ran.values()) == 1  # nothing ran twice
    completed = [t for t, o in outcomes.items() if o == "ok"]
    lost = {t: o for t, o in outcomes.items() if o != "ok"}
    assert failures and set(failures) >= set(lost)  # the call in flight on r1 failed at its client
    assert all("did not report back" in o and "replica r1" in o for o in lost.values()), lost
    rows = collections.defaultdict(list)
    for row in deployment.audit():
        rows[row["arguments"].get("tag")].append(row)
    for tag in completed:  # every completed call: exactly one audit row, naming its user
        assert [(r["user"], r["outcome"], r["call_key"]) for r in rows[tag]] == [(tag.split("-")[0], "ok", tag)]
        assert ran[tag] == 1
    assert {r["replica"] for t in completed for r in rows[t]} >= {"r2", "r3"}
