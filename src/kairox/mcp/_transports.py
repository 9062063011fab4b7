"""Opening the transport of one server: a guarded child process for stdio, the SDK's HTTP clients otherwise."""

import os
import shutil
import sys
from collections.abc import Mapping
from contextlib import AsyncExitStack
from pathlib import Path
from typing import TYPE_CHECKING

import anyio

from kairox._rpc import ChildProcess, child_environment
from kairox._util import expand_vars
from kairox.config import McpServerConfig
from kairox.errors import SandboxUnavailableError
from kairox.mcp._session import CONNECTION_CLOSED, InvalidResult, SessionError
from kairox.tools import ConfinedCommand, ServerConfinement, confine_server

if TYPE_CHECKING:  # the HTTP stack loads for remote servers only
    import httpx2
    from mcp.client import Transport

STDERR_LIMIT = 64 * 1024
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
