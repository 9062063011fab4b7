"""The whole ``kairox.toml`` as pydantic models. Unknown keys are errors everywhere (``extra="forbid"``).

Sections whose features arrive later still have their final shape here, so files written today keep working.
The server entries live in ``_servers`` and the policy modes in ``_modes``, which import without the rest.
"""

from typing import Annotated, Any, Literal

from pydantic import AfterValidator, Field, ValidationInfo, field_validator

from kairox.config._model_base import ConfigModel
from kairox.config._modes import ApprovalPolicy, SandboxPolicy
from kairox.config._servers import DapServerConfig, LspServerConfig, McpServerConfig, check_domains

# --- policy --------------------------------------------------------------------------------------------------


class RulesConfig(ConfigModel):
    """Permission rules. Lists concatenate across layers; deny beats ask beats allow."""

    allow: list[str] = Field(default_factory=list)
    """Patterns allowed without asking, e.g. ``shell.exec(git status*)``."""
    ask: list[str] = Field(default_factory=list)
    """Patterns that always ask first."""
    deny: list[str] = Field(default_factory=list)
    """Patterns never allowed; deny always wins."""


class PolicyConfig(ConfigModel):
    approval_policy: ApprovalPolicy = ApprovalPolicy.ON_REQUEST
    """When to ask before a tool runs."""
    sandbox_policy: SandboxPolicy = SandboxPolicy.WORKSPACE_WRITE
    """What commands and writes may touch."""
    writable_roots: list[str] = Field(default_factory=list)
    """Extra writable roots besides the workspace and the temp dir (workspace_write only)."""
    network_access: bool = False
    """Whether sandboxed commands may use the network."""
    allow_unix_sockets: list[str] = Field(default_factory=list)
    """Host Unix sockets sandboxed commands may still connect to (``/var/run/docker.sock``); every other one stays
    hidden. Relative to the file that lists them; ``~`` is the home."""
    unconfined_servers: list[str] = Field(default_factory=list)
    """Servers that run without a sandbox, by key (``mcp_servers.github``, ``lsp_servers.pyright``): the user's
    acceptance of that risk, read only from the user, system and CLI layers (a project file's is ignored)."""
    rules: RulesConfig = Field(default_factory=RulesConfig)


class SandboxConfig(ConfigModel):
    """``[sandbox]``: what sandboxed processes may reach on the network (Y14)."""

    network: Literal["off", "on", "allowlist"] | None = None
    """``allowlist``: commands, hooks, plugin tools and servers reach only ``allowed_domains``, through a proxy
    Kairox runs; ``on``/``off`` set what commands get (servers keep their own ``network``). Unset:
    ``policy.network_access`` decides. A project file may only narrow it."""
    allowed_domains: Annotated[list[str], AfterValidator(check_domains)] = Field(default_factory=list)
    """Host names reachable under ``network = "allowlist"``: ``pypi.org``, or ``*.example.com`` for the names
    below it; never addresses. A project file may only narrow the list."""


# --- tools ---------------------------------------------------------------------------------------------------


class ToolsConfig(ConfigModel):
    output_limit_chars: int = Field(default=30_000, ge=1_000)
    """Results longer than this are spilled to a file (its path is returned) or truncated with a note."""
    spill_dir: str | None = None
    """Where spilled outputs go; default ``$KAIROX_HOME/spill``."""
    default_timeout_sec: float = Field(default=120.0, gt=0)
    """Timeout of a tool call without one of its own."""
    shell_env_passthrough: list[str] = Field(default_factory=list)
    """Variables passed to ``shell.exec`` even though their names contain KEY, SECRET or TOKEN."""
    disabled: list[str] = Field(default_factory=list)
    """Tool names (or ``*`` patterns) hidden from the model."""
    search_threshold: float | Literal["off"] = 0.1
    """Defer tool definitions behind ``tool_search`` when they pass this: a fraction of
    ``agent.context_window_tokens`` (up to 1), or tokens (above 1); ``off`` always sends every definition."""
    semantic: bool = False
    """Blend embeddings (the model provider's OpenAI-compatible ``/v1/embeddings``)
    into tool search's lexical ranking; off by default, never required."""
    embedding_model: str = "text-embedding-3-small"
    """The embeddings model ``tools.semantic`` asks the provider for."""
    semantic_weight: float = Field(default=0.5, ge=0, le=1)
    """The share of the embedding similarity in the blended score (the rest is the lexical score)."""

    @field_validator("search_threshold")
    @classmethod
    def _threshold_not_negative(cls, value: float | str) -> float | str:
        if isinstance(value, float) and value < 0:
            raise ValueError("tools.search_threshold must be 0 or more (a fraction up to 1, or tokens), or 'off'")
        return value


