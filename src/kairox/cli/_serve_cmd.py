"""``kairox serve``: the workspace's tools as one MCP server (stdio, or Streamable HTTP with --http)."""

import os
from pathlib import Path
from typing import Annotated

import typer

from kairox.cli._common import ExitCode, fail, state

TOKEN_ENV = "KAIROX_SERVE_TOKEN"


def serve(
    ctx: typer.Context,
    http: Annotated[
        str | None,
        typer.Option(
            "--http",
            metavar="[HOST:]PORT",
            help="Serve Streamable HTTP on HOST:PORT (127.0.0.1 unless given) instead of stdio.",
        ),
    ] = None,
    token_file: Annotated[
        Path | None,
        typer.Option("--token-file", help="File whose first line is the bearer token every HTTP request must carry."),
    ] = None,
    token: Annotated[
        str | None,
        typer.Option(
            "--token",
            envvar=TOKEN_ENV,
            help=f"The bearer token (prefer --token-file or ${TOKEN_ENV}: arguments are visible to other users).",
        ),
    ] = None,
    expose: Annotated[
        list[str] | None,
        typer.Option("--expose", help="Serve only tools matching this glob (registry or wire name); repeatable."),
    ] = None,
    hide: Annotated[
        list[str] | None, typer.Option("--hide", help="Do not serve tools matching this glob; repeatable.")
    ] = None,
    search: Annotated[
        bool,
        typer.Option(
            "--search",
            help=(
                "List a tool search and an add/remove pair instead of every "
                "tool; found tools are called by name, through the gate."
            ),
        ),
    ] = False,
    allow_host: Annotated[
        list[str] | None,
        typer.Option("--allow-host", help="Also accept this Host header (name:* for any port); repeatable."),
    ] = None,
    allow_origin: Annotated[
        list[str] | None, typer.Option("--allow-origin", help="Also accept this browser Origin; repeatable.")
    ] = None,
    max_sessions: Annotated[
        int, typer.Option("--max-sessions", min=1, help="Most concurrent HTTP client sessions.")
    ] = 100,
    idle_timeout: Annotated[
        float, typer.Option("--idle-timeout", min=1, help="Seconds after which an idle HTTP session is closed.")
    ] = 1800.0,
    max_body: Annotated[int, typer.Option("--max-body-bytes", min=1024, help="Largest HTTP request body accepted.")] = 4
    * 1024
    * 1024,
    drain: Annotated[
        float,
        typer.Option(
            "--drain-sec", min=0, help="On SIGTERM, how long calls in flight may finish before upstreams stop."
        ),
    ] = 10.0,
    store: Annotated[
        str | None,
        typer.Option(
            "--store",
            metavar="URL",
            help="Where state lives: postgresql://... (replicas) or sqlite:///PATH (default: in $KAIROX_HOME).",
        ),
    ] = None,
    users_file: Annotated[
        Path | None,
        typer.Option(
            "--users-file",
            metavar="FILE",
            help="A JSON or TOML map of user -> token (or sha256:HEX); reread on change.",
        ),
    ] = None,
    oidc_issuer: Annotated[
        str | None, typer.Option("--oidc-issuer", metavar="URL", help="Accept JWTs of this OpenID Connect issuer.")
    ] = None,
    oidc_audience: Annotated[
        str | None, typer.Option("--oidc-audience", metavar="AUD", help="The audience those JWTs must name.")
    ] = None,
    oidc_claim: Annotated[
        str | None, typer.Option("--oidc-user-claim", metavar="CLAIM", help="The claim naming the user (sub).")
    ] = None,
    replica: Annotated[
        str | None,
        typer.Option(
            "--replica-id", metavar="ID", help="This replica's name in the audit (default: host name + suffix)."
        ),
    ] = None,
    name: Annotated[
        str,
        typer.Option(
            "--name",
            help=(
                "The name the host registers this server under: tool names are "
                "kept short enough for mcp__NAME__<tool> to fit 64 characters."
            ),
        ),
    ] = "kairox",
) -> None:
    """Serve every visible tool (built-in, MCP, plugin, LSP, DAP, skills) as one MCP server, behind the gate.

    Asks become questions to the client (elicitation); clients that cannot answer get the call refused with how
    to allow it. Every call is one line in $KAIROX_HOME/logs/gateway.jsonl and one row in the store (`kairox
    audit`); replicas on one PostgreSQL store serve any request behind a load balancer.
    """
    import anyio

    from kairox.errors import KairoxError
    from kairox.gateway import (
        GatewayConfigError,
        GatewayOptions,
        HttpOptions,
        OidcOptions,
        Users,
        parse_listen,
        serve_http,
        serve_stdio,
    )

    cli = state(ctx)
    team = cli.resolve().config.gateway  # a broken user config ends here with file, line and key
    runtime = cli.runtime_options(cwd=Path(os.getcwd()))
    options = GatewayOptions(
        expose=tuple(expose or ()), hide=tuple(hide or ()), name=name, search=search, store=store, replica=replica
    )
    users_file = users_file or (Path(team.users_file).expanduser() if team.users_file else None)
    issuer, audience = oidc_issuer or team.oidc_issuer, oidc_audience or team.oidc_audience
    if bool(issuer) != bool(audience):
        fail("--oidc-issuer and --oidc-audience go together: give both", ExitCode.USAGE)
    try:
        oidc = (
            OidcOptions(issuer=issuer, audience=audience, claim=oidc_claim or team.oidc_user_claim)
            if issuer and audience
            else None
        )
        users = Users(users_file=users_file, oidc=oidc) if users_file or oidc else None
        if http is None:
            anyio.run(lambda: serve_stdio(runtime, options, events=cli.events(), drain_sec=drain))
            return
        host, port = parse_listen(http)
        if token_file is not None:
            token = _read_token(token_file)
        settings = HttpOptions(
            host=host,
            port=port,
            token=token or None,
            allowed_hosts=tuple(allow_host or ()),
            allowed_origins=tuple(allow_origin or ()),
            max_sessions=max_sessions,
            idle_timeout_sec=idle_timeout,
            max_body_bytes=max_body,
            users=users,
        )
        anyio.run(lambda: serve_http(runtime, options, settings, events=cli.events(), drain_sec=drain))
    except GatewayConfigError as exc:
        fail(str(exc), ExitCode.USAGE)
    except KairoxError as exc:  # the store or the users file
        fail(str(exc), ExitCode.CONFIG)


