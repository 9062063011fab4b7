"""One connection to one MCP server: its transport, the session over it, and the handshake.

The stack is chosen by the transport, before connecting, and never changes on a connection: a stdio server (a
child process under the guard, in its sandbox) is served by Kairox's own session (``_native``, both protocol
eras, no SDK import); a remote server (SSE or Streamable HTTP, OAuth included) by the SDK's ``Client`` (``_sdk``).
"""

import asyncio
import contextvars
import enum
import os
import shutil
import signal
import sys
from collections.abc import Awaitable, Callable, Mapping
from contextlib import AsyncExitStack
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any, Protocol, Self

import anyio

from kairox._rpc._process import ChildProcess, child_environment
from kairox._util._expand import expand_vars
from kairox._version import __version__
from kairox.config import McpServerConfig
from kairox.errors import SandboxUnavailableError
from kairox.events import EventSink
from kairox.mcp._callbacks import ClientCallbacks
from kairox.mcp._features import ClientFeatures
from kairox.mcp._native import NativeSession, StdioChannel
from kairox.mcp._protocol_cache import remember_legacy
from kairox.mcp._session import CONNECTION_CLOSED, HANDSHAKE_VERSIONS, InvalidResult, McpSession, SessionError
from kairox.sandbox import ConfinedCommand, ServerConfinement, confine_server

if TYPE_CHECKING:  # the HTTP stack loads for remote servers only
    import httpx2
    from mcp.client import Transport

STDERR_LIMIT = 64 * 1024
STDERR_TAIL_CHARS = 4_000
STDIN_GRACE_SEC = 0.1
"""How long a stopping stdio server gets to exit on end of input before SIGTERM reaches its group: most exit
at once, and one that waits for more input (server-everything once ``roots`` is declared) would otherwise hold
every stop for seconds."""
STOP_TIMEOUT_SEC = 3.0
"""From end of input to SIGKILL for a server that was Ready."""
STARTUP_STOP_TIMEOUT_SEC = 0.1
"""From SIGTERM (sent with end of input, no grace) to SIGKILL for a server still starting: it holds no session
worth a clean exit, and its failure is reported once it is stopped (so the report carries all it wrote)."""


class StartError(Exception):
    """A start-up problem already phrased for the user."""

    def __init__(self, message: str, *, variable: str | None = None) -> None:
        super().__init__(message)
        self.variable = variable
        """The ``${VAR}`` that is not set, when that is the problem."""


def expand(text: str, what: str, environ: Mapping[str, str]) -> str:
    result = expand_vars(text, environ)
    if result.missing:
        raise StartError(
            f"{what} uses ${{{result.missing[0]}}}, which is not set; set it or give a default with ${{VAR:-value}}",
            variable=result.missing[0],
        )
    return result.value


async def open_stdio(
    stack: AsyncExitStack,
    config: McpServerConfig,
    *,
    environ: Mapping[str, str],
    workspace: Path,
    base_dir: Path,
    log_path: Path,
    confinement: ServerConfinement | None = None,
) -> tuple[ChildProcess, ConfinedCommand]:
    """Start the server under the guard (its own process group, dies with the host), in the sandbox its profile
    says; the stack stops it."""
    assert config.command is not None
    command = expand(config.command, "command", environ)
    args = [expand(arg, f"args[{i}]", environ) for i, arg in enumerate(config.args)]
    extra = {key: expand(value, f"env.{key}", environ) for key, value in config.env.items()}
    env = child_environment(environ, passthrough=config.env_vars, extra=extra)
    cwd = Path(expand(config.cwd, "cwd", environ)) if config.cwd else workspace
    if not cwd.is_absolute():
        cwd = base_dir / cwd
    if not cwd.is_dir():
        raise StartError(f"the working directory {cwd} does not exist (cwd)")
    if os.sep in command:
        found = (cwd / command) if not os.path.isabs(command) else Path(command)
        runnable = found.is_file() and os.access(found, os.X_OK)
    else:
        runnable = shutil.which(command, path=env.get("PATH")) is not None
    if not runnable:
        raise StartError(f"command {command!r} not found or not executable; install it or give its full path (command)")
    try:
        started = await confine_server(
            [command, *args], env, cwd=cwd, confinement=confinement, given_env=config.env.keys()
        )
    except SandboxUnavailableError as exc:
        raise StartError(f"{exc.message} (hint: {exc.hint})" if exc.hint else exc.message) from exc
    from kairox.config import SecretScrubber

    # the server's stderr (its log file and the tail every front end shows) never holds a secret it was given
    scrub = SecretScrubber.for_server(config, *extra.values(), environ=dict(environ))
    child = ChildProcess(
        started.argv,
        env=started.env,
        cwd=cwd,
        stderr_log=log_path,
        stderr_limit=STDERR_LIMIT,
        stop_timeout=STARTUP_STOP_TIMEOUT_SEC,
        guarded=not started.confined,  # bubblewrap (--die-with-parent, own pid namespace) is the guard then
        stdin_grace=0.0,
        scrub_stderr=scrub,
    )
    try:
        await child.start()
    except OSError as exc:
        raise StartError(f"cannot start {command!r}: {exc.strerror or exc}") from exc

    async def stop_child() -> None:
        # stopping must finish even when the supervisor is being cancelled, or the process would leak
        with anyio.CancelScope(shield=True):
            await child.stop()

    stack.push_async_callback(stop_child)
    return child, started


