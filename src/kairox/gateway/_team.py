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
import socket
import sys
import time
import uuid
from collections.abc import Awaitable, Callable
from typing import Any

import anyio
import mcp_types as types
from mcp.server.context import ServerRequestContext
from mcp.server.streamable_http import MCP_SESSION_ID_HEADER, StreamableHTTPServerTransport
from mcp.shared.exceptions import MCPError
from mcp.shared.jsonrpc_dispatcher import JSONRPCDispatcher
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS, LATEST_HANDSHAKE_VERSION
from starlette.datastructures import Headers
from starlette.responses import PlainTextResponse, Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from kairox.gateway._audit import AuditRecord
from kairox.gateway._store import Store, StoreError
from kairox.gateway._telemetry import Telemetry
from kairox.gateway._users import GROUPS_KEY, USER_KEY, Users
from kairox.policy import PolicyEngine, Rule, Verdict
from kairox.registry import ToolCallDecided
from kairox.tools import TextContent, ToolResult, ToolSpec

CALL_ID_KEY = "kairox/call-id"
"""The ``_meta`` key of a tools/call that names the call: a retry with the same id runs it at most once."""
ASK_PREFIX = "kx-ask-"
"""The JSON-RPC id of every approval question the gateway sends over HTTP: its answer can land on any replica."""
HEALTH, READY = "/healthz", "/readyz"

call_key: contextvars.ContextVar[str | None] = contextvars.ContextVar("kairox_gateway_call_key", default=None)


def default_replica() -> str:
    return f"{socket.gethostname()}-{uuid.uuid4().hex[:6]}"


def user_of(ctx: ServerRequestContext[Any, Any]) -> str:
    """The person behind a request: the token's user over HTTP, the local account over stdio or a shared token."""
    scope = getattr(ctx.request, "scope", None)
    user = scope.get(USER_KEY) if isinstance(scope, dict) else None
    return user if isinstance(user, str) else _local_user()


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
        deny: dict[str, list[str]] | None = None,
    ) -> None:
        self.store = store
        self.deny = deny or {}
        """User or ``@group`` -> rules refusing their calls (``[gateway] deny``)."""
        self.replica = replica
        self.telemetry = telemetry
        self.problems: list[str] = []
        self.waiting: set[str] = set()
        """The questions this replica's calls wait on: their answers also reach the call here directly."""
        self.request_state_key = store.secret("request-state")

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

    def denied(
        self, ctx: ServerRequestContext[Any, Any], call_id: str, spec: ToolSpec, arguments: Any, base: Any
    ) -> tuple[ToolCallDecided, ToolResult] | None:
        """The refusal of this call by a rule of its user's or their groups', read as deny rules read (fail closed),
        as the gate would refuse it: its decision event and its result."""
        scope = getattr(ctx.request, "scope", {})
        who = [user_of(ctx), *(f"@{g}" for g in scope.get(GROUPS_KEY, ()))]
        rules = tuple(
            Rule(action="deny", pattern=p, layer=f"gateway.deny.{w}") for w in who for p in self.deny.get(w, ())
        )
        decision = PolicyEngine(dataclasses.replace(base, rules=rules)).decide(spec, arguments) if rules else None
        if decision is None or decision.verdict is Verdict.ALLOW or decision.rule is None:
            return None  # an ask of one of these rules (it could apply, Kairox cannot tell) refuses too: fail closed
        text = f"{spec.name} was not run: {decision.reason} ({decision.rule.layer})"
        result = ToolResult(content=(TextContent(text=text),), is_error=True, meta={"decision": decision.to_json()})
        rule, reason = decision.rule.pattern, decision.reason
        return ToolCallDecided(
            call_id=call_id, tool=spec.name, decision="deny", reason=reason, source="rule", rule=rule
        ), result

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
        elif isinstance(message, dict) and message.get("method") == "initialize":
            send = self._recording(send, user, message.get("params") or {})
        await self.app(scope, receive, send)

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
