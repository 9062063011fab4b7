"""``kairox mcp list | status | tools | call | add | remove | login | logout`` (M10)."""

import json
import os
import shutil
import sys
from typing import TYPE_CHECKING, Annotated, Any

import typer

from kairox.cli._common import (
    CliState,
    ExitCode,
    JsonOption,
    YesOption,
    err,
    errors_as_json,
    fail,
    out,
    out_json,
    parse_json_arg,
    state,
)
from kairox.cli._config_write import WriteYesOption, authorize_config_write, change_text, is_set

if TYPE_CHECKING:
    from kairox.config import ResolvedConfig
    from kairox.events import Event, EventSink
    from kairox.mcp import McpServerManager
    from kairox.mcp._sources import ConfiguredServer
    from kairox.runtime import ServerView

mcp_app = typer.Typer(
    help="MCP servers: list, start and inspect them, call their tools, add and remove them, log in.",
    no_args_is_help=True,
)


def _quiet_sdk_logs() -> None:
    """The SDK logs tracebacks of server faults; Kairox reports them as statuses and events instead."""
    import logging

    for name in ("mcp", "client", "httpx", "httpx2"):
        logging.getLogger(name).addHandler(logging.NullHandler())
        logging.getLogger(name).propagate = False


def load_plugins_resolved(cli: CliState) -> "ResolvedConfig":
    from kairox.runtime import load_plugins

    return load_plugins(cli.resolve()).resolved


def _configured(cli: CliState) -> "dict[str, ConfiguredServer]":
    from kairox.mcp._sources import configured_servers

    _quiet_sdk_logs()
    # plugins' servers join the configuration first, so `mcp list/status` show them with plugin provenance
    servers, diagnostics = configured_servers(load_plugins_resolved(cli))
    for diagnostic in diagnostics:
        err(str(diagnostic))
    return servers


class _Progress:
    """Start-up progress on a terminal: one line per server as it settles."""

    def __init__(self, sink: "EventSink", total: int) -> None:
        self.sink = sink
        self.total = total
        self.done = 0
        self.tty = sys.stderr.isatty()

    def emit(self, event: "Event") -> None:
        from kairox.mcp import McpServerFailed, McpServerReady

        self.sink.emit(event)
        if not self.tty:
            return
        if isinstance(event, McpServerReady):
            self.done += 1
            err(f"[{self.done}/{self.total}] {event.server}: ready, {event.tools} tools")
        elif isinstance(event, McpServerFailed) and not event.will_restart:
            self.done += 1
            err(f"[{self.done}/{self.total}] {event.server}: failed: {event.reason}")


def _manager(cli: CliState, servers: "dict[str, ConfiguredServer]") -> "McpServerManager":
    from kairox.mcp import ClientFeatures, McpServerManager
    from kairox.registry import registry_settings
    from kairox.runtime import held_text

    resolved = cli.resolve()
    startable = sum(1 for s in servers.values() if s.config.enabled and not s.pending_trust)
    if startable and sys.stderr.isatty():
        err(f"starting {startable} MCP server(s)…")
    return McpServerManager.from_configured(
        servers,
        workspace=resolved.workspace,
        home=resolved.home,
        events=_Progress(cli.events(), startable),
        features=ClientFeatures(roots=(resolved.workspace,)),
        wait_for_all=True,  # `kairox mcp ...` reports the servers themselves
        sandbox=registry_settings(resolved).sandbox,
        held_reason=lambda name: held_text(resolved, "mcp", name),
    )


def _pick(servers: "dict[str, ConfiguredServer]", name: str) -> "dict[str, ConfiguredServer]":
    from kairox._util._names import suggest

    if name not in servers:
        close = suggest(name, servers)
        hint = f"; did you mean {close!r}?" if close else "; `kairox mcp list` shows the configured servers"
        fail(f"no MCP server named {name!r}{hint}", ExitCode.NOT_FOUND)
    return {name: servers[name]}


