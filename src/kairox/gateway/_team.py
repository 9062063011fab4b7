"""``kairox serve`` as one replica of many: its state in the store, a person per token, health for the balancer.

Any replica answers any request. A 2026-era request needs nothing of the replica before it; a 2025-era session
opened on one replica is recorded in the store and taken up by another when its next request lands there; the
answer to an approval question (a JSON-RPC response the client POSTs) is put in the store by whichever replica
receives it, and the replica whose call waits for it reads it there. A call sent with a call id
(``_meta["kairox/call-id"]``) runs at most once: a retry gets the stored result, or, when the first run never
reported back (its replica died), a refusal saying so instead of a second run.
"""

import contextvars
import dataclasses
import getpass
import json
import os
import socket
import sys
import time
import uuid
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
from mcp.server.context import ServerRequestContext
from mcp.server.streamable_http import MCP_SESSION_ID_HEADER, StreamableHTTPServerTransport
from mcp.shared.exceptions import MCPError
from mcp.shared.jsonrpc_dispatcher import JSONRPCDispatcher
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS, LATEST_HANDSHAKE_VERSION
from starlette.datastructures import Headers
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from kairox._util._expand import expand_vars
from kairox.config import RulesConfig
from kairox.errors import KairoxError
from kairox.gateway._audit import AuditRecord
from kairox.gateway._store import Store, StoreError
from kairox.gateway._telemetry import Telemetry
from kairox.gateway._users import GROUPS_KEY, USER_KEY, Users
from kairox.mcp._oauth import FileTokenStorage, oauth_provider
from kairox.policy import PolicyEngine, PolicySettings, Rule, parse_rule

CALL_ID_KEY = "kairox/call-id"
"""The ``_meta`` key of a tools/call that names the call: a retry with the same id runs it at most once."""
ASK_PREFIX = "kx-ask-"
"""The JSON-RPC id of every approval question the gateway sends over HTTP: its answer can land on any replica."""
HEALTH, READY, LOGINS = "/healthz", "/readyz", "/logins/"
KEY_VARIABLES = ("KAIROX_GATEWAY_KEY", "KAIROX_GATEWAY_KEY_FILE")
"""The key (Fernet) that encrypts people's upstream logins in the store, or a file that holds it."""

call_key: contextvars.ContextVar[str | None] = contextvars.ContextVar("kairox_gateway_call_key", default=None)


def default_replica() -> str:
    return f"{socket.gethostname()}-{uuid.uuid4().hex[:6]}"


def user_of(ctx: ServerRequestContext[Any, Any]) -> str:
    """The person behind a request: the token's user over HTTP, the local account over stdio or a shared token."""
    scope = getattr(ctx.request, "scope", None)
    user = scope.get(USER_KEY) if isinstance(scope, dict) else None
    return user if isinstance(user, str) else _local_user()


def login_key() -> Any:
    """The key of ``KAIROX_GATEWAY_KEY`` (or of the file ``KAIROX_GATEWAY_KEY_FILE`` names); None without either."""
    from cryptography.fernet import Fernet

    key, path = (os.environ.get(v) for v in KEY_VARIABLES)
    try:
        key = Path(path).read_text(encoding="utf-8").strip() if path else key
        return Fernet(key) if key else None
    except (OSError, ValueError) as exc:
        raise KairoxError(
            f"{KEY_VARIABLES[1] if path else KEY_VARIABLES[0]}: not a usable key: {exc}",
            hint="make one: python -c 'from cryptography.fernet import Fernet; print(Fernet.generate_key().decode())'",
        ) from exc


class StoredLogin(FileTokenStorage):
    """One person's OAuth login to one upstream server (tokens and client registration), in the store, encrypted;
    written back when the tokens are refreshed."""

    def __init__(self, store: Store, key: Any, user: str, server: str) -> None:
        self.store, self.key, self.user, self.server = store, key, user, server

    def _read(self) -> dict[str, object]:
        from cryptography.fernet import InvalidToken

        value = self.store.load_login(self.user, self.server)
        try:
            return json.loads(self.key.decrypt(value.encode())) if value else {}  # type: ignore[no-any-return]
        except InvalidToken:  # encrypted with another key: as if there were no login
            return {}

    def _write(self, key: str, value: object) -> None:
        data = json.dumps({**self._read(), key: value}).encode()
        self.store.save_login(self.user, self.server, self.key.encrypt(data).decode())


