"""Rules per user and group (``[gateway.rules]``) under the policy's own: one ``kairox serve`` on 127.0.0.1, its
default SQLite store, a users file with three people, and the same calls made by each of them."""

import contextlib
import json
import sqlite3
import sys
import time
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx2
import mcp_types as types
import pytest
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError
from tests.gateway.conftest import SKILL, start_gateway, trust
from tests.gateway.team import LEDGER_SERVER

from mcp import Client

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(300)]

TOKENS = {"alice": "alice-token-41aa", "bob": "bob-token-41bb", "carol": "carol-token-41cc", "dave": "dave-41dd"}
LIMIT = 6
RECORD = "mcp__ledger__record"


@dataclass
class Served:
    url: str
    home: Path
    workspace: Path

    def audit(self) -> dict[tuple[str, str], tuple[str, str | None, str]]:
        """(user, tag) -> (decision, rule, outcome), from the store's audit rows."""
        with contextlib.closing(sqlite3.connect(self.home / "gateway.sqlite3")) as db:
            rows = db.execute("SELECT user_name, arguments, decision, rule, outcome FROM kx_audit").fetchall()
        calls = [(user, json.loads(args), decision, rule, out) for user, args, decision, rule, out in rows]
        return {(user, a["tag"]): (decision, rule, out) for user, a, decision, rule, out in calls if "tag" in a}

    def ledger(self) -> list[str]:
        path = self.workspace / "ledger.txt"
        return path.read_text().split() if path.exists() else []


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    root = tmp_path_factory.mktemp("user-rules")
    workspace, home = root / "ws", root / "home"
    (workspace / ".git").mkdir(parents=True)
    home.mkdir()
    (workspace / "kairox.toml").write_text(
        f"""
[mcp_servers.ledger]
command = {json.dumps(sys.executable)}
args = [{json.dumps(str(LEDGER_SERVER))}, {json.dumps(str(workspace / "ledger.txt"))}]

[policy.rules]
allow = ["{RECORD}(open*)"]
ask = ["{RECORD}(ask*)"]
deny = ["{RECORD}(banned*)"]
"""
    )
    (home / "kairox.toml").write_text(
        f"""
[gateway]
calls_per_minute = {LIMIT}

[gateway.rules.bob]
deny = ["{RECORD}(open-secret*)", "skill"]
allow = ["{RECORD}"]

[gateway.rules."@reviewers"]
ask = ["{RECORD}(open-review*)"]

[gateway.rules.carol]
deny = ["{RECORD}(open-x"]
"""
    )
    skill = workspace / ".kairox" / "skills" / "greet-back" / "SKILL.md"
    skill.parent.mkdir(parents=True)
    skill.write_text(SKILL)
    users = root / "users.toml"
    users.write_text(
        f'alice = {{ token = "{TOKENS["alice"]}", groups = ["reviewers"] }}\n'
        f'bob = "{TOKENS["bob"]}"\ncarol = "{TOKENS["carol"]}"\ndave = "{TOKENS["dave"]}"\n'
    )
    trust(workspace, home)
    gateway = start_gateway(workspace, home, "--users-file", str(users))
    try:
        yield Served(url=gateway.url, home=home, workspace=workspace)
    finally:
        gateway.stop()