@mcp_app.command("list")
def list_servers(ctx: typer.Context, as_json: JsonOption = False) -> None:
    """Configured servers with where they come from, whether enabled, and trust state (nothing is started)."""
    servers = _configured(state(ctx))
    if as_json:
        out_json({"servers": [s.to_json() for s in servers.values()]})
        return
    if not servers:
        out("no MCP servers configured (`kairox mcp add NAME -- COMMAND ARGS` adds one)")
        return
    from kairox.runtime import configured_views

    # what trust or `enabled` say about each server, in the words every front end uses
    views = {view.name: view for view in configured_views(load_plugins_resolved(state(ctx))) if view.kind == "mcp"}
    for s in servers.values():
        flags = [s.config.transport, "enabled" if s.config.enabled else "disabled"]
        view = views.get(s.name)
        if view is not None and view.status.waits_for_trust:
            flags.append(view.label)
        if s.config.required:
            flags.append("required")
        out(f"{s.name}  ({', '.join(flags)})  {s.where or s.layer}")


@mcp_app.command("status")
def status(
    ctx: typer.Context,
    names: Annotated[list[str] | None, typer.Argument(help="Only these servers.")] = None,
    as_json: JsonOption = False,
) -> None:
    """Start the servers, then report each one: status, transport, tools, error and stderr tail."""
    import anyio

    cli = state(ctx)
    servers = _configured(cli)
    for name in names or ():
        _pick(servers, name)
    if names:
        servers = {n: s for n, s in servers.items() if n in names}

    from kairox.sandbox import describe_confinement

    async def run() -> list["ServerView"]:
        from kairox.runtime import ServerBoard, manager_offered_counts

        board = ServerBoard(load_plugins_resolved(cli), starting=True)
        async with _manager(cli, servers) as manager:
            # counted as doctor and context count: what the model is offered, resource tools Kairox adds included
            board.sync_mcp(manager, await manager_offered_counts(manager))
        return [view for view in board.views("mcp") if view.name in servers]

    views = anyio.run(run)
    if as_json:
        out_json({"servers": [view.to_json(tool_list=False) for view in views]})
    else:
        for view in views:
            helpers = f", {view.resource_tools} of them the resource tools Kairox adds" if view.resource_tools else ""
            line = f"{view.name}: {view.label} ({view.transport}, {view.tool_count} tools{helpers})"
            out(line + (f": {view.reason}" if view.reason else ""))
            if view.confinement is not None:
                out(f"  {describe_confinement(view.confinement)}")
            if view.status == "failed" and view.stderr_tail:
                tail = "\n".join(view.stderr_tail.rstrip().splitlines()[-10:])
                out("  stderr:\n" + "\n".join("    " + row for row in tail.splitlines()))
    if any(view.status == "failed" for view in views):
        raise typer.Exit(int(ExitCode.FAILURE))


@mcp_app.command("tools")
def tools(
    ctx: typer.Context,
    server: Annotated[str | None, typer.Argument(help="Only this server.")] = None,
    as_json: JsonOption = False,
) -> None:
    """Start the servers and list the tools they give the model (mcp__<server>__<tool>)."""
    import anyio

    cli = state(ctx)
    servers = _configured(cli)
    if server is not None:
        servers = _pick(servers, server)

    async def run() -> tuple[list[dict[str, Any]], list[str]]:
        rows: list[dict[str, Any]] = []
        problems: list[str] = []
        async with _manager(cli, servers) as manager:
            for state_ in manager.states():
                if state_.error:
                    # a server trust holds back: its reason says so in the words of the server view
                    shown = "" if state_.status.waits_for_trust else f"{state_.status}: "
                    problems.append(f"{state_.name}: {shown}{state_.error}")
            for name, adapter in manager.adapters.items():
                for spec in await adapter.list_tools():
                    rows.append(
                        {
                            "name": spec.name,
                            "server": name,
                            "tool": spec.meta.get("mcp_tool") or spec.meta.get("resource_helper"),
                            "description": spec.description,
                            "input_schema": spec.input_schema,
                            "output_schema": spec.output_schema,
                            "annotations": {
                                "read_only": spec.annotations.read_only_hint,
                                "destructive": spec.annotations.destructive_hint,
                                "open_world": spec.annotations.open_world_hint,
                            },
                        }
                    )
                problems.extend(str(d) for d in adapter.diagnostics)
        return rows, problems

    rows, problems = anyio.run(run)
    for problem in problems:
        err(problem)
    if as_json:
        out_json({"tools": rows})
    else:
        for row in rows:
            summary = (row["description"] or "").strip().splitlines()
            out(f"{row['name']}  {summary[0] if summary else ''}")