def _local_user() -> str:
    try:
        return getpass.getuser()
    except (KeyError, OSError):
        return "local"


class Team:
    """A gateway's store, replica id and telemetry: what the replicas of one deployment share."""

    def __init__(
        self,
        store: Store,
        *,
        replica: str,
        telemetry: Telemetry | None = None,
    ) -> None:
        self.store = store
        self.replica = replica
        self.telemetry = telemetry
        self.problems: list[str] = []
        self.waiting: set[str] = set()
        """The questions this replica's calls wait on: their answers also reach the call here directly."""
        self.request_state_key = store.secret("request-state")
        self.login_key = login_key()

    def login_of(self, ctx: ServerRequestContext[Any, Any]) -> Callable[[str, str], Awaitable[Any]] | None:
        """For the call of a person a token named: the auth of their own login to an ``oauth`` server (or why there
        is none). None for one person (stdio, a shared token): the server's own login serves them."""
        user = getattr(ctx.request, "scope", {}).get(USER_KEY)
        if not isinstance(user, str):
            return None

        async def login(server: str, url: str) -> Any:
            stored = StoredLogin(self.store, self.login_key, user, server) if self.login_key else None
            if stored is None or not await self.run(stored._read):
                kept = "" if self.login_key else f" (the gateway keeps none until its operator sets {KEY_VARIABLES[0]})"
                return (
                    f"MCP server {server!r} is called with each person's own OAuth login, and you have none here"
                    f"{kept}: run `kairox mcp login {server} --gateway URL` with the URL of this gateway"
                )
            return oauth_provider(server, url, home=Path(), storage=stored)

        return login

    async def run(self, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        return await anyio.to_thread.run_sync(lambda: fn(*args, **kwargs))

    async def audit(self, record: AuditRecord, *, server: str | None) -> None:
        """The audit row in the store, written before the call's result leaves: a killed replica loses none."""
        row = {**record.to_json(), "user_name": record.user, "call_key": call_key.get()}
        try:
            await self.run(self.store.write_audit, row)
        except StoreError as exc:  # the JSON-lines log still has the row; said once, the call goes on
            if not self.problems:
                self.problems.append(str(exc))
                sys.stderr.write(f"kairox serve: cannot write the audit to the store: {exc}\n")
        if self.telemetry is not None:
            self.telemetry.call(record, server=server)

    def policy(
        self, ctx: ServerRequestContext[Any, Any], base: PolicySettings, rules: dict[str, RulesConfig]
    ) -> PolicyEngine | None:
        """The gate of this call's user: the policy's rules, then ``[gateway.rules]`` of the user and their groups
        (deny beats ask beats allow, whoever wrote them). A rule Kairox cannot read refuses the user's calls."""
        user, groups = user_of(ctx), getattr(ctx.request, "scope", {}).get(GROUPS_KEY, ())
        who = [w for w in ([] if user.startswith("@") else [user]) + [f"@{g}" for g in groups] if w in rules]
        mine = [
            Rule(action=action, pattern=p, layer=f"gateway.rules.{w}")
            for w in who
            for action in ("deny", "ask", "allow")
            for p in getattr(rules[w], action)
        ]
        for rule in mine:
            try:
                parse_rule(rule)
            except ValueError as exc:  # fail closed: every call of this user is refused, saying why
                mine = [Rule(action="deny", pattern="*", layer=f"{rule.layer}, which Kairox cannot read: {exc}")]
                break
        return PolicyEngine(dataclasses.replace(base, rules=(*base.rules, *mine))) if mine else None

    # --- a call by id runs at most once -------------------------------------------------------------------

    async def once(
        self, user: str, key: str, run: Callable[[], Awaitable[types.CallToolResult | types.InputRequiredResult]]
    ) -> types.CallToolResult | types.InputRequiredResult:
        prior = await self.run(self.store.claim_call, user, key, self.replica)
        if prior is not None:
            if prior.result is not None:
                return types.CallToolResult.model_validate_json(prior.result)
            when = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(prior.started))
            return types.CallToolResult(
                content=[
                    types.TextContent(
                        text=f"call {key!r} was started on replica {prior.replica} at {when} and did not report back "
                        "(the replica stopped, or the call still runs); it is not run a second time. It may or may "
                        "not have taken effect: check, then call again with a new call id."
                    )
                ],
                is_error=True,
            )
        token = call_key.set(key)
        try:
            result = await run()
        except MCPError:  # refused before anything ran (no such tool): a retry may run it
            await self.run(self.store.release_call, user, key)
            raise
        finally:
            call_key.reset(token)
        if isinstance(result, types.InputRequiredResult):  # nothing ran: the retry with the answer runs it
            await self.run(self.store.release_call, user, key)
        else:
            await self.run(self.store.finish_call, user, key, result.model_dump_json(by_alias=True, exclude_none=True))
        return result

    # --- approval questions answered on any replica -------------------------------------------------------

    async def elicit(
        self, ctx: ServerRequestContext[Any, Any], tool: str, message: str, schema: dict[str, Any]
    ) -> types.ElicitResult:
        """Ask over the call's own stream under an id of the store's; the answer arrives here or in the store."""
        session = Headers(scope=ctx.request.scope).get(MCP_SESSION_ID_HEADER) if ctx.request is not None else None
        if session is None:
            return await ctx.session.elicit_form(message, schema, related_request_id=ctx.request_id)  # type: ignore[arg-type]
        ask = f"{ASK_PREFIX}{uuid.uuid4().hex}"
        await self.run(self.store.open_ask, ask, session=session, user=user_of(ctx), tool=tool, replica=self.replica)
        params = types.ElicitRequestFormParams(message=message, requested_schema=schema).model_dump(  # type: ignore[arg-type]
            by_alias=True, mode="json", exclude_none=True
        )
        outcome: list[Any] = []
        self.waiting.add(ask)
        try:
            async with anyio.create_task_group() as tasks:

                async def here() -> None:
                    # the request-scoped channel, under our own id (the SDK's public elicit_form mints its own)
                    try:
                        outcome.append(
                            await ctx.session._request_outbound.send_raw_request(
                                "elicitation/create", params, {"request_id": ask}
                            )
                        )
                    except Exception as exc:  # the client went away or answered with an error
                        outcome.append(exc)
                    tasks.cancel_scope.cancel()

                async def stored() -> None:
                    while (found := await self.run(self.store.ask_answer, ask)) is None:
                        await anyio.sleep(0.1)
                    outcome.append(found)
                    tasks.cancel_scope.cancel()

                tasks.start_soon(here)
                tasks.start_soon(stored)
        finally:
            self.waiting.discard(ask)
        answer = outcome[0]
        if isinstance(answer, Exception):
            raise answer
        if "error" in answer and "action" not in answer:
            raise RuntimeError(f"the client answered with an error: {answer['error'].get('message')}")
        return types.ElicitResult.model_validate(answer)

    # --- readiness -----------------------------------------------------------------------------------------

    async def ready(self, gateway: Any) -> tuple[bool, str]:
        if gateway.closing:
            return False, "stopping"
        if not await self.run(self.store.ping):
            return False, "the store does not answer"  # said to anyone: no names
        starting = gateway.context.starting()
        if starting:
            return False, f"{len(starting)} upstream servers starting"
        return True, "ready"