@contextlib.asynccontextmanager
async def connect(served: Served, user: str, asked: list[str]) -> AsyncIterator[Client]:
    async def elicit(ctx: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        asked.append(f"{user}: {params.message}")
        return types.ElicitResult(action="accept", content={"decision": "allow once"})

    async with (
        httpx2.AsyncClient(headers={"Authorization": f"Bearer {TOKENS[user]}"}, timeout=60) as http,
        Client(streamable_http_client(served.url, http_client=http), elicitation_callback=elicit) as client,
    ):
        yield client


async def record(served: Served, user: str, tag: str) -> tuple[str, bool, list[str]]:
    """The call's text, whether it failed, and the approval questions its user was asked."""
    asked: list[str] = []
    async with connect(served, user, asked) as client:
        result = await client.call_tool(RECORD, {"tag": tag})
    text = "\n".join(b.text for b in result.content if isinstance(b, types.TextContent))
    return text, result.is_error is True, asked


async def test_a_users_deny_rule_refuses_that_users_call_only_and_the_audit_names_whose_rule(served: Served) -> None:
    bob = await record(served, "bob", "open-secret-1")
    alice = await record(served, "alice", "open-secret-2")
    assert bob[1] and "gateway.rules.bob" in bob[0] and not bob[2]
    assert alice == ("recorded open-secret-2", False, [])
    assert "open-secret-1" not in served.ledger()
    audit = served.audit()
    assert audit["bob", "open-secret-1"] == ("deny", f"{RECORD}(open-secret*) (gateway.rules.bob)", "refused")
    assert audit["alice", "open-secret-2"] == ("allow", f"{RECORD}(open*)", "ok")


async def test_a_users_deny_rule_on_skills_hides_them_from_that_user_only(served: Served) -> None:
    async def skills(user: str) -> tuple[list[str], str]:
        async with connect(served, user, []) as client:
            listed = [str(r.uri) for r in (await client.list_resources()).resources]
            try:
                read = await client.read_resource("skill://greet-back/SKILL.md")
            except MCPError as exc:
                return listed, str(exc)
        return listed, "".join(getattr(c, "text", "") for c in read.contents)

    (alice_listed, alice_read), (bob_listed, bob_read) = await skills("alice"), await skills("bob")
    assert "skill://greet-back/SKILL.md" in alice_listed and "Say hello" in alice_read
    assert "skill://greet-back/SKILL.md" not in bob_listed and "no skill is served at" in bob_read


async def test_a_groups_ask_rule_asks_its_members_only(served: Served) -> None:
    alice = await record(served, "alice", "open-review-1")  # alice is of @reviewers
    bob = await record(served, "bob", "open-review-2")
    assert alice[:2] == ("recorded open-review-1", False) and len(alice[2]) == 1
    assert bob == ("recorded open-review-2", False, [])
    audit = served.audit()
    assert audit["alice", "open-review-1"] == ("approved", f"{RECORD}(open-review*) (gateway.rules.@reviewers)", "ok")


async def test_a_users_allow_rule_spares_the_question_the_policy_would_ask_by_default(served: Served) -> None:
    bob = await record(served, "bob", "plain-1")
    alice = await record(served, "alice", "plain-2")
    assert bob == ("recorded plain-1", False, [])
    assert alice[:2] == ("recorded plain-2", False) and len(alice[2]) == 1
    assert served.audit()["bob", "plain-1"] == ("allow", f"{RECORD} (gateway.rules.bob)", "ok")


async def test_a_users_allow_rule_never_lifts_the_policys_own_ask_or_deny(served: Served) -> None:
    asked = await record(served, "bob", "ask-1")
    banned = await record(served, "bob", "banned-1")
    assert asked[:2] == ("recorded ask-1", False) and len(asked[2]) == 1
    assert banned[1] and f"{RECORD}(banned*)" in banned[0] and not banned[2]
    assert "banned-1" not in served.ledger()
    audit = served.audit()
    assert audit["bob", "ask-1"] == ("approved", f"{RECORD}(ask*)", "ok")
    assert audit["bob", "banned-1"] == ("deny", f"{RECORD}(banned*)", "refused")


async def test_a_user_rule_kairox_cannot_read_refuses_that_users_calls_saying_so(served: Served) -> None:
    carol = await record(served, "carol", "open-3")
    alice = await record(served, "alice", "open-4")
    assert carol[1] and "gateway.rules.carol, which Kairox cannot read" in carol[0]
    assert alice == ("recorded open-4", False, [])
    assert "open-3" not in served.ledger()


def test_a_user_past_the_calls_per_minute_gets_429_with_retry_after_and_the_others_do_not(served: Served) -> None:
    def post(user: str) -> httpx2.Response:
        return httpx2.post(
            served.url,
            headers={"Authorization": f"Bearer {TOKENS[user]}", "Accept": "application/json, text/event-stream"},
            json={"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": RECORD, "arguments": {}}},
        )

    while time.time() % 60 > 45:  # all of dave's calls in one minute of the store's counters
        time.sleep(1)
    statuses = [post("dave").status_code for _ in range(LIMIT)]
    refused, other = post("dave"), post("carol")
    assert 429 not in statuses and other.status_code != 429
    assert refused.status_code == 429 and 1 <= int(refused.headers["Retry-After"]) <= 60
    assert f"dave made {LIMIT} tool calls this minute" in refused.text