async def open_remote(
    stack: AsyncExitStack, config: McpServerConfig, *, environ: Mapping[str, str], auth: "httpx2.Auth | None" = None
) -> "Transport":
    """The SDK's SSE or Streamable HTTP transport with the configured headers and bearer token."""
    import httpx2
    from mcp.client.sse import sse_client
    from mcp.client.streamable_http import streamable_http_client

    assert config.url is not None
    url = expand(config.url, "url", environ)
    headers = {key: expand(value, f"headers.{key}", environ) for key, value in config.headers.items()}
    secret_var = config.bearer_token_env_var or config.api_key_env
    if secret_var:
        token = environ.get(secret_var)
        if not token:
            raise StartError(
                f"the bearer token variable {secret_var} is not set; export it and restart", variable=secret_var
            )
        headers["Authorization"] = f"Bearer {token}"
    if config.transport == "sse":
        return sse_client(url, headers=headers, auth=auth, timeout=min(30.0, config.startup_timeout_sec))
    # the SDK transports' own timeouts: 30 s to connect, write and wait for a connection, 300 s to read (a
    # server may hold a response stream open); redirects are left to the transport, which stays on the origin
    http = httpx2.AsyncClient(headers=headers, auth=auth, timeout=httpx2.Timeout(30.0, read=300.0))
    await stack.enter_async_context(http)
    return streamable_http_client(url, http_client=http)


def describe_failure(exc: BaseException, url: str | None) -> str:
    """A start-up exception as one sentence for the Failed event; the URLs it names redacted (credentials in
    userinfo or a query key never reach a status line, a log or the doctor's report)."""
    from kairox.config import redact_urls

    return redact_urls(_describe(exc, url))


def _describe(exc: BaseException, url: str | None) -> str:
    # an SDK, OAuth or HTTP error can only come from a module that was loaded
    oauth = sys.modules.get("kairox.mcp._oauth")
    if isinstance(exc, StartError) or (oauth is not None and isinstance(exc, oauth.NeedsLoginError)):
        return str(exc)
    if isinstance(exc, SessionError):
        if exc.code == CONNECTION_CLOSED:
            return "Connection closed"
        return f"the server answered with an error: {exc.message} (JSON-RPC error {exc.code})"
    if isinstance(exc, InvalidResult):
        return f"the server's answer is not valid MCP: {exc}"
    errors = sys.modules.get("mcp.shared.exceptions")
    if errors is not None and isinstance(exc, errors.MCPError):
        return f"the server answered with an error: {exc.error.message} (JSON-RPC error {exc.error.code})"
    httpx = sys.modules.get("httpx2")
    if httpx is not None and isinstance(exc, httpx.HTTPStatusError):
        return f"HTTP {exc.response.status_code} from {exc.request.url}"
    if (httpx is not None and isinstance(exc, httpx.TransportError)) or (isinstance(exc, OSError) and url):
        return f"cannot connect to {url}: {exc or type(exc).__name__}"
    return f"{type(exc).__name__}: {exc}"