class TeamApp:
    """ASGI, in front of the gateway's app: health and readiness (no token), the person behind the token, and the
    2025-era sessions and approval answers that live in the store."""

    def __init__(self, app: ASGIApp, *, team: Team, gateway: Any, users: Users | None, max_body: int) -> None:
        self.app, self.team, self.gateway, self.users, self.max_body = app, team, gateway, users, max_body

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        if scope["path"] in (HEALTH, READY):
            ok, why = (True, "ok") if scope["path"] == HEALTH else await self.team.ready(self.gateway)
            await PlainTextResponse(why, status_code=200 if ok else 503)(scope, receive, send)
            return
        headers = Headers(scope=scope)
        if self.users is not None:
            given = headers.get("authorization", "")
            found = await self.users.user_of(given[7:]) if given[:7].lower() == "bearer " else None
            if found is None:
                self.users.refused += 1
                if self.team.telemetry is not None:
                    self.team.telemetry.refused()
                await PlainTextResponse(
                    "kairox serve needs `Authorization: Bearer <token>` with a token of a known user",
                    status_code=401,
                    headers={"WWW-Authenticate": 'Bearer realm="kairox"'},
                )(scope, receive, send)
                return
            scope[USER_KEY], scope[GROUPS_KEY] = found
        if scope["path"].startswith(LOGINS):
            await self._login(scope, receive, send)
            return
        user = scope.get(USER_KEY) or _local_user()
        session = headers.get(MCP_SESSION_ID_HEADER)
        body: bytes | None = None
        if scope["method"] == "POST" and int(headers.get("content-length") or 0) <= self.max_body:
            body, receive = await _buffered(receive, self.max_body)
        message = _json(body)
        if session is not None:
            if (
                isinstance(message, dict)
                and str(message.get("id", "")).startswith(ASK_PREFIX)
                and "method" not in message
            ):
                answer = message.get("result", {"error": message.get("error")})
                stored = await self.team.run(
                    self.team.store.answer_ask,
                    message["id"],
                    session=session,
                    user=user,
                    answer=answer,
                    replica=self.team.replica,
                )
                if not stored or message["id"] not in self.team.waiting:
                    await Response(status_code=202 if stored else 404)(scope, receive, send)
                    return  # the call waiting for it is on another replica: it reads the answer in the store
            if not await self._take_up(session, user):
                await Response(
                    '{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Session not found"}}',
                    status_code=404,
                    media_type="application/json",
                )(scope, receive, send)
                return
            if scope["method"] == "DELETE":
                await self.team.run(self.team.store.end_session, session)
        limit = self.gateway.context.resolved.config.gateway.calls_per_minute
        if limit and isinstance(message, dict) and message.get("method") == "tools/call":
            minute = int(time.time()) // 60 * 60
            if await self.team.run(self.team.store.count_call, user, minute) > limit:
                wait = str(minute + 60 - int(time.time()))
                await PlainTextResponse(
                    f"{user} made {limit} tool calls this minute, as many as this gateway allows; retry in {wait} s",
                    status_code=429,
                    headers={"Retry-After": wait},
                )(scope, receive, send)
                return
        if session is None and isinstance(message, dict) and message.get("method") == "initialize":
            send = self._recording(send, user, message.get("params") or {})
        await self.app(scope, receive, send)

    async def _login(self, scope: Scope, receive: Receive, send: Send) -> None:
        """``GET /logins/NAME``: the URL of server NAME, to log in at; ``PUT``: the person's login there (tokens and
        client registration), kept encrypted, for their own calls of that server only."""
        from mcp.shared.auth import OAuthClientInformationFull, OAuthToken

        name, user, team = scope["path"][len(LOGINS) :], scope.get(USER_KEY), self.team
        config = self.gateway.context.mcp_config(name)
        if not isinstance(user, str) or config is None or not config.url or config.oauth_grant != "authorization_code":
            answer: Response = PlainTextResponse(f"no server {name!r} here takes a person's own login", 404)
        elif scope["method"] == "GET":
            answer = JSONResponse({"url": expand_vars(config.url, os.environ).value})
        elif team.login_key is None:
            answer = PlainTextResponse(f"the gateway keeps no logins until its operator sets {KEY_VARIABLES[0]}", 503)
        else:
            try:
                data = json.loads((await _buffered(receive, self.max_body))[0] or b"")
                login = {
                    "tokens": OAuthToken.model_validate(data["tokens"]).model_dump(mode="json", exclude_none=True),
                    "client_info": OAuthClientInformationFull.model_validate(data["client_info"]).model_dump(
                        mode="json", exclude_none=True
                    ),
                }
            except (ValueError, KeyError, TypeError) as exc:
                answer = PlainTextResponse(f"expected {{tokens, client_info}} as `kairox mcp login` sends: {exc}", 400)
            else:
                value = team.login_key.encrypt(json.dumps(login).encode()).decode()
                await team.run(team.store.save_login, user, name, value)
                answer = Response(status_code=204)
        await answer(scope, receive, send)

    def _recording(self, send: Send, user: str, params: dict[str, Any]) -> Send:
        """Record the session an initialize opens before its answer leaves: the next request may go elsewhere."""

        async def recorded(message: Message) -> None:
            if message["type"] == "http.response.start" and message["status"] == 200:
                session = Headers(raw=message.get("headers", [])).get(MCP_SESSION_ID_HEADER)
                if session is not None:
                    await self.team.run(self.team.store.save_session, session, user, params)
            await send(message)

        return recorded

    async def _take_up(self, session: str, user: str) -> bool:
        """True when this replica serves ``session`` for ``user``, taking it up from the store when it must."""
        manager = self.gateway.server._session_manager  # the SDK keeps its sessions there; we add ours beside them
        found = await self.team.run(self.team.store.load_session, session)
        if found is None or found[0] != user:
            return False  # ended (on any replica), never recorded, or another person's: as if it did not exist
        async with manager._session_creation_lock:
            if session not in manager._server_instances and manager._task_group is not None:
                await manager._task_group.start(_serve_restored, manager, session, found[1])
        return True