@mcp_app.command("call")
def call(
    ctx: typer.Context,
    server: Annotated[str, typer.Argument(help="Server name.")],
    tool: Annotated[str, typer.Argument(help="The server's own tool name, e.g. echo.")],
    arguments: Annotated[
        str | None, typer.Argument(help='Arguments as a JSON object, e.g. \'{"message": "hi"}\'.')
    ] = None,
    yes: YesOption = False,
    as_json: JsonOption = False,
) -> None:
    """Start one server and call one of its tools through the gate, exactly as `kairox tools call` does.

    What the policy asks about is asked at the terminal; --yes approves it once (not writes to protected paths);
    without a terminal it is refused with how to allow it. Deny rules always deny.
    """
    import anyio

    from kairox._util._names import mcp_tool_name
    from kairox.cli._approver import command_line_approver
    from kairox.registry import build_registry
    from kairox.runtime import build_hooks, load_plugins
    from kairox.tools import ToolCall, ToolResult

    errors_as_json(as_json)
    cli = state(ctx)
    args = parse_json_arg(arguments)
    servers = _pick(_configured(cli), server)
    name = mcp_tool_name(server, tool)

    async def run() -> tuple[ToolResult, bool, str | None]:
        async with _manager(cli, servers) as manager:
            client = manager.clients[server]
            adapter = manager.adapters.get(server)
            if adapter is None:
                return (ToolResult.error(f"MCP server {server!r} is {client.status}: {client.reason}"), True, None)
            # the same gate as every other call: the session's hooks (config and plugins) run too
            stage = load_plugins(cli.resolve())
            approver = command_line_approver(yes)
            hooks = build_hooks(stage.resolved, stage.routing, approver=approver, events=cli.events())
            registry = await build_registry(stage.resolved, approver=approver, hooks=hooks, events=cli.events())
            await registry.add_provider(adapter)
            known = registry.get(name) is not None
            result = await registry.call(ToolCall(name=name, arguments=args, call_id="cli"))
            return result, known, client.reason if client.status.value == "failed" else None

    result, known, failure = anyio.run(run)
    if failure is not None:
        fail(f"MCP server {server!r} failed to start: {failure}", ExitCode.FAILURE)
    if as_json:
        from kairox.cli._tools_cmds import result_json

        out_json(result_json(result))
    elif result.is_error:
        err(result.text_content())
    else:
        out(result.text_content() or "(no text content)")
    if not known:
        raise typer.Exit(int(ExitCode.NOT_FOUND))
    if "decision" in result.meta:
        raise typer.Exit(int(ExitCode.DENIED))
    if result.is_error:
        raise typer.Exit(int(ExitCode.TOOL_ERROR))


def _pairs(items: list[str] | None, separator: str, what: str) -> dict[str, str]:
    pairs: dict[str, str] = {}
    for item in items or ():
        key, found, value = item.partition(separator)
        if not found or not key.strip():
            fail(f"{what} {item!r} is not KEY{separator}VALUE", ExitCode.USAGE)
        pairs[key.strip()] = value.strip() if separator == ":" else value
    return pairs