class FailureCause(enum.StrEnum):
    """Why a server did not start, as a fact a front end can choose its advice by (never by the message's words)."""

    UNSET_VARIABLE = "unset_variable"
    """A ``${VAR}`` of its entry is not set (``McpClient.cause_variable`` names it)."""
    STARTUP_TIMEOUT = "startup_timeout"
    """It did not finish the handshake within ``startup_timeout_sec``."""
    OTHER = "other"


class ConnectionOwner(Protocol):
    """What a connection reads of the ``McpClient`` that opens it, and the four things it reports back to it: how
    the server runs (``confinement_state``, ``confinement_warning``), the era it answered in (``mode``), and
    whether it signs in with a person's login (``signs_in``)."""

    name: str
    config: McpServerConfig
    workspace: Path
    base_dir: Path
    home: Path
    environ: dict[str, str]
    features: ClientFeatures
    events: EventSink
    log_path: Path
    cache_key: str
    confinement: ServerConfinement | None
    confinement_state: dict[str, Any] | None
    confinement_warning: str | None
    mode: str
    signs_in: bool

    def relist_soon(self) -> None: ...
    def invalid_line(self, line: str) -> None: ...
    def violation(self, detail: str) -> None: ...


class McpConnection:
    """``async with McpConnection(client) as connection:`` the transport and the session, handshake done; leaving
    closes the session and stops the process. What the process did is kept for the failure report."""

    def __init__(self, client: ConnectionOwner) -> None:
        self.owner = client
        self.session: McpSession | None = None
        self.child: ChildProcess | None = None
        self.channel: StdioChannel | None = None
        self.closed: asyncio.Event | None = None
        """Set when a stdio server's connection ended (a remote one's ends show in its calls)."""
        self.exit_code: int | None = None
        self._tail = ""
        self._stack = AsyncExitStack()

    async def __aenter__(self) -> Self:
        await self._stack.__aenter__()
        try:
            self.session = await self._open()
        except BaseException:
            await self.__aexit__(*sys.exc_info())
            raise
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        try:
            await self._stack.__aexit__(exc_type, exc, tb)
        finally:
            if self.child is not None:
                self._tail = self.child.stderr.text(STDERR_TAIL_CHARS)
                self.exit_code = self.child.returncode

    @property
    def stderr_tail(self) -> str:
        return self.child.stderr.text(STDERR_TAIL_CHARS) if self.child is not None else self._tail

    @property
    def pid(self) -> int | None:
        """The process (group leader) of a stdio server while it runs."""
        child = self.child
        return child.pid if child is not None and child.returncode is None else None

    def serving(self) -> None:
        """The server is Ready: it gets a clean exit when stopped."""
        if self.child is not None:
            self.child.stop_timeout, self.child.stdin_grace = STOP_TIMEOUT_SEC, STDIN_GRACE_SEC

    @property
    def exited_by_itself(self) -> bool:
        return self.channel is not None and exited_on_its_own(self.channel, self.exit_code)

    @property
    def sandbox_raced(self) -> bool:
        """bwrap stopped before the server ran, on a path that went away after the masks were worked out."""
        child = self.child
        if child is None or not child.argv or os.path.basename(child.argv[0]) != "bwrap":
            return False
        from kairox.sandbox import vanished_before_start  # loaded only for a confined server

        return vanished_before_start(child.argv, child.returncode, b"", self.stderr_tail.strip().encode())

    async def _open(self) -> McpSession:
        client, config = self.owner, self.owner.config
        if config.transport != "stdio":
            return await remote_session(self._stack, client, self._auth(), on_tools_changed=client.relist_soon)
        self.child, started = await open_stdio(
            self._stack,
            config,
            environ=client.environ,
            workspace=client.workspace,
            base_dir=client.base_dir,
            log_path=client.log_path,
            confinement=client.confinement,
        )
        client.confinement_state, client.confinement_warning = started.confinement, started.warning
        self.channel = StdioChannel(self.child, on_invalid_line=client.invalid_line)
        session = NativeSession(
            self.channel,
            server=client.name,
            callbacks=ClientCallbacks(client.name, client.features, client.events),
            client_info={"name": "kairox", "version": __version__},
            on_tools_changed=client.relist_soon,
        )
        await self._stack.enter_async_context(session)
        self.closed = session.closed
        probed = client.mode == "auto"
        await session.open(client.mode)
        if probed and session.protocol_version in HANDSHAKE_VERSIONS:
            # remembered per server: a restart, and the next run, send `initialize` first
            client.mode = "legacy"
            remember_legacy(client.home, client.cache_key)
        return session

    def _auth(self) -> "httpx2.Auth | None":
        """OAuth when the entry asks for it, or when `kairox mcp login` left tokens for the server."""
        from kairox.mcp._oauth import client_credentials_provider, oauth_provider, token_path

        client, config = self.owner, self.owner.config
        assert config.url is not None
        url, home, environ = expand(config.url, "url", client.environ), client.home, client.environ
        if config.oauth_grant == "client_credentials":
            if config.oauth_client_id is None:
                raise StartError("the client_credentials grant needs oauth_client_id")
            secret, key = config.oauth_client_secret_env, config.oauth_private_key_env
            for variable in (secret, key):
                if variable is not None and not environ.get(variable):
                    raise StartError(f"{variable} is not set; export it and restart", variable=variable)
            return client_credentials_provider(
                client.name,
                url,
                home=home,
                client_id=config.oauth_client_id,
                secret=environ.get(secret) if secret else None,
                private_key=environ.get(key) if key else None,
            )
        if not (config.oauth or token_path(home, client.name).exists()):
            return None
        client.signs_in = True
        login, metadata = client.features.oauth_login, config.oauth_client_metadata_url
        return oauth_provider(client.name, url, home=home, login=login, client_metadata_url=metadata)


