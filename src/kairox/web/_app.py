"""``create_app``: the Starlette application of ``kairox gui``: the built page, the JSON API and the event stream
(``docs/web-api.md``). Each endpoint calls the runtime's operations; the guard in front checks Host, Origin and
the token of every request."""

import contextlib
import json
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import anyio
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse, RedirectResponse, Response, StreamingResponse
from starlette.routing import BaseRoute, Mount, Route
from starlette.staticfiles import StaticFiles

from kairox.config import Layer
from kairox.errors import KairoxError
from kairox.web._backend import ApprovalNotFoundError, TurnRunningError, WebBackend, answer_from_json
from kairox.web._guard import COOKIE, RequestGuard
from kairox.web._hub import WebEvent, status_data
from kairox.web._options import WebOptions
from kairox.web._views import (
    KINDS,
    catalog_json,
    entry_json,
    history_json,
    plugins_json,
    rewind_json,
    server_json,
    skills_json,
    state_json,
)

PING_SEC = 15.0
NOT_BUILT = (
    "The Kairox GUI's page is not built. Build it from the repository with `make` (it runs the Vite build in ui/ "
    "into src/kairox/web/static), or install a built wheel. The JSON API under /api works without it."
)


class ApiError(Exception):
    def __init__(self, status: int, message: str, **extra: Any) -> None:
        super().__init__(message)
        self.status, self.message, self.extra = status, message, extra


Handler = Callable[[Request], Awaitable[Response]]


def _json(data: Any, status: int = 200, *, backend: WebBackend) -> JSONResponse:
    return JSONResponse(backend.redactor.scrub(data), status_code=status)


def _errors(backend: WebBackend, handler: Handler) -> Handler:
    """Kairox's errors as JSON: what happened and what to do, with the status the contract gives."""

    async def wrapped(request: Request) -> Response:
        try:
            return await handler(request)
        except ApiError as exc:
            return _json({"error": exc.message, **exc.extra}, exc.status, backend=backend)
        except ApprovalNotFoundError as exc:
            return _json({"error": str(exc)}, 404, backend=backend)
        except TurnRunningError as exc:
            return _json({"error": str(exc)}, 409, backend=backend)
        except KairoxError as exc:
            from kairox.runtime import ConfigWriteDeniedError

            if isinstance(exc, ConfigWriteDeniedError):
                return _json({"error": str(exc), "denied": True, "file": str(exc.file)}, 403, backend=backend)
            return _json({"error": str(exc)}, 400, backend=backend)
        except ValueError as exc:
            return _json({"error": str(exc)}, 400, backend=backend)

    return wrapped


async def _body(request: Request) -> dict[str, Any]:
    raw = await request.body()
    if not raw.strip():
        return {}
    try:
        body = json.loads(raw)
    except ValueError as exc:
        raise ApiError(400, f"the body is not JSON: {exc}") from None
    if not isinstance(body, dict):
        raise ApiError(400, "the body must be a JSON object")
    return body


def _layer(body: dict[str, Any]) -> Layer | None:
    value = body.get("layer")
    if value is None:
        return None
    if value not in ("user", "project", "local"):
        raise ApiError(400, f"layer must be user, project or local, not {value!r}")
    return Layer(value)


def _toggle(request: Request) -> str:
    action = str(request.path_params["action"])
    if action not in ("enable", "disable"):
        raise ApiError(404, f"no action {action!r}; use enable or disable")
    return action


