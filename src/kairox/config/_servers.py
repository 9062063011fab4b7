"""One server entry each: ``[mcp_servers.NAME]``, ``[lsp_servers.NAME]`` and ``[dap_servers.NAME]``.

Apart from the other sections so that a host starting one MCP server imports these three models only.
"""

from typing import Annotated, Any, Literal

from pydantic import AfterValidator, Field, ValidationError, ValidatorFunctionWrapHandler, model_validator
from pydantic_core import InitErrorDetails, PydanticCustomError

from kairox._util._domains import host_name
from kairox.config._model_base import ConfigModel

McpTransportType = Literal["stdio", "sse", "streamable_http"]
ServerSandbox = Literal["workspace_write", "read_only", "none"]
"""How a server process is confined (Y6): the profile keys of a stdio MCP, language server or debug adapter entry."""

_PROFILE_FIELDS = ("sandbox", "network", "allowed_domains", "writable_roots")
_STDIO_FIELDS = ("command", "args", "env", "env_vars", "cwd", *_PROFILE_FIELDS)
_REMOTE_FIELDS = (
    "url",
    "headers",
    "api_key_env",
    "bearer_token_env_var",
    "oauth_client_metadata_url",
    "oauth_grant",
    "oauth_client_id",
    "oauth_client_secret_env",
    "oauth_private_key_env",
)


def check_domains(value: list[str] | None) -> list[str] | None:
    """An ``allowed_domains`` list whose every entry is a host name or ``*.`` and a host name."""
    if wrong := [repr(entry) for entry in value or () if host_name(entry.removeprefix("*.")) is None]:
        raise ValueError(f"{', '.join(wrong)}: neither a host name (pypi.org) nor *.NAME (*.example.com); no addresses")
    return value


class ConfinedServerConfig(ConfigModel):
    """The sandbox profile a server process runs under (shared by the three server entries)."""

    sandbox: ServerSandbox | None = None
    """``workspace_write`` (the default): the workspace, the temp dir and the server's own state folder writable,
    protected paths read-only; ``read_only``: only its state folder writable; ``none``: no sandbox, honoured only
    from the user, system and CLI (``-c``) layers."""
    network: bool | Literal["allowlist"] | None = None
    """``false`` unshares the network; ``"allowlist"``: only ``allowed_domains`` (else ``sandbox.allowed_domains``),
    through the session's proxy. Unset: the allowlist under ``sandbox.network = "allowlist"``, else the network."""
    allowed_domains: Annotated[list[str] | None, AfterValidator(check_domains)] = None
    """Its own list under ``network = "allowlist"``; from a project file or plugin it only narrows the session's."""
    writable_roots: list[str] = Field(default_factory=list)
    """Folders the confined server may write besides the workspace; outside the workspace honoured only from the
    user, system and CLI layers."""