# --- skills, plugins, hooks, instructions ----------------------------------------------------------------------


class SkillEntryConfig(ConfigModel):
    enabled: bool = True
    """Offer this skill."""


class SubagentEntryConfig(ConfigModel):
    enabled: bool = True
    """Offer this agent to the ``task`` tool."""


class SkillsConfig(ConfigModel):
    dirs: list[str] = Field(default_factory=list)
    """Extra skill folders (user scope when set in the user layer, workspace scope in project layers)."""
    entries: dict[str, SkillEntryConfig] = Field(default_factory=dict)
    """Per-skill settings: ``[skills.entries."pr-review"] enabled = false``."""
    prompt_budget_chars: int = Field(default=8_000, ge=200)
    """Characters the skill catalog may take in the prompt context."""
    max_depth: int = Field(default=6, ge=1)
    """How deep skill folders are searched."""
    compat_dirs: bool = True
    """Also read ``.agents/skills``, ``.codex/skills``,
    ``.claw/skills``, ``.claude/skills`` and ``.claude/commands``."""


class PluginEntryConfig(ConfigModel):
    enabled: bool = True
    """Load this plugin."""
    disabled_contributions: list[str] = Field(default_factory=list)
    """``kind:name`` items of this plugin that are not loaded (``skill:pdf``, ``mcp_server:github``)."""
    path: str | None = None
    """Load this plugin from another folder."""


class MarketplaceConfig(ConfigModel):
    source: str
    """A local folder or a git URL holding ``.claude-plugin/marketplace.json``."""


class PluginsConfig(ConfigModel):
    paths: list[str] = Field(default_factory=list)
    """Plugin folders, relative to the file that lists them."""
    entries: dict[str, PluginEntryConfig] = Field(default_factory=dict)
    marketplaces: dict[str, MarketplaceConfig] = Field(default_factory=dict)


class HookConfig(ConfigModel):
    command: str
    """Shell command run with the JSON request on stdin."""
    matcher: str | None = None
    """Tool-name pattern (``fs.write``, ``mcp__github__*``, ``Bash|Edit``); all tools when absent."""
    timeout_sec: float = Field(default=60.0, gt=0)
    """A hook still running after this is stopped and reported."""
    fail_open: bool = False
    """A ``pre_tool_use`` hook that times out or cannot start blocks the call unless this is true (another event's
    failed hook is reported and the session goes on)."""


class HooksConfig(ConfigModel):
    """``[[hooks.pre_tool_use]]`` tables. Hook lists concatenate across layers."""

    session_start: list[HookConfig] = Field(default_factory=list)
    """When a session starts."""
    session_end: list[HookConfig] = Field(default_factory=list)
    """When a session ends."""
    user_prompt_submit: list[HookConfig] = Field(default_factory=list)
    """When the user sends a prompt."""
    pre_turn: list[HookConfig] = Field(default_factory=list)
    """Before each model turn; output is added as context."""
    post_turn: list[HookConfig] = Field(default_factory=list)
    """After each model turn."""
    pre_compact: list[HookConfig] = Field(default_factory=list)
    """Before older turns are summarised (``/compact`` or near the
    context window); output is added to the summary's instructions."""
    pre_tool_use: list[HookConfig] = Field(default_factory=list)
    """Before a tool call; may deny, ask or change the input."""
    post_tool_use: list[HookConfig] = Field(default_factory=list)
    """After a tool call."""
    subagent_start: list[HookConfig] = Field(default_factory=list)
    """When a ``task`` call starts a subagent (the matcher names the agent); output is added to its context."""
    subagent_stop: list[HookConfig] = Field(default_factory=list)
    """When a subagent has answered (the matcher names the agent)."""


class InstructionsConfig(ConfigModel):
    text: str = ""
    """Text added to every session of the repository."""
    files: list[str] = Field(default_factory=list)
    """Files whose text is added (relative to the file that lists them)."""
    memory_files: list[str] = Field(default_factory=lambda: ["AGENTS.md", "KAIROX.md"])
    """Project memory file names read from the repository root down to the working directory."""
    fallback_memory_files: list[str] = Field(default_factory=lambda: ["CLAUDE.md"])
    """Read in a folder that has none of ``memory_files``."""
    max_bytes: int = Field(default=32_768, ge=256)
    """Budget of memory and instruction text."""


# --- model and profiles --------------------------------------------------------------------------------------