def create_app(options: WebOptions | None = None) -> Starlette:
    """The GUI's application. Its lifespan starts the session (or the extension context) and stops it."""
    options = options or WebOptions()
    backend = WebBackend(options)
    backend.redactor.add(options.token)

    def ok(data: Any, status: int = 200) -> JSONResponse:
        return _json(data, status, backend=backend)

    # --- the page -------------------------------------------------------------------------------------------

    async def page(request: Request) -> Response:
        # no page sends its address (and so the token the first one held) to another site
        quiet = {"Cache-Control": "no-store", "Referrer-Policy": "no-referrer"}
        token = request.query_params.get("token")
        if token:
            # the guard checked it: keep it in a cookie the page's own requests carry, and take it out of the
            # address (history, bookmarks, a screen shared) by sending the browser to the same page without it
            rest = urlencode([(k, v) for k, v in request.query_params.multi_items() if k != "token"])
            response: Response = RedirectResponse(
                request.url.path + (f"?{rest}" if rest else ""), status_code=303, headers=quiet
            )
            response.set_cookie(COOKIE, token, httponly=True, samesite="strict", path="/")
            return response
        index = options.static_dir / "index.html"
        if not index.is_file():
            return JSONResponse({"error": NOT_BUILT}, status_code=503, headers=quiet)
        return FileResponse(index, headers=quiet)

    async def api_missing(request: Request) -> Response:
        return ok({"error": f"no endpoint {request.method} {request.url.path}; see docs/web-api.md"}, 404)

    # --- reads ----------------------------------------------------------------------------------------------

    async def get_state(request: Request) -> Response:
        return ok(state_json(backend))

    async def get_servers(request: Request) -> Response:
        return ok({"servers": backend.server_views().to_json()})

    async def get_doctor(request: Request) -> Response:
        from kairox.runtime import doctor_report

        context = await backend.ready_context()
        # the report runs each program's --version: off the loop, so the page's other requests go on
        report = await anyio.to_thread.run_sync(doctor_report, context)
        return ok(backend.redactor.scrub(report))

    def _server(kind: str, name: str) -> dict[str, Any]:
        server = server_json(backend, kind, name) if kind in KINDS else None
        if server is None:
            raise ApiError(404, f"no {kind} server named {name!r}; GET /api/servers lists them")
        return server

    async def get_server(request: Request) -> Response:
        return ok(_server(request.path_params["kind"], request.path_params["name"]))

    async def _catalog() -> Any:
        from kairox.catalog import catalog_sources, load_catalog

        resolved = backend.resolved

        def load() -> Any:
            sources, held = catalog_sources(resolved)
            return load_catalog(sources, held=held)

        return await anyio.to_thread.run_sync(load)

    async def get_catalog(request: Request) -> Response:
        catalog = await _catalog()
        query, tag = request.query_params.get("q", ""), request.query_params.get("tag", "")
        data = await anyio.to_thread.run_sync(lambda: catalog_json(catalog, backend.resolved, query, tag))
        return ok(data)

    async def _entry(name: str) -> Any:
        catalog = await _catalog()
        found = catalog.find(name)
        if not found:
            close = catalog.suggestion(name)
            raise ApiError(404, f"no catalog entry {name!r}" + (f"; did you mean {close!r}?" if close else ""))
        if len(found) > 1:
            raise ApiError(
                400, f"{name!r} names {len(found)} entries ({', '.join(e.id for e in found)}); give the whole id"
            )
        return found[0]

    async def get_entry(request: Request) -> Response:
        entry = await _entry(request.path_params["name"])
        return ok(await anyio.to_thread.run_sync(lambda: entry_json(entry, backend.resolved, detail=True)))

    async def get_skills(request: Request) -> Response:
        context = await backend.ready_context()
        return ok({"skills": skills_json(context)})

    async def get_agents(request: Request) -> Response:
        context = await backend.ready_context()
        return ok({"agents": [agent.to_json() for agent in context.agents.agents.values()]})

    async def agent_action(request: Request) -> Response:
        from kairox.runtime import toggle_agent

        name, action = request.path_params["name"], _toggle(request)
        context = await backend.ready_context()
        if context.agents.get(name) is None:
            raise ApiError(404, f"no agent named {name!r}; GET /api/agents lists them")
        return _written(toggle_agent(context, name, action == "enable"))  # the user layer: nothing to ask

    async def get_tool_search(request: Request) -> Response:
        """The visible tools best matching ``q``, ranked and explained as ``kairox tools search`` and the model's
        ``tool_search`` rank them (``limit``: 1 to 50, 10 by default)."""
        from kairox.registry import ToolIndex

        query = request.query_params.get("q", "").strip()
        if not query:
            raise ApiError(400, "GET /api/tools/search needs ?q=WORDS: what the tool should do")
        raw = request.query_params.get("limit", "10")
        if not raw.isdigit() or not 1 <= int(raw) <= 50:
            raise ApiError(400, f"limit={raw!r}: expected a whole number from 1 to 50")
        context = await backend.ready_context()
        matches = ToolIndex(context.tools()).search(query, limit=int(raw))
        return ok(backend.redactor.scrub({"query": query, "matches": [m.to_json() for m in matches]}))

    async def get_plugins(request: Request) -> Response:
        # read from the files each time: a toggle applies from the next session, and the list shows it already
        from kairox.config import resolve_config
        from kairox.runtime import load_plugins

        resolved = resolve_config(options.workspace, cli_overrides=options.overrides, profile=options.profile)
        stage = await anyio.to_thread.run_sync(lambda: load_plugins(resolved))
        return ok(plugins_json(stage.plugins, resolved))

    async def get_plugin_market(request: Request) -> Response:
        from kairox.runtime import market_listing

        await anyio.to_thread.run_sync(
            backend.refresh
        )  # a marketplace added meanwhile (`kairox plugins marketplace add`)
        listing = await anyio.to_thread.run_sync(lambda: market_listing(backend.resolved))
        query = request.query_params.get("q", "").strip().lower()
        plugins = [
            p
            for p in listing.plugins
            if not query or query in f"{p.name} {p.description or ''} {p.category or ''} {' '.join(p.tags)}".lower()
        ]
        return ok({"plugins": [p.to_json() for p in plugins], "marketplaces": listing.marketplaces})

    async def get_market_plugin(request: Request) -> Response:
        from kairox.plugins import MarketplaceError
        from kairox.runtime import inspect_market_plugin

        market, name = request.path_params["market"], request.path_params["name"]
        try:
            return ok(await anyio.to_thread.run_sync(lambda: inspect_market_plugin(backend.resolved, market, name)))
        except MarketplaceError as exc:
            raise ApiError(404, str(exc) + (f" ({exc.hint})" if exc.hint else "")) from None

    async def post_market_install(request: Request) -> Response:
        from kairox.plugins import MarketplaceError
        from kairox.runtime import marketplaces_of
        from kairox.web._install import start_plugin_install

        market, name = request.path_params["market"], request.path_params["name"]
        try:  # an unknown plugin is a 404 now, not a failed job later
            await anyio.to_thread.run_sync(lambda: marketplaces_of(backend.resolved).find(name, market))
        except MarketplaceError as exc:
            raise ApiError(404, str(exc) + (f" ({exc.hint})" if exc.hint else "")) from None
        return ok({"job": start_plugin_install(backend, market, name)}, 202)

    async def get_trace(request: Request) -> Response:
        try:
            limit = int(request.query_params.get("limit", "500"))
        except ValueError:
            raise ApiError(400, "limit must be a whole number") from None
        return ok({"events": backend.hub.recent(limit)})

    # --- writes ---------------------------------------------------------------------------------------------

    def _server_file(body: dict[str, Any], section: str, name: str) -> Path:
        """The body's ``layer`` file, else the file that declares the server."""
        from kairox.runtime import server_layer_file

        layer = _layer(body)
        if layer is not None:
            return backend.resolved.layer_file(layer)
        return server_layer_file(backend.resolved, section, name)

    async def _authorize(file: Path, change: str) -> None:
        from kairox.runtime import authorize_config_write

        await authorize_config_write(backend.resolved, file, change, approver=backend.approver)

    def _written(file: Path | None, **extra: Any) -> JSONResponse:
        if file is not None:
            backend.refresh()
            backend.hub.publish("config.changed", {"file": str(file)})
        return ok({"ok": True, "file": str(file) if file is not None else None, **extra})

    async def post_trust(request: Request) -> Response:
        from kairox.config import trust_workspace

        options = backend.options  # what `kairox trust` records, for the configuration this GUI runs with
        trust_workspace(backend.resolved.workspace, cli_overrides=options.overrides, profile=options.profile)
        await backend.restart()
        return ok(state_json(backend))

    async def server_action(request: Request) -> Response:
        from kairox import runtime

        kind, name = request.path_params["kind"], request.path_params["name"]
        _server(kind, name)
        action = request.path_params["action"]
        if action not in ("restart", "enable", "disable"):
            raise ApiError(404, f"no server action {action!r}; use restart, enable or disable")
        body = await _body(request)
        context = await backend.ready_context()
        if action == "restart":
            if kind == "mcp":
                await runtime.restart_mcp_server(context, name)
            elif kind == "lsp":
                await runtime.restart_lsp_server(context, name)
            else:
                raise ApiError(
                    409,
                    f"debug adapter {name!r} starts with each debug session (dap.launch); there is nothing to restart",
                )
            return _written(None, server=server_json(backend, kind, name))
        enabled = action == "enable"
        section = KINDS[kind]
        file = _server_file(body, section, name)
        await _authorize(file, f"{section}.{name}.enabled = {str(enabled).lower()}")
        if kind == "mcp":
            file = await runtime.set_mcp_server_enabled(context, name, enabled, file=file)
        elif kind == "lsp":
            file = await runtime.set_lsp_server_enabled(context, name, enabled, file=file)
        else:
            file = runtime.set_dap_server_enabled(context, name, enabled, file=file)
        answer = _written(file, server=server_json(backend, kind, name))
        shown = server_json(backend, kind, name)
        if shown is not None:  # the dot follows the configuration too (a stopped server that is off is "disabled")
            backend.hub.publish("server.status", status_data(shown))
        return answer

    async def tool_action(request: Request) -> Response:
        from kairox import runtime

        name, tool, action = request.path_params["name"], request.path_params["tool"], _toggle(request)
        server = _server("mcp", name)
        if tool not in {t["name"] for t in server["tools"]}:
            raise ApiError(404, f"server {name!r} offers no tool {tool!r}")
        body = await _body(request)
        context = await backend.ready_context()
        file = _server_file(body, "mcp_servers", name)
        await _authorize(file, f"mcp_servers.{name}.disabled_tools: {tool} {action}d")
        file = await runtime.set_mcp_tool_enabled(context, name, tool, action == "enable", file=file)
        return _written(file, server=server_json(backend, "mcp", name))

    async def skill_action(request: Request) -> Response:
        from kairox.runtime import skill_file, toggle_skill

        name, action = request.path_params["name"], _toggle(request)
        context = await backend.ready_context()
        if name not in {e.skill.qualified_name for e in context.skills.entries(include_shadowed=True)}:
            raise ApiError(404, f"no skill named {name!r}; GET /api/skills lists them")
        layer = _layer(await _body(request)) or Layer.USER
        await _authorize(
            skill_file(context, layer), f"skills.entries.{name}.enabled = {str(action == 'enable').lower()}"
        )
        file = toggle_skill(context, name, action == "enable", layer=layer)
        return _written(file)

    async def plugin_action(request: Request) -> Response:
        from kairox.runtime import toggle_plugin

        key, action = request.path_params["key"], _toggle(request)
        if "kind" in request.path_params:
            kind, item = request.path_params["kind"], request.path_params["item"]
            key = f"{key}/{kind}:{item}"
        context = await backend.ready_context()
        plugin_name = key.partition("/")[0]
        if plugin_name not in {p.name for p in context.plugins.plugins}:
            raise ApiError(404, f"no plugin named {plugin_name!r}; GET /api/plugins lists them")
        layer = _layer(await _body(request)) or Layer.USER
        await _authorize(backend.resolved.layer_file(layer), f"plugins.entries.{plugin_name}: {key} {action}d")
        file = toggle_plugin(context, key, action == "enable", layer=layer)
        return _written(file, applies="from the next session")

    async def plugin_path(request: Request) -> Response:
        from kairox.runtime import set_plugin_folder

        name = request.path_params["key"]
        body = await _body(request)
        path = body.get("path")
        if path is not None and (not isinstance(path, str) or not path.strip()):
            raise ApiError(400, 'the body needs {"path": "/a/folder"} (or null to load the plugin from its own folder)')
        context = await backend.ready_context()
        if name not in {p.name for p in context.plugins.plugins}:
            raise ApiError(404, f"no plugin named {name!r}; GET /api/plugins lists them")
        layer = _layer(body) or Layer.USER
        await _authorize(backend.resolved.layer_file(layer), f"plugins.entries.{name}.path = {path!r}")
        file = set_plugin_folder(context, name, path, layer=layer)
        return _written(file, applies="from the next session")

    async def post_install(request: Request) -> Response:
        from kairox.web._install import start_install

        entry = await _entry(request.path_params["name"])
        body = await _body(request)
        variables = body.get("variables") or {}
        if not isinstance(variables, dict) or not all(
            isinstance(k, str) and isinstance(v, str) for k, v in variables.items()
        ):
            raise ApiError(400, "variables must be an object of names to text values")
        layer = _layer(body) or Layer.USER
        job = start_install(backend, entry, variables={k: v for k, v in variables.items() if v}, layer=layer)
        return ok({"job": job}, 202)

    async def post_message(request: Request) -> Response:
        body = await _body(request)
        text = body.get("text")
        if not isinstance(text, str) or not text.strip():
            raise ApiError(400, 'the body needs {"text": "..."} with the prompt')
        return ok({"turn": backend.submit(text)}, 202)

    async def post_compact(request: Request) -> Response:
        body = await _body(request)
        instructions = body.get("instructions")
        if instructions is not None and not isinstance(instructions, str):
            raise ApiError(400, 'instructions must be text: {"instructions": "what the summary should keep"}')
        backend.compact(instructions.strip() or None if instructions else None)
        return ok({"ok": True}, 202)

    async def rewind(request: Request) -> Response:
        """GET: what rewinding to before ``?turn=N`` (default: the latest) would do; POST ``{"turn": N,
        "conversation": bool}``: do it."""
        body = await _body(request) if request.method == "POST" else dict(request.query_params)
        turn = body.get("turn")
        if turn is not None and not str(turn).isdigit():
            raise ApiError(400, "turn must be a turn number")
        if request.method == "POST":
            backend.rewind(None if turn is None else int(turn), conversation=body.get("conversation") is True)
            return ok({"ok": True}, 202)
        if backend.session is None:
            raise ApiError(409, "no session to rewind")
        return ok(rewind_json(backend.session.rewind_plan(None if turn is None else int(turn))))

    async def get_history(request: Request) -> Response:
        return ok(history_json(backend))

    async def post_cancel(request: Request) -> Response:
        return ok({"ok": True, "cancelled": backend.cancel()})

    async def post_approval(request: Request) -> Response:
        answer = answer_from_json(await _body(request))
        backend.approver.answer(request.path_params["id"], answer)
        return ok({"ok": True})

    # --- events ---------------------------------------------------------------------------------------------

    async def events(request: Request) -> Response:
        hub = backend.hub
        queue = hub.subscribe()
        since = request.headers.get("last-event-id")

        async def stream() -> AsyncIterator[str]:
            try:
                yield "retry: 2000\n\n"
                replayed: set[str] = set()
                last = 0
                if since is not None and since.isdigit():  # a reconnect: what it missed, if still kept
                    for kept in list(hub.sent):
                        if kept.seq > int(since):
                            if kept.type == "approval.request":
                                replayed.add(str(kept.data.get("id")))
                            last = kept.seq
                            yield kept.sse()
                for pending in list(backend.approver.pending.values()):  # a dialog still waiting for an answer
                    if pending.id not in replayed:
                        yield (
                            "event: approval.request\ndata: "
                            f"{json.dumps(backend.redactor.scrub(pending.to_json()))}\n\n"
                        )
                while hub.subscribed(queue):
                    item: WebEvent | None = None
                    with anyio.move_on_after(PING_SEC):
                        item = await queue.get()
                    if item is None:
                        yield ": ping\n\n"
                    elif item.seq > last:  # not replayed already
                        yield item.sse()
            finally:
                hub.unsubscribe(queue)

        return StreamingResponse(
            stream(), media_type="text/event-stream", headers={"Cache-Control": "no-store", "X-Accel-Buffering": "no"}
        )

    def api(path: str, handler: Handler, methods: list[str]) -> Route:
        return Route(path, _errors(backend, handler), methods=methods)

    routes: list[BaseRoute] = [
        api("/api/state", get_state, ["GET"]),
        api("/api/servers", get_servers, ["GET"]),
        api("/api/doctor", get_doctor, ["GET"]),
        api("/api/servers/{kind}/{name}", get_server, ["GET"]),
        api("/api/servers/{kind}/{name}/{action:str}", server_action, ["POST"]),
        api("/api/servers/mcp/{name}/tools/{tool}/{action}", tool_action, ["POST"]),
        api("/api/catalog", get_catalog, ["GET"]),
        api("/api/catalog/{name:path}/install", post_install, ["POST"]),
        api("/api/catalog/{name:path}", get_entry, ["GET"]),
        api("/api/tools/search", get_tool_search, ["GET"]),
        api("/api/skills", get_skills, ["GET"]),
        api("/api/skills/{name}/{action}", skill_action, ["POST"]),
        api("/api/agents", get_agents, ["GET"]),
        api("/api/agents/{name}/{action}", agent_action, ["POST"]),
        api("/api/plugins", get_plugins, ["GET"]),
        api("/api/plugins/marketplace", get_plugin_market, ["GET"]),
        api("/api/plugins/marketplace/{market}/{name}/install", post_market_install, ["POST"]),
        api("/api/plugins/marketplace/{market}/{name}", get_market_plugin, ["GET"]),
        api("/api/plugins/{key}/contributions/{kind}/{item}/{action}", plugin_action, ["POST"]),
        api("/api/plugins/{key}/path", plugin_path, ["POST"]),
        api("/api/plugins/{key}/{action}", plugin_action, ["POST"]),
        api("/api/trace", get_trace, ["GET"]),
        api("/api/trust", post_trust, ["POST"]),
        api("/api/session/messages", post_message, ["POST"]),
        api("/api/session/cancel", post_cancel, ["POST"]),
        api("/api/session/compact", post_compact, ["POST"]),
        api("/api/session/history", get_history, ["GET"]),
        api("/api/session/rewind", rewind, ["GET", "POST"]),
        api("/api/approvals/{id}", post_approval, ["POST"]),
        Route("/api/events", events, methods=["GET"]),
        Route("/api/{rest:path}", api_missing, methods=["GET", "POST", "PUT", "DELETE", "PATCH"]),
        Mount("/assets", app=StaticFiles(directory=options.static_dir / "assets", check_dir=False), name="assets"),
        Route("/{path:path}", page, methods=["GET"]),
    ]

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        async with backend:
            yield

    app = Starlette(routes=routes, lifespan=lifespan)
    app.state.backend = backend
    app.state.options = options
    # the guard wraps the whole application: nothing (not even a 404) answers an unchecked request
    app.add_middleware(RequestGuard, token=options.token, port=options.port)
    return app