class McpServerConfig(ConfinedServerConfig):
    """``[mcp_servers.NAME]``. ``type`` defaults to stdio when ``command`` is set, else streamable_http."""

    type: McpTransportType | None = None
    """Transport; inferred from ``command`` (stdio) or ``url`` (streamable_http) when absent."""
    # stdio
    command: str | None = None
    """Program of a stdio server; ``${VAR}`` and ``${VAR:-default}`` expand."""
    args: list[str] = Field(default_factory=list)
    """Its arguments; ``${VAR}`` expands."""
    env: dict[str, str] = Field(default_factory=dict)
    """Extra environment; an empty value passes the host variable of the same name."""
    env_vars: list[str] = Field(default_factory=list)
    """Host variables passed through besides the allow-listed basics."""
    cwd: str | None = None
    """Working directory of a stdio server (default: the workspace root)."""
    # remote
    url: str | None = None
    """Endpoint of an SSE or Streamable HTTP server; ``${VAR}`` expands."""
    headers: dict[str, str] = Field(default_factory=dict)
    """HTTP headers sent to a remote server; ``${VAR}`` expands; redacted in output."""
    api_key_env: str | None = None
    """Variable holding an API key sent as ``Authorization: Bearer``."""
    bearer_token_env_var: str | None = None
    """Same as ``api_key_env`` (the name Codex uses)."""
    oauth: bool = False
    """Use the OAuth flow (``kairox mcp login NAME``) for this remote server."""
    oauth_client_metadata_url: str | None = None
    """HTTPS URL of a client ID metadata document naming this client: its client ID where the authorization
    server supports such documents (else Kairox registers itself, or uses the client ``kairox mcp login`` keeps)."""
    oauth_grant: Literal["authorization_code", "client_credentials"] = "authorization_code"
    """``client_credentials``: authorized machine to machine as ``oauth_client_id``, with no login."""
    oauth_client_id: str | None = None
    """The client ID the authorization server issued (the ``client_credentials`` grant)."""
    oauth_client_secret_env: str | None = None
    """Variable holding that client's secret."""
    oauth_private_key_env: str | None = None
    """Variable holding that client's PEM private key instead: it signs a JWT assertion (``private_key_jwt``)."""
    # shared
    enabled: bool = True
    """Start this server."""
    required: bool = False
    """Start-up fails when this server does not reach Ready."""
    startup_timeout_sec: float = Field(default=30.0, gt=0)
    """Time allowed to reach Ready."""
    startup: Literal["eager", "lazy"] = "eager"
    """``eager`` starts the server with the session (in the background when its tool list is cached);
    ``lazy`` starts it on the first call of one of its tools, once a cached list can be shown."""
    cache_tools: bool = True
    """Remember the server's tool, prompt and resource lists under the
    Kairox home, so a session lists them before the server is up."""
    tool_timeout_sec: float = Field(default=120.0, gt=0)
    """Timeout of one tool call (progress notifications extend it)."""
    enabled_tools: list[str] | None = None
    """Only these tools are offered (all when unset)."""
    disabled_tools: list[str] = Field(default_factory=list)
    """These tools are never offered."""
    protocol_mode: Literal["auto", "legacy"] = "auto"
    """``auto`` probes the newest protocol era and falls back; ``legacy`` only does the classic handshake."""
    max_restarts: int = Field(default=3, ge=0)
    """Restarts after a crash, with exponential backoff, before the server stays Failed."""
    trust_annotations: bool = False
    """Believe this server's tool annotations: a tool saying ``readOnlyHint: true`` then runs as a read without
    asking. Off, every tool of the server counts as a write with open-world effects."""
    max_tools: int = Field(default=200, ge=0)
    """Tools offered from this server at most; the rest are left out with a diagnostic."""
    max_description_chars: int = Field(default=2048, ge=0)
    """A tool description longer than this is cut to it (with a diagnostic) before the model sees it."""

    @model_validator(mode="wrap")
    @classmethod
    def _infer_and_check_transport(cls, data: Any, handler: ValidatorFunctionWrapHandler) -> Any:
        # every problem of an entry is reported at once, each at its own key: the transport mix at the key
        # that does not belong, a wrong type or an unknown key (with a did-you-mean) beside it
        if not isinstance(data, dict):
            return handler(data)
        kind = data.get("type")
        if kind is None:
            kind = "stdio" if "command" in data else "streamable_http" if "url" in data else None
        problems: list[tuple[tuple[str, ...], str]] = []
        if kind == "stdio":
            problems += [
                ((f,), f'a stdio server cannot set {f}; remove it or set type = "sse" or "streamable_http"')
                for f in _REMOTE_FIELDS
                if f in data
            ]
            if "command" not in data:
                problems.append(((), "a stdio server needs `command`"))
        elif kind in ("sse", "streamable_http"):
            problems += [
                ((f,), f'a {kind} server cannot set {f}; remove it or set type = "stdio"')
                for f in _STDIO_FIELDS
                if f in data
            ]
            if "url" not in data:
                problems.append(((), f"a {kind} server needs `url`"))
        elif kind is None:
            problems.append(((), "set `command` (stdio) or `url` (sse / streamable_http)"))
        errors: list[InitErrorDetails] = [
            {"type": PydanticCustomError("mcp_transport", message), "loc": loc, "input": data}
            for loc, message in problems
        ]
        result = None
        try:
            result = handler({**data, "type": kind} if kind is not None else data)
        except ValidationError as exc:
            errors += [
                {
                    "type": PydanticCustomError(e["type"], str(e["msg"]).replace("{", "{{").replace("}", "}}")),
                    "loc": e["loc"],
                    "input": e.get("input"),
                }
                for e in exc.errors()
            ]
        if errors:
            raise ValidationError.from_exception_data(cls.__name__, errors)
        return result

    @property
    def transport(self) -> McpTransportType:
        assert self.type is not None  # set by the validator
        return self.type


class LspServerConfig(ConfinedServerConfig):
    """``[lsp_servers.NAME]``."""

    command: str
    """Program of the language server (stdio)."""
    args: list[str] = Field(default_factory=list)
    """Its arguments."""
    env: dict[str, str] = Field(default_factory=dict)
    """Extra environment for it."""
    languages: list[str] = Field(default_factory=list)
    """Language ids it serves (``python``, ``typescript`` ...)."""
    file_patterns: list[str] = Field(default_factory=list)
    """Globs such as ``*.py`` or ``src/**/*.ts``: which files this server answers for."""
    initialization_options: dict[str, Any] = Field(default_factory=dict)
    """Sent as ``initializationOptions``."""
    settings: dict[str, Any] = Field(default_factory=dict)
    """Answers to ``workspace/configuration``."""
    enabled: bool = True
    """Use this server."""
    startup_timeout_sec: float = Field(default=30.0, gt=0)
    """Time allowed for ``initialize``."""
    request_timeout_sec: float = Field(default=30.0, gt=0)
    """Timeout of one request."""
    shutdown_timeout_sec: float = Field(default=3.0, gt=0)
    """Time allowed for shutdown before the process group is killed."""
    position_encoding: Literal["auto", "utf-8", "utf-16", "utf-32"] = "auto"
    """Column unit of the server: ``auto`` negotiates it; set it for a server that counts otherwise than it says
    (python-lsp-server counts characters, ``utf-32``)."""


class DapServerConfig(ConfinedServerConfig):
    """``[dap_servers.NAME]``."""

    command: str
    """Program of the debug adapter (stdio)."""
    args: list[str] = Field(default_factory=list)
    """Its arguments."""
    env: dict[str, str] = Field(default_factory=dict)
    """Extra environment for it."""
    languages: list[str] = Field(default_factory=list)
    """Languages it debugs."""
    launch: dict[str, Any] = Field(default_factory=dict)
    """Defaults merged into every ``launch`` request (``justMyCode``, ``console`` ...)."""
    enabled: bool = True
    """Use this adapter."""
    request_timeout_sec: float = Field(default=30.0, gt=0)
    """Timeout of one request."""
