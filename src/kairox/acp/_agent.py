"""The ACP agent: each editor session is a Kairox session over the editor's ``cwd``, opened by the one opener every
front end uses, with the editor's MCP servers added for that session (as the command line's ``-c`` would add them:
confined, behind the gate). A session lives in a task of its own that enters and leaves it; requests reach it by
its id, which is its transcript's."""

import contextlib
import dataclasses
import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import anyio
import anyio.abc
from acp import PROTOCOL_VERSION, RequestError, helpers, run_agent, schema

from kairox import __version__
from kairox.acp._editor import EditorApprover, editor_host
from kairox.acp._updates import EditorUpdates, history_updates
from kairox.agent import (
    AgentSession,
    ImagePart,
    ModelSetupError,
    SessionNotFoundError,
    TurnEndReason,
    model_settings,
    open_workspace,
)
from kairox.config import ApprovalPolicy, resolve_config
from kairox.errors import KairoxError
from kairox.runtime import RuntimeOptions, extension_commands
from kairox.tools import BuiltinSettings, BuiltinToolProvider

if TYPE_CHECKING:
    from acp.interfaces import Agent

MODES = (ApprovalPolicy.UNTRUSTED, ApprovalPolicy.NEVER, ApprovalPolicy.ON_REQUEST, ApprovalPolicy.ON_FAILURE)
"""Approval policies as session modes, narrowest first: a session offers its configured one and those before it
(the meaning of each: docs/editors.md)."""
_STOPS: dict[str, schema.StopReason] = {
    "cancelled": "cancelled",
    "blocked": "refusal",
    "max_turns": "max_turn_requests",
    "max_tool_calls": "max_turn_requests",
    "context_budget": "max_tokens",
    "length": "max_tokens",
    "max_tokens": "max_tokens",
    "max_output_tokens": "max_tokens",
    "refusal": "refusal",
    "content_filter": "refusal",
}
"""ACP's stop reasons for a turn's end (``TurnEndReason``) and for the provider's reason of a complete answer."""


def server_overrides(servers: Sequence[Any]) -> list[str]:
    """The editor's MCP servers as ``mcp_servers.NAME`` overrides of the command-line layer (a user's authority)."""
    import tomlkit

    out = []
    for server in servers:
        if isinstance(server, schema.McpServerStdio):
            entry: dict[str, Any] = {"command": server.command, "args": list(server.args)}
            entry["env"] = {e.name: e.value for e in server.env}
        elif isinstance(server, schema.HttpMcpServer | schema.SseMcpServer):
            kind = "sse" if isinstance(server, schema.SseMcpServer) else "streamable_http"
            entry = {"type": kind, "url": server.url, "headers": {h.name: h.value for h in server.headers}}
        else:
            continue
        table = tomlkit.inline_table()
        table.update(entry)
        out.append(f"mcp_servers.{json.dumps(server.name)}={table.as_string()}")
    return out


def prompt_parts(blocks: Sequence[Any]) -> tuple[str, list[ImagePart]]:
    """A prompt's text (embedded resources as context, links by name) and images."""
    texts, images = [], []
    for block in blocks:
        if isinstance(block, schema.TextContentBlock):
            texts.append(block.text)
        elif isinstance(block, schema.ImageContentBlock):
            images.append(ImagePart(data=block.data, mime_type=block.mime_type))
        elif isinstance(block, schema.EmbeddedResourceContentBlock):
            text = getattr(block.resource, "text", None)
            body = text if text is not None else "(binary content, not shown)"
            texts.append(f'<context uri="{block.resource.uri}">\n{body}\n</context>')
        elif isinstance(block, schema.ResourceContentBlock):
            texts.append(f"[{block.name}]({block.uri})")
    return "\n\n".join(texts), images


@dataclasses.dataclass(kw_only=True)
class EditorSession:
    updates: EditorUpdates
    session: AgentSession
    modes: tuple[ApprovalPolicy, ...]
    leave: anyio.Event = dataclasses.field(default_factory=anyio.Event)

    def mode_state(self) -> schema.SessionModeState:
        return schema.SessionModeState(
            current_mode_id=str(self.session.context.registry.settings.policy.approval),
            available_modes=[schema.SessionMode(id=str(m), name=f"approval: {m}") for m in self.modes],
        )