def _read_token(token_file: Path) -> str:
    """The bearer token: the first line of ``--token-file``."""
    try:
        return token_file.read_text(encoding="utf-8").strip().splitlines()[0].strip()
    except (OSError, IndexError) as exc:
        fail(f"--token-file {token_file}: cannot read a token from it ({exc})", ExitCode.USAGE)


def proxy(
    ctx: typer.Context,
    command: Annotated[list[str] | None, typer.Argument(help="After --: the server's command and arguments.")] = None,
    http: Annotated[
        str | None,
        typer.Option("--http", metavar="[HOST:]PORT", help="Serve Streamable HTTP on HOST:PORT instead of stdio."),
    ] = None,
    name: Annotated[
        str | None,
        typer.Option(
            "--name",
            help="The server's name in rules and the audit (mcp__NAME__tool); a [mcp_servers.NAME] entry's "
            "settings apply. Default: from the command or URL.",
        ),
    ] = None,
    url: Annotated[str | None, typer.Option("--url", help="Proxy a remote server (Streamable HTTP, OAuth).")] = None,
    token_file: Annotated[
        Path | None, typer.Option("--token-file", help="File whose first line is the bearer token of --http.")
    ] = None,
    drain: Annotated[
        float, typer.Option("--drain-sec", min=0, help="On SIGTERM, how long calls in flight may finish.")
    ] = 10.0,
) -> None:
    """Protect one MCP server: kairox proxy -- CMD ARGS (or --url URL, or --name of a configured server).

    The server runs confined as a configured one would, and is served to the host under its own tool, resource
    and prompt names; every tool call passes the gate (rules name its tools mcp__NAME__tool) and is one line in
    $KAIROX_HOME/logs/proxy.jsonl. Asks become questions to the host.
    """
    import re

    import anyio

    from kairox.errors import KairoxError
    from kairox.gateway import GatewayOptions, HttpOptions, ProxyTarget, parse_listen, serve_proxy

    argv = list(command or ())
    if bool(argv) + bool(url) > 1:
        fail("give either a command after -- or --url, not both", ExitCode.USAGE)
    if name is None:
        if not argv and not url:
            fail(
                "nothing to proxy: give a command after --, --url URL, or --name of a configured server", ExitCode.USAGE
            )
        launchers = {"npx", "uvx", "bunx", "node", "python", "python3", "deno", "pipx", "docker"}
        words = [a for a in argv[1:] if not a.startswith("-")] if Path(argv[0]).name in launchers else argv[:1]
        base = (words[-1] if argv and words else url or argv[0]).rstrip("/").rsplit("/", 1)[-1]
        name = re.sub(r"[^A-Za-z0-9_-]+", "-", base).strip("-") or "upstream"
    cli = state(ctx)
    home = cli.resolve().home
    runtime = cli.runtime_options(cwd=Path(os.getcwd()))
    options = GatewayOptions(name=name, audit_path=home / "logs" / "proxy.jsonl")
    settings = None
    if http is not None:
        host, port = parse_listen(http)
        token = _read_token(token_file) if token_file is not None else None
        settings = HttpOptions(host=host, port=port, token=token or None)
    target = ProxyTarget(name=name, command=tuple(argv), url=url)
    try:
        anyio.run(lambda: serve_proxy(runtime, target, options, settings, events=cli.events(), drain_sec=drain))
    except KairoxError as exc:
        fail(str(exc), ExitCode.USAGE)


def register(app: typer.Typer) -> None:
    app.command("serve")(serve)
    app.command("proxy", context_settings={"allow_extra_args": True, "ignore_unknown_options": True})(proxy)