class ModelProviderConfig(ConfigModel):
    base_url: str | None = None
    """Endpoint of an OpenAI-compatible or Anthropic API."""
    api_key_env: str | None = None
    """Variable holding the API key (the key itself is never written in config)."""
    wire_api: Literal["chat", "responses", "anthropic"] = "chat"
    """Protocol spoken with the endpoint: ``chat`` (OpenAI-compatible chat completions), ``responses`` (the OpenAI
    Responses API: reasoning items carried across turns) or ``anthropic`` (messages)."""
    headers: dict[str, str] = Field(default_factory=dict)
    """Extra HTTP headers sent with every request; redacted in output."""
    request_timeout_sec: float = Field(default=600.0, gt=0)
    """Timeout of one model request."""
    max_retries: int = Field(default=3, ge=0)
    """Retries of a request answered with 429 or 5xx (or not answered), with backoff honouring ``Retry-After``."""
    context_window: int | None = Field(default=None, ge=1_000)
    """Context window of the models this provider serves, in tokens; unset: the known
    window of the model's name (Claude, GPT), else ``agent.context_window_tokens``."""
    prompt_cache_key: bool | None = None
    """Send ``prompt_cache_key`` (one per workspace) with chat requests, so the provider keeps a workspace's
    requests on one prompt cache; unset: sent to OpenAI's own endpoint only (others may refuse the field)."""


class AgentConfig(ConfigModel):
    """``[agent]``: limits of a session's turns."""

    max_turns: int = Field(default=50, ge=1)
    """Model requests one prompt may take (each answer with tool calls asks again)."""
    max_tool_calls_per_turn: int = Field(default=100, ge=1)
    """Tool calls one prompt may make; further calls are answered as not run and the turn stops."""
    context_budget_tokens: int | None = Field(default=None, ge=1)
    """Stop before a request that would not fit (counted with the provider's usage); no limit when unset."""
    max_output_tokens: int = Field(default=8192, ge=1)
    """Tokens one model answer may take (sent as ``max_tokens`` where the API needs it)."""
    context_window_tokens: int = Field(default=128_000, ge=1_000)
    """The model's context window when neither its provider's ``context_window`` nor
    its known name says it; ``tools.search_threshold`` is a fraction of the window."""
    compact_threshold: float | Literal["off"] = 0.85
    """Compact the conversation (older turns summarised by the model) before a request
    that would take this share of the context window; ``off``: only ``/compact``."""
    compact_keep_turns: int = Field(default=2, ge=0)
    """Recent prompts (with their answers and tool calls) that compaction keeps word for word."""
    tools_warning_share: float | Literal["off"] = 0.1
    """Warn when the tool definitions sent with a request alone take this share of the context window."""
    max_concurrent_tasks: int = Field(default=4, ge=1)
    """``task`` calls (subagents) of one model answer that run at once; the others wait for a place."""
    max_task_depth: int = Field(default=1, ge=0)
    """How deep subagents nest: 1 lets the session start subagents that start none; 0 turns ``task`` off."""
    subagents: dict[str, SubagentEntryConfig] = Field(default_factory=dict)
    """Per-agent settings: ``[agent.subagents."reviewer"] enabled = false``."""

    @field_validator("compact_threshold", "tools_warning_share")
    @classmethod
    def _share(cls, value: float | str, info: ValidationInfo) -> float | str:
        if isinstance(value, float) and not 0 < value <= 1:
            raise ValueError(
                f"agent.{info.field_name} must be a share of the context "
                "window above 0 and up to 1 (0.85 is 85%), or 'off'"
            )
        return value


class CatalogSourceConfig(ConfigModel):
    """``[[mcp_catalog.sources]]``: one remote catalog of MCP servers."""

    name: str = Field(pattern=r"^[A-Za-z0-9_.-]+$")
    """Name shown as the provenance of its entries (``kairox mcp catalog list --source NAME``)."""
    url: str
    """A JSON manifest (a list of ``server.json`` entries) or the base URL of a registry."""
    kind: Literal["manifest", "registry"] = "manifest"
    """``manifest``: one JSON document; ``registry``: the MCP Registry API (``/v0.1/servers``, cursor paging)."""


class McpCatalogConfig(ConfigModel):
    url: str | None = None
    """A JSON catalog (manifest) served over HTTP(S), used as one more source; the built-in catalog is always there."""
    sources: list[CatalogSourceConfig] = Field(default_factory=list)
    """Remote catalogs, later ones override earlier ones entry by entry."""
    cache_ttl_sec: int = Field(default=86_400, ge=0)
    """How long the fetched catalog is used before it is fetched again."""