@mcp_app.command("add", context_settings={"allow_extra_args": True, "ignore_unknown_options": True})
def add(
    ctx: typer.Context,
    name: Annotated[str, typer.Argument(help="Server name (used in tool names: mcp__<name>__<tool>).")],
    command: Annotated[
        list[str] | None, typer.Argument(help="After --: the command and its arguments (stdio).")
    ] = None,
    transport: Annotated[
        str, typer.Option("--transport", "-t", help="stdio, sse or http (streamable HTTP).")
    ] = "stdio",
    url: Annotated[str | None, typer.Option("--url", help="Endpoint of an sse or http server.")] = None,
    env: Annotated[
        list[str] | None,
        typer.Option("--env", "-e", metavar="KEY=VALUE", help="K=V environment for a stdio server (repeatable)."),
    ] = None,
    header: Annotated[
        list[str] | None,
        typer.Option("--header", "-H", metavar="KEY:VALUE", help="K:V header for a remote server (repeatable)."),
    ] = None,
    layer: Annotated[str, typer.Option("--layer", help="user, project or local.")] = "user",
    yes: WriteYesOption = False,
) -> None:
    """Add a server to a configuration file, keeping its comments: kairox mcp add NAME -- CMD ARGS. In an
    untrusted workspace a project or local file is written only when you say so (y/N at a terminal, or --yes)."""
    import re

    from pydantic import ValidationError

    from kairox.config import Layer, McpServerConfig, join_key, set_value, write_own

    kinds = {
        "stdio": "stdio",
        "sse": "sse",
        "http": "streamable_http",
        "streamable_http": "streamable_http",
        "streamable-http": "streamable_http",
    }
    if not re.fullmatch(r"[A-Za-z0-9_-]+", name):
        # a dot would nest the table (mcp_servers.a.b), and the name is part of every tool name
        fail(
            f"MCP server name {name!r} may hold only letters, digits, '_' and '-' (it becomes part of tool names)",
            ExitCode.USAGE,
        )
    if transport not in kinds:
        fail(f"unknown transport {transport!r}; use stdio, sse or http", ExitCode.USAGE)
    kind = kinds[transport]
    argv = list(command or []) + list(ctx.args)
    table: dict[str, Any] = {"type": kind}
    if kind == "stdio":
        if not argv:
            fail("a stdio server needs a command: kairox mcp add NAME -- COMMAND ARGS", ExitCode.USAGE)
        table.update(command=argv[0], args=argv[1:])
        if env:
            table["env"] = _pairs(env, "=", "--env")
    else:
        target = url or (argv[0] if argv else None)
        if not target:
            fail(f"a {transport} server needs --url", ExitCode.USAGE)
        table["url"] = target
        if header:
            table["headers"] = _pairs(header, ":", "--header")
    try:
        McpServerConfig.model_validate(table)
    except ValidationError as exc:
        fail(f"not a valid server: {exc.errors()[0]['msg']}", ExitCode.USAGE)
    try:
        chosen = Layer(layer)
    except ValueError:
        fail(f"unknown layer {layer!r}; use user, project or local", ExitCode.USAGE)
    resolved = state(ctx).resolve(strict=False)
    file = resolved.layer_file(chosen)
    key = join_key(["mcp_servers", name])
    authorize_config_write(resolved, file, change_text(key, table), yes=yes)
    write_own(resolved, file, key, lambda: set_value(file, key, table))
    out(f"added MCP server {name!r} to {file}")
    if chosen is not Layer.USER and not resolved.trusted:
        err("note: this workspace is not trusted, so project servers wait until `kairox trust`")


@mcp_app.command("remove")
def remove(
    ctx: typer.Context,
    name: Annotated[str, typer.Argument(help="Server name.")],
    layer: Annotated[
        str | None, typer.Option("--layer", help="user, project or local (default: the file that defines it).")
    ] = None,
    yes: WriteYesOption = False,
) -> None:
    """Remove a server from the file that defines it (a kairox.toml layer or the workspace .mcp.json); a file of
    an untrusted workspace is asked about first, as `mcp add` does."""
    from pathlib import Path

    from kairox.config import Layer, join_key, unset_value

    cli = state(ctx)
    resolved = cli.resolve(strict=False)
    servers = _configured(cli)
    key = join_key(["mcp_servers", name])
    if layer is not None:
        try:
            file = resolved.layer_file(Layer(layer))
        except ValueError:
            fail(f"unknown layer {layer!r}; use user, project or local", ExitCode.USAGE)
        if not is_set(file, key):
            fail(f"{file} has no MCP server {name!r}", ExitCode.NOT_FOUND)
    else:
        found = _pick(servers, name)[name]
        if found.layer == ".mcp.json":
            path = Path((found.where or "").rsplit(":", 1)[0])
            authorize_config_write(resolved, path, f"remove mcpServers.{name}", yes=yes)
            document = json.loads(path.read_text(encoding="utf-8"))
            entries = document.get("mcpServers", document)
            entries.pop(name, None)
            path.write_text(json.dumps(document, indent=2) + "\n", encoding="utf-8")
            out(f"removed MCP server {name!r} from {path}")
            return
        try:
            file = resolved.layer_file(Layer(found.layer))
        except ValueError:
            fail(
                f"MCP server {name!r} comes from {found.where or found.layer}, which kairox cannot edit",
                ExitCode.FAILURE,
            )
    authorize_config_write(resolved, file, f"remove {key}", yes=yes)
    if not unset_value(file, key):
        fail(f"{file} has no MCP server {name!r}", ExitCode.NOT_FOUND)
    out(f"removed MCP server {name!r} from {file}")