CALLER_LOGIN: contextvars.ContextVar[Callable[[str, str], Awaitable[Any]] | None] = contextvars.ContextVar(
    "kairox_caller_login", default=None
)
"""Set by a gateway for one person's call: (server, url) -> that person's OAuth ``httpx`` auth for an ``oauth``
server, or the refusal to give instead. A call of such a server then runs on a connection of its own with it."""


async def remote_session(
    stack: AsyncExitStack, client: ConnectionOwner, auth: "httpx2.Auth | None", *, on_tools_changed: Callable[[], None]
) -> McpSession:
    """A session with remote server ``client`` through the SDK's ``Client``; ``stack`` closes it."""
    from kairox.mcp._sdk import SdkSession, sdk_client

    callbacks = ClientCallbacks(client.name, client.features, client.events)
    transport = await open_remote(stack, client.config, environ=client.environ, auth=auth)
    sdk = sdk_client(
        transport,
        mode=client.mode,
        callbacks=callbacks,
        on_tools_changed=on_tools_changed,
        on_violation=client.violation,
    )
    await stack.enter_async_context(sdk)
    return SdkSession(sdk, server=client.name, callbacks=callbacks)


async def run_as(client: ConnectionOwner, auth: "httpx2.Auth", run: Callable[[McpSession], Awaitable[Any]]) -> Any:
    """``run`` on a connection of its own to remote server ``client``, authorized with ``auth`` (one person's
    login), closed after it."""
    async with AsyncExitStack() as stack:
        return await run(await remote_session(stack, client, auth, on_tools_changed=_no_op))


def _no_op() -> None:
    """A person's own connection hears list changes on the shared one."""


def exited_on_its_own(channel: StdioChannel, code: int | None) -> bool:
    """Whether the stdio server ended by itself: its output ended, or a message found its input closed and it
    exited other than by the stop's signals (a server that crashes at once can close its input before the end of
    its output is read)."""
    if channel.eof:
        return True
    return channel.input_closed and code is not None and code not in (-signal.SIGTERM, -signal.SIGKILL)


def exit_detail(code: int | None) -> str:
    if code is None:
        return "closed its output"
    if code < 0:
        return f"was killed by signal {-code}"
    if code > 128:
        return f"was killed by signal {code - 128}"
    return f"exited with code {code}"