class ProfileConfig(ConfigModel):
    """``[profiles.NAME]``: applied over the files when ``--profile NAME`` (or ``profile = NAME``) is set."""

    model: str | None = None
    """Model of this profile."""
    model_provider: str | None = None
    """Provider of this profile."""
    policy: dict[str, Any] = Field(default_factory=dict)
    """Keys of ``[policy]`` this profile overrides."""
    tools: dict[str, Any] = Field(default_factory=dict)
    """Keys of ``[tools]`` this profile overrides."""
    skills: dict[str, Any] = Field(default_factory=dict)
    """Keys of ``[skills]`` this profile overrides."""
    instructions: dict[str, Any] = Field(default_factory=dict)
    """Keys of ``[instructions]`` this profile overrides."""


class GatewayConfig(ConfigModel):
    """``[gateway]``: ``kairox serve`` for a team (user layer only: it routes credentials)."""

    store: str | None = None
    """Where the gateway keeps its state: ``postgresql://...`` for replicas, ``sqlite:///PATH`` for one machine;
    ``$KAIROX_HOME/gateway.sqlite3`` when unset. ``--store`` overrides it."""
    users_file: str | None = None
    """A JSON or TOML map of user -> token (or ``sha256:HEX``): a person per token. ``--users-file`` overrides it."""
    oidc_issuer: str | None = None
    """Accept JWTs of this OpenID Connect issuer (checked against its JWKS); ``--oidc-issuer`` overrides it."""
    oidc_audience: str | None = None
    """The audience those JWTs must name."""
    oidc_user_claim: str = "sub"
    """The claim that names the user (its ``groups`` claim names the user's groups)."""
    calls_per_minute: int | None = Field(default=None, ge=1)
    """Tool calls a user may make per minute, across the replicas; past it, 429 with ``Retry-After``."""
    rules: dict[str, RulesConfig] = Field(default_factory=dict)
    """``[gateway.rules.bob]``, ``[gateway.rules."@contractors"]``: allow / ask / deny rules for one user's or group's
    calls, under the policy's own (a deny of either wins; an ask of the policy's stays an ask)."""


class KairoxConfig(ConfigModel):
    """The whole configuration, as resolved from every layer."""

    model: str | None = None
    """Model name the agent runtime uses."""
    model_provider: str | None = None
    """Which ``[model_providers.NAME]`` entry serves the model."""
    model_providers: dict[str, ModelProviderConfig] = Field(default_factory=dict)
    agent: AgentConfig = Field(default_factory=AgentConfig)
    profile: str | None = None
    """Profile applied when ``--profile`` is not given."""
    profiles: dict[str, ProfileConfig] = Field(default_factory=dict)
    policy: PolicyConfig = Field(default_factory=PolicyConfig)
    sandbox: SandboxConfig = Field(default_factory=SandboxConfig)
    tools: ToolsConfig = Field(default_factory=ToolsConfig)
    mcp_servers: dict[str, McpServerConfig] = Field(default_factory=dict)
    mcp_catalog: McpCatalogConfig = Field(default_factory=McpCatalogConfig)
    lsp_servers: dict[str, LspServerConfig] = Field(default_factory=dict)
    dap_servers: dict[str, DapServerConfig] = Field(default_factory=dict)
    skills: SkillsConfig = Field(default_factory=SkillsConfig)
    plugins: PluginsConfig = Field(default_factory=PluginsConfig)
    hooks: HooksConfig = Field(default_factory=HooksConfig)
    instructions: InstructionsConfig = Field(default_factory=InstructionsConfig)
    gateway: GatewayConfig = Field(default_factory=GatewayConfig)


SERVER_SECTIONS = ("mcp_servers", "lsp_servers", "dap_servers")
"""Sections whose entries a higher layer replaces whole."""

CONCAT_LISTS = (
    "policy.rules.allow",
    "policy.rules.ask",
    "policy.rules.deny",
    "mcp_catalog.sources",
    *tuple(f"hooks.{event}" for event in HooksConfig.model_fields),
)
"""Lists that concatenate across layers instead of replacing."""

PROJECT_FORBIDDEN = ("model_provider", "model_providers", "gateway")
"""Keys that route credentials or model endpoints: never taken from project layers."""

USER_ONLY_KEYS = ("policy.unconfined_servers",)
"""Keys that lift the sandbox off servers: never taken from project layers (a project cannot unconfine)."""
NARROW_ONLY_KEYS = ("sandbox.network", "sandbox.allowed_domains")  # a project file's value only narrows the user's