@mcp_app.command("login")
def login(
    ctx: typer.Context,
    name: Annotated[str, typer.Argument(help="A remote (sse or http) server.")],
    no_browser: Annotated[bool, typer.Option("--no-browser", help="Only print the authorization URL.")] = False,
    gateway: Annotated[
        str | None,
        typer.Option(
            "--gateway",
            help="Log in for your own calls of NAME through this `kairox serve` (its /mcp URL); "
            "your token for it in $KAIROX_GATEWAY_TOKEN. Nothing is kept here.",
        ),
    ] = None,
) -> None:
    """Authorize Kairox at a remote server with OAuth (PKCE); tokens are kept in $KAIROX_HOME with mode 0600."""
    import tempfile
    from pathlib import Path

    import anyio
    import httpx

    from kairox._rpc._status import ServerStatus
    from kairox.config import McpServerConfig
    from kairox.mcp import ClientFeatures, McpClient
    from kairox.mcp._oauth import browser_login, token_path

    cli = state(ctx)
    resolved = cli.resolve()
    home = resolved.home
    if gateway is None:
        config = _pick(_configured(cli), name)[name].config
        if config.transport == "stdio":
            fail(f"MCP server {name!r} is a stdio server; OAuth is for sse and http servers", ExitCode.USAGE)
    else:  # the browser step here; the login goes to the gateway, which keeps it encrypted for this person only
        at = f"{gateway.rstrip('/').removesuffix('/mcp')}/logins/{name}"
        headers = {"Authorization": f"Bearer {os.environ.get('KAIROX_GATEWAY_TOKEN', '')}"}
        try:
            found = httpx.get(at, headers=headers, timeout=30)
        except httpx.HTTPError as exc:
            fail(f"cannot reach the gateway at {gateway}: {exc}", ExitCode.FAILURE)
        if found.status_code != 200:
            fail(f"the gateway at {gateway} answered {found.status_code}: {found.text}", ExitCode.FAILURE)
        config, home = McpServerConfig(url=found.json()["url"]), Path(tempfile.mkdtemp(prefix="kairox-login-"))

    async def run() -> tuple[ServerStatus, str | None]:
        async with browser_login(open_browser=not no_browser) as oauth:
            features = ClientFeatures(roots=(resolved.workspace,), oauth_login=oauth)
            upgraded = config.model_copy(
                update={"oauth": True, "startup_timeout_sec": max(config.startup_timeout_sec, 300.0)}
            )
            async with McpClient(
                name, upgraded, workspace=resolved.workspace, home=home, features=features, events=cli.events()
            ) as client:
                return client.status, client.reason

    try:
        status_, reason = anyio.run(run)
        ready = status_ == ServerStatus.READY
        login = json.loads(token_path(home, name).read_text(encoding="utf-8")) if gateway and ready else None
    finally:
        if gateway is not None:
            shutil.rmtree(home, ignore_errors=True)
    if not ready:
        fail(f"login to {name!r} failed: {reason}", ExitCode.FAILURE)
    if gateway is None:
        out(f"logged in to {name!r}; tokens saved in {token_path(home, name)}")
        return
    sent = httpx.put(at, headers=headers, json=login, timeout=30)
    if sent.status_code != 204:
        fail(f"the gateway at {gateway} did not keep the login ({sent.status_code}): {sent.text}", ExitCode.FAILURE)
    out(f"logged in to {name!r} for your own calls through {gateway}")


@mcp_app.command("logout")
def logout(ctx: typer.Context, name: Annotated[str, typer.Argument(help="Server name.")]) -> None:
    """Forget the OAuth tokens and client registration of a server."""
    from kairox.mcp._oauth import logout as forget

    resolved = state(ctx).resolve()
    if not forget(resolved.home, name):
        fail(f"no OAuth tokens stored for {name!r}", ExitCode.NOT_FOUND)
    out(f"logged out of {name!r}")


def _add_catalog() -> None:
    from kairox.cli._catalog_cmds import catalog_app

    mcp_app.add_typer(
        catalog_app,
        name="catalog",
        help="The MCP server catalog: list, search, show, check, install, sources, refresh.",
    )


_add_catalog()