async def _serve_restored(
    manager: Any, session: str, params: dict[str, Any], *, task_status: anyio.abc.TaskStatus[None]
) -> None:
    """Serve a session opened on another replica, born initialized with the client's recorded handshake (as the
    SDK's session manager serves its own, driven through its connection kernel)."""
    from mcp.server.connection import Connection
    from mcp.server.runner import serve_connection

    transport = StreamableHTTPServerTransport(
        mcp_session_id=session,
        is_json_response_enabled=manager.json_response,
        event_store=manager.event_store,
        security_settings=manager.security_settings,
        retry_interval=manager.retry_interval,
        idle_timeout=manager.session_idle_timeout,
    )
    manager._server_instances[session] = transport
    try:
        async with transport.connect() as (read, write):
            dispatcher: JSONRPCDispatcher[Any] = JSONRPCDispatcher(
                read, write, inline_methods=frozenset({"initialize"})
            )
            asked = params.get("protocolVersion")
            version = asked if asked in HANDSHAKE_PROTOCOL_VERSIONS else LATEST_HANDSHAKE_VERSION
            connection = Connection.for_loop(dispatcher, session_id=session, protocol_version_hint=version)
            connection.client_params = types.InitializeRequestParams.model_validate(
                {**params, "protocolVersion": version}
            )
            connection.initialized.set()
            task_status.started()
            with transport.idle_scope or anyio.CancelScope():
                await serve_connection(
                    manager.app, dispatcher, connection=connection, lifespan_state=manager._lifespan_state
                )
    finally:
        await manager._discard_session(session, transport)


async def _buffered(receive: Receive, limit: int) -> tuple[bytes | None, Receive]:
    """Read a request's body (up to ``limit``; a longer one is passed on whole, unread) and a receive that
    replays what was read."""
    chunks: list[Message] = []
    size, more = 0, True
    while more and size <= limit:
        message = await receive()
        chunks.append(message)
        if message["type"] != "http.request":
            break
        size += len(message.get("body", b""))
        more = message.get("more_body", False)
    body = b"".join(m.get("body", b"") for m in chunks) if not more else None

    async def replay() -> Message:
        return chunks.pop(0) if chunks else await receive()

    return body, replay


def _json(body: bytes | None) -> Any:
    if not body:
        return None
    try:
        return json.loads(body)
    except ValueError:
        return None