class KairoxAgent:
    """The ACP ``Agent``: the SDK calls these methods with each request's parameters."""

    def __init__(self, options: RuntimeOptions, tasks: anyio.abc.TaskGroup) -> None:
        self.options, self.tasks = options, tasks
        self.conn: Any = None
        self.capabilities = schema.ClientCapabilities()
        self.sessions: dict[str, EditorSession] = {}

    def on_connect(self, conn: Any) -> None:
        self.conn = conn

    async def initialize(
        self, protocol_version: int, client_capabilities: schema.ClientCapabilities | None = None, **_: Any
    ) -> schema.InitializeResponse:
        self.capabilities = client_capabilities or schema.ClientCapabilities()
        auth: list[Any] = []
        with contextlib.suppress(KairoxError):
            options = self.options
            resolved = resolve_config(options.workspace, cli_overrides=options.overrides, profile=options.profile)
            settings = model_settings(resolved)
            if settings.api_key_env:
                variable = schema.AuthEnvVar(name=settings.api_key_env, label=f"{settings.provider} API key")
                name = f"{settings.provider} API key in {settings.api_key_env}"
                auth.append(
                    schema.EnvVarAuthMethod(type="env_var", id=settings.api_key_env, name=name, vars=[variable])
                )
        return schema.InitializeResponse(
            protocol_version=min(protocol_version, PROTOCOL_VERSION),
            agent_capabilities=schema.AgentCapabilities(
                load_session=True,
                prompt_capabilities=schema.PromptCapabilities(image=True, embedded_context=True),
                mcp_capabilities=schema.McpCapabilities(http=True, sse=True),
            ),
            auth_methods=auth,
            agent_info=schema.Implementation(name="kairox", title="Kairox", version=__version__),
        )

    async def authenticate(self, method_id: str, **_: Any) -> schema.AuthenticateResponse:
        if not os.environ.get(method_id):
            raise RequestError.auth_required({"message": f"{method_id} is not set in the environment Kairox runs in"})
        return schema.AuthenticateResponse()

    async def new_session(
        self, cwd: str, mcp_servers: Sequence[Any] | None = None, **_: Any
    ) -> schema.NewSessionResponse:
        entry = await self._open(cwd, mcp_servers or (), resume=None)
        return schema.NewSessionResponse(session_id=entry.updates.session_id, modes=entry.mode_state())

    async def load_session(
        self, cwd: str, session_id: str, mcp_servers: Sequence[Any] | None = None, **_: Any
    ) -> schema.LoadSessionResponse:
        # one Kairox session per transcript: an open one is shown again as it is
        entry = self.sessions.get(session_id) or await self._open(cwd, mcp_servers or (), resume=session_id)
        registry = entry.session.context.registry
        for update in history_updates(entry.session.messages, Path(cwd), registry.from_wire_name):
            entry.updates.send(update)
        await entry.updates.flush()
        return schema.LoadSessionResponse(modes=entry.mode_state())

    async def set_session_mode(self, mode_id: str, session_id: str, **_: Any) -> schema.SetSessionModeResponse:
        entry = self._session(session_id)
        if mode_id not in entry.modes:
            offered = ", ".join(entry.modes)
            raise RequestError.invalid_params(
                {"message": f"mode {mode_id!r} is not offered: the configuration allows {offered}"}
            )
        registry = entry.session.context.registry
        policy = dataclasses.replace(registry.settings.policy, approval=ApprovalPolicy(mode_id))
        registry.settings = dataclasses.replace(registry.settings, policy=policy)
        return schema.SetSessionModeResponse()

    async def cancel(self, session_id: str, **_: Any) -> None:
        if session_id in self.sessions:
            self.sessions[session_id].session.cancel()

    async def prompt(self, prompt: Sequence[Any], session_id: str, **_: Any) -> schema.PromptResponse:
        entry = self._session(session_id)
        session, updates = entry.session, entry.updates
        text, images = prompt_parts(prompt)
        name, _space, args = text[1:].partition(" ") if text.startswith("/") else ("", "", "")
        if name == "compact":
            compacted = await session.compact(args.strip() or None)
            updates.send(helpers.update_agent_message_text(getattr(compacted, "message", None) or "Compacted."))
            await updates.flush()
            return schema.PromptResponse(stop_reason="end_turn")
        command = next((c for c in extension_commands(session.context.skills, ("compact",)) if c.name == name), None)
        if command is not None and command.skill is not None:
            from kairox.skills import command_prompt

            skill = session.context.skills.require(command.skill).skill
            try:
                registry = session.context.registry
                text = command_prompt(skill, args, registered=lambda: [s.name for s in registry.tools()])
            except KairoxError as exc:
                raise RequestError.invalid_params({"message": f"/{name}: {exc}"}) from exc
        updates.stop_reason = None
        try:
            result = await session.run_turn(text, images=images)
        except KairoxError as exc:  # a turn already running
            raise RequestError.invalid_request({"message": str(exc)}) from exc
        if result.reason is TurnEndReason.ERROR:
            await updates.flush()
            raise RequestError.internal_error({"message": result.message})
        if result.message and result.reason is not TurnEndReason.CANCELLED:
            updates.send(helpers.update_agent_message_text(f"\n\n({result.message})"))
        await updates.flush()
        stop = _STOPS.get(result.reason) or _STOPS.get(updates.stop_reason or "", "end_turn")
        return schema.PromptResponse(stop_reason=stop)

    # --- sessions -------------------------------------------------------------------------------------------

    def _session(self, session_id: str) -> EditorSession:
        if session_id not in self.sessions:
            raise RequestError.resource_not_found(session_id)
        return self.sessions[session_id]

    async def _open(self, cwd: str, servers: Sequence[Any], *, resume: str | None) -> EditorSession:
        options = dataclasses.replace(
            self.options, workspace=Path(cwd), overrides=(*self.options.overrides, *server_overrides(servers))
        )
        try:
            entry: EditorSession = await self.tasks.start(self._hold, options, resume)
        except SessionNotFoundError as exc:
            raise RequestError.resource_not_found(resume) from exc
        except ModelSetupError as exc:
            raise RequestError.auth_required({"message": str(exc)}) from exc
        except KairoxError as exc:
            raise RequestError.internal_error({"message": str(exc)}) from exc
        self.sessions[entry.updates.session_id] = entry
        self.tasks.start_soon(self._announce, entry)
        return entry

    async def _hold(
        self, options: RuntimeOptions, resume: str | None, *, task_status: anyio.abc.TaskStatus[EditorSession]
    ) -> None:
        """Enter the session, serve it until it is left, leave it here (anyio cancel scopes belong to one task)."""
        updates = EditorUpdates(self.conn, options.workspace or Path.cwd())
        async with (
            open_workspace(
                cli=options, session=True, approver=EditorApprover(self.conn, updates), events=[updates], resume=resume
            ) as opened,
            anyio.create_task_group() as sending,
        ):
            session = opened.session
            assert session is not None  # session=True opens one or raises
            updates.session_id, updates.session = session.session_id, session
            context = session.context
            host = editor_host(self.conn, updates, self.capabilities)
            if host.read_text or host.write_text or host.run:
                settings = BuiltinSettings.from_config(context.resolved.config.tools)
                await context.registry.add_provider(BuiltinToolProvider(dataclasses.replace(settings, host=host)))
            configured = context.registry.settings.policy.approval
            modes = MODES[: MODES.index(configured) + 1]
            entry = EditorSession(updates=updates, session=session, modes=modes)
            sending.start_soon(updates.pump)
            task_status.started(entry)
            await entry.leave.wait()
            await updates.flush()
            sending.cancel_scope.cancel()

    async def _announce(self, entry: EditorSession) -> None:
        """After ``session/new`` answered: the slash commands, and why an untrusted workspace's servers wait."""
        context = entry.session.context
        commands = [schema.AvailableCommand(name="compact", description="summarise older turns to free the context")]
        commands += [
            schema.AvailableCommand(
                name=c.name,
                description=c.description or c.source,
                input=schema.AvailableCommandInput(root=schema.UnstructuredCommandInput(hint=c.argument_hint))
                if c.argument_hint
                else None,
            )
            for c in extension_commands(context.skills, ("compact",))
        ]
        resolved = context.resolved
        if not resolved.trusted:
            held = "".join(f"\n- {p.key}: {p.reason}" for p in resolved.pending)
            entry.updates.send(
                helpers.update_agent_message_text(
                    f"This workspace ({resolved.workspace}) is not trusted: its project settings cannot start servers,"
                    f" run hooks or widen the policy. Run `kairox trust` in it, then start a new session.{held}\n\n"
                )
            )
        entry.updates.send(helpers.update_available_commands(commands))

    def close_all(self) -> None:
        """Leave every session (the task group waits until each has stopped its servers)."""
        for entry in self.sessions.values():
            entry.session.cancel()
            entry.leave.set()


async def serve(options: RuntimeOptions) -> None:
    """Serve ACP on stdin/stdout until the editor closes stdin; every session is left, its servers stopped."""
    async with anyio.create_task_group() as tasks:
        agent = KairoxAgent(options, tasks)
        try:
            await run_agent(cast("Agent", agent))
        finally:
            agent.close_all()
