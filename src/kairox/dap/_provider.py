"""``DapToolProvider``: the ``dap.*`` tools over debug sessions, one adapter per session id.

``continue``, ``next``, ``step_*`` and ``pause`` return what the program did next: the ``stopped`` event
(reason, location, top frame) or its end (exit code and output).
"""

import contextlib
import contextvars
from collections.abc import Awaitable, Callable, Collection, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from types import TracebackType
from typing import Any, Self

import anyio
import anyio.abc

from kairox._rpc._errors import RpcError
from kairox._rpc._status import ServerStatus, usable_servers
from kairox._util._json import JsonObject
from kairox.config import DapServerConfig, SandboxPolicy
from kairox.dap._client import DapClient
from kairox.dap._errors import DapError, DapSessionError, DapStartupError
from kairox.dap._events import DapProgramStopped
from kairox.dap._lifecycle import DapServerLifecycle
from kairox.dap._session import (
    DebugSession,
    attach_allowed,
    breakpoint_lines,
    display_path,
    evaluation,
    frame_record,
    launch_place,
    program_reply,
    scope_records,
    stack_text,
    valid_session_id,
    variable_lines,
    variable_records,
    workspace_path,
)
from kairox.dap._session import wait_seconds as _wait
from kairox.dap._specs import dap_tool_specs
from kairox.errors import SandboxUnavailableError, ToolCallError
from kairox.events import EventSink, NullSink
from kairox.sandbox import (
    SETUP_ATTEMPTS,
    ConfigurationWatch,
    SandboxSettings,
    ServerConfinement,
    adapter_confinement,
    adapter_sandbox,
    adapter_settings,
    created_note,
    protected_roots,
    vanished_before_start,
)
from kairox.tools import CallContext, ToolProvider, ToolResult, ToolSpec

Handler = Callable[[JsonObject, CallContext], Awaitable[ToolResult]]
_SUFFIX_LANGUAGES = {".py": "python", ".js": "javascript", ".ts": "typescript", ".go": "go", ".rs": "rust"}
_READING: contextvars.ContextVar[Callable[[Path], str | None] | None] = contextvars.ContextVar(
    "dap_reading", default=None
)
"""What the rules on reading keep this call from showing (``CallContext.unreadable``), for the source lines of
stack frames, which are read outside the sandbox. A context variable: concurrent calls each keep their own."""


class DapToolProvider(ToolProvider):
    """``async with DapToolProvider(config.dap_servers, workspace=root, events=sink) as provider:``.

    Each ``dap.launch`` / ``dap.attach`` starts a session with its own adapter; leaving the block ends them all.
    """

    origin = "dap"

    def __init__(
        self,
        servers: Mapping[str, DapServerConfig],
        *,
        workspace: Path,
        events: EventSink | None = None,
        pending: Collection[str] = (),
        held: Mapping[str, str] | None = None,
        host_env: Mapping[str, str] | None = None,
        log_dir: Path | None = None,
        base_dirs: Mapping[str, Path] | None = None,
        confine: "Callable[[str, DapServerConfig], ServerConfinement | None] | None" = None,
    ) -> None:
        super().__init__()
        self._confine = confine or (lambda name, config: None)
        """The adapter's profile and state folder (it narrows the call's sandbox; none given: the call's alone)."""
        self._base_dirs = dict(base_dirs or {})
        self.workspace = workspace.resolve()
        self.events: EventSink = events or NullSink()
        self.configs = usable_servers("dap_servers", servers, pending)
        self.held = {
            name: why
            for name, why in (held or {}).items()
            if name in servers and name not in self.configs and servers[name].enabled
        }
        """Adapters trust holds back, with why in the runtime's words (``pending re-trust: ...``)."""
        self._host_env = host_env
        self._log_dir = log_dir
        self.sessions: dict[str, DebugSession] = {}
        self._tg: anyio.abc.TaskGroup | None = None
        self._handlers: dict[str, Handler] = {
            "dap.launch": self._launch,
            "dap.attach": lambda a, _: self._attach(a),
            "dap.set_breakpoints": lambda a, _: self._set_breakpoints(a),
            "dap.continue": lambda a, _: self._resume(a, "continue"),
            "dap.next": lambda a, _: self._resume(a, "next"),
            "dap.step_in": lambda a, _: self._resume(a, "stepIn"),
            "dap.step_out": lambda a, _: self._resume(a, "stepOut"),
            "dap.pause": lambda a, _: self._resume(a, "pause"),
            "dap.threads": lambda a, _: self._threads(a),
            "dap.stack_trace": lambda a, _: self._stack_trace(a),
            "dap.scopes": lambda a, _: self._scopes(a),
            "dap.variables": lambda a, _: self._variables(a),
            "dap.evaluate": lambda a, _: self._evaluate(a),
            "dap.disconnect": lambda a, _: self._disconnect(a),
        }

    async def __aenter__(self) -> Self:
        self._tg = anyio.create_task_group()
        await self._tg.__aenter__()
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        assert self._tg is not None
        with anyio.CancelScope(shield=True):
            for session in list(self.sessions.values()):
                await session.lifecycle.stop()
        self._tg.cancel_scope.cancel()
        await self._tg.__aexit__(None, None, None)  # the body's exception is not the supervisors' business

    async def list_tools(self) -> Sequence[ToolSpec]:
        return dap_tool_specs() if self.configs else []

    async def call_tool(self, name: str, arguments: JsonObject, context: CallContext) -> ToolResult:
        tool = name if name in self._handlers else f"dap.{name.removeprefix('dap_')}"
        handler = self._handlers.get(tool)
        if handler is None:
            raise ToolCallError(tool=name, reason="not a DAP tool", hint="`kairox tools list` shows the tools")
        if tool == "dap.attach":
            self._check_attach(name, str(arguments.get("host") or "127.0.0.1"), context)
        reading = _READING.set(context.unreadable)
        try:
            result = await handler(arguments, context)
        except (DapError, RpcError) as exc:
            raise ToolCallError(tool=name, reason=exc.message, hint=exc.hint) from exc
        except SandboxUnavailableError as exc:  # fail closed, as shell.exec does
            raise ToolCallError(tool=name, reason=exc.message, hint=exc.hint) from exc
        finally:
            _READING.reset(reading)
        if result.structured is None:
            return result
        # the rendered lines (where it stopped, the frames with their source lines) go with the structured form:
        # some hosts show the model only that form
        return replace(result, structured={**result.structured, "text": result.text_content()})

    @staticmethod
    def _check_attach(name: str, host: str, context: CallContext) -> None:
        """The provider's own refusals of an attach (the policy asks first): no Kairox sandbox holds the program."""
        if context.sandbox.mode is SandboxPolicy.READ_ONLY:
            raise ToolCallError(
                tool=name,
                reason=(
                    "the program attached to runs outside Kairox's sandbox, which the read_only sandbox policy forbids"
                ),
                hint="launch the program with dap.launch instead: it then runs in the read-only sandbox",
            )
        if not attach_allowed(host, context.sandbox):
            raise ToolCallError(
                tool=name,
                reason=f"attaching to {host} reaches the network, which policy.network_access forbids",
                hint="attach to a program listening on 127.0.0.1, or set policy.network_access = true",
            )

    def status(self) -> list[JsonObject]:
        return [session.snapshot() for session in self.sessions.values()]

    def confinements(self, sandbox: SandboxSettings) -> dict[str, JsonObject]:
        """How each configured adapter would run under ``sandbox`` (the policy's), for ``doctor`` and the UIs."""
        confined = sandbox.mode is not SandboxPolicy.DANGER_FULL_ACCESS
        return {
            name: adapter_confinement(confined, self._confine(name, config), sandbox)
            for name, config in self.configs.items()
        }

    # --- sessions ------------------------------------------------------------------------------------------------

    def _held_error(self, name: str) -> DapSessionError:
        return DapSessionError(
            f"debug adapter {name!r} is {self.held[name]}",
            hint="`kairox trust` in the workspace reviews the entry; the adapter starts once it is trusted",
        )

    def _server(self, name: Any, program: Path | None) -> tuple[str, DapServerConfig]:
        if isinstance(name, str) and name in self.held:
            raise self._held_error(name)
        if isinstance(name, str) and name:
            if name not in self.configs:
                raise DapSessionError(f"no debug adapter named {name!r}", hint=f"adapters: {', '.join(self.configs)}")
            return name, self.configs[name]
        if not self.configs and self.held:
            raise self._held_error(next(iter(self.held)))
        if not self.configs:
            raise DapSessionError("no debug adapter is configured", hint="add [dap_servers.NAME] to kairox.toml")
        language = _SUFFIX_LANGUAGES.get(program.suffix) if program else None
        for server, config in self.configs.items():
            if language and language in config.languages:
                return server, config
        return next(iter(self.configs.items()))

    def _session(self, args: JsonObject) -> DebugSession:
        wanted = args.get("session")
        if isinstance(wanted, str) and wanted:
            if wanted not in self.sessions:
                known = ", ".join(self.sessions) or "none"
                raise DapSessionError(f"no debug session {wanted!r}", hint=f"sessions: {known}")
            return self.sessions[wanted]
        live = [s for s in self.sessions.values() if s.state != "ended"]
        if not live:
            raise DapSessionError("no debug session is running", hint="start one with dap.launch or dap.attach")
        return live[-1]

    def _client(self, session: DebugSession) -> DapClient:
        client = session.lifecycle.client
        if session.lifecycle.status is ServerStatus.FAILED:
            session.state = "ended"
            raise DapSessionError(
                f"the debug adapter of session {session.id!r} failed: {session.lifecycle.reason}",
                hint="start a new session with dap.launch or dap.attach",
            )
        if session.state == "ended" or client is None or not client.alive:
            raise DapSessionError(f"debug session {session.id!r} has ended", hint="start a new one with dap.launch")
        return client

    def _new_id(self, args: JsonObject) -> str:
        wanted = args.get("session")
        if isinstance(wanted, str) and wanted:
            if not valid_session_id(wanted):  # it names the adapter's log file
                raise DapSessionError(
                    f"session id {wanted!r} may only hold letters, digits, '-' and '_'",
                    hint="e.g. s1 or api-test",
                )
            if wanted in self.sessions and self.sessions[wanted].state != "ended":
                raise DapSessionError(f"debug session {wanted!r} is still running", hint="use another id")
            return wanted
        number = len(self.sessions) + 1
        while f"s{number}" in self.sessions:
            number += 1
        return f"s{number}"

    async def _open(self, args: JsonObject, command: str, arguments: JsonObject, target: str, *,
                    program: Path | None, connect: tuple[str, int] | None, cwd: Path | None = None,
                    sandbox: Sequence[str] = (), confinement: ServerConfinement | None = None,
                    call_sandbox: SandboxSettings | None = None) -> ToolResult:  # fmt: skip
        assert self._tg is not None
        session_id = self._new_id(args)
        server, config = self._server(args.get("server"), program)
        lifecycle = DapServerLifecycle(
            server,
            lambda: DapClient(
                server,
                config,
                workspace=self.workspace,
                connect=connect,
                host_env=self._host_env,
                stderr_log=self._log_dir / f"dap-{session_id}.log" if self._log_dir else None,
                base_dir=self._base_dirs.get(server),
                cwd=cwd,
                sandbox=sandbox,
                state_dir=confinement.state_dir if confinement is not None and sandbox else None,
            ),
            session=session_id,
            task_group=self._tg,
            confinement_state=adapter_confinement(bool(sandbox), confinement, call_sandbox),
            events=self.events,
        )
        breakpoints = self._breakpoints(args)
        filters = [str(f) for f in args.get("stop_on_exceptions") or []]
        session = DebugSession(id=session_id, server=server, target=target, lifecycle=lifecycle)
        if call_sandbox is not None:
            roots = protected_roots(adapter_settings(call_sandbox, confinement), self.workspace)
            session.watch = await ConfigurationWatch.start(roots)
        self.sessions[session_id] = session
        try:
            client = await lifecycle.start()
            placed = await client.start_session(command, arguments, breakpoints=breakpoints, exception_filters=filters)
        except BaseException:
            session.state = "ended"
            await lifecycle.stop()
            raise
        session.state = "running"
        header = [f"Debug session {session_id} ({server}): {target}"]
        for path, found in placed.items():
            header += [f"breakpoint {line}" for line in breakpoint_lines(display_path(path, self.workspace), found)]
        return await self._outcome(session, 0, _wait(args), header)

    async def _launch(self, args: JsonObject, context: CallContext) -> ToolResult:
        place = launch_place(args, workspace=self.workspace, unreadable=context.unreadable)
        program = place.program
        server, config = self._server(args.get("server"), program)
        confinement = self._confine(server, config)
        arguments: JsonObject = {"console": "internalConsole", "justMyCode": True, **config.launch}
        arguments.update(
            program=str(program),
            args=[str(a) for a in args.get("args") or []],
            cwd=str(place.cwd),
            stopOnEntry=bool(args.get("stop_on_entry", False)),
        )
        if isinstance(args.get("env"), dict):
            arguments["env"] = {str(k): str(v) for k, v in args["env"].items()}
        for attempt in range(1, SETUP_ATTEMPTS + 1):
            # the adapter, and the debuggee it starts, run in the sandbox shell.exec commands run in
            sandbox = await adapter_sandbox(
                context.sandbox, workspace=self.workspace, cwd=place.cwd, confinement=confinement
            )
            try:
                return await self._open(
                    args,
                    "launch",
                    arguments,
                    display_path(program, self.workspace),
                    program=program,
                    connect=None,
                    cwd=place.cwd,
                    sandbox=sandbox,
                    confinement=confinement,
                    call_sandbox=context.sandbox,
                )
            except DapStartupError as exc:
                # bwrap stopped before the adapter: a path it was to cover went away after it was listed
                if attempt == SETUP_ATTEMPTS or not vanished_before_start(
                    sandbox, 1, b"", exc.stderr_tail.strip().encode()
                ):
                    raise
        raise AssertionError("unreachable: the last attempt returns or raises")

    async def _attach(self, args: JsonObject) -> ToolResult:
        host = str(args.get("host") or "127.0.0.1")
        port = args.get("port")
        if not isinstance(port, int):
            raise DapSessionError("`port` must be a number")
        _, config = self._server(args.get("server"), None)
        arguments: JsonObject = {"justMyCode": True, **config.launch}
        arguments.pop("program", None)
        return await self._open(
            args, "attach", arguments, f"attached to {host}:{port}", program=None, connect=(host, port)
        )

    # --- waiting for the program ---------------------------------------------------------------------------------

    async def _outcome(self, session: DebugSession, since: int, wait: float, header: list[str]) -> ToolResult:
        """What the program did after event ``since``: stopped, ended, or still running after ``wait`` seconds."""
        client = self._client(session)
        assert client.dap is not None
        found = await client.dap.wait_event({"stopped", "terminated", "exited"}, since=since, timeout=wait)
        output = self._collect_output(session, client)
        if found is None and not client.dap.closed:
            session.state = "running"
            session.cursor = len(client.dap.events)
            lines = [*header, f"The program is running (nothing stopped it within {wait:g}s)."]
            return program_reply(session.id, lines, output, {"state": "running"})
        if found is not None and found[1].get("event") == "stopped":
            index, event = found
            session.cursor = index + 1
            return await self._stopped(session, client, event, header, output)
        # the program ended: collect the exit code, then end the session (disconnect, reap the adapter)
        await client.dap.wait_event({"terminated"}, since=since, timeout=2.0)
        for event in client.dap.events[since:]:
            if event.get("event") == "exited":
                session.exit_code = (event.get("body") or {}).get("exitCode")
        output += self._collect_output(session, client)
        session.state = "ended"
        await session.lifecycle.stop()
        code = f" with exit code {session.exit_code}" if session.exit_code is not None else ""
        lines = [*header, f"The program ended{code}; debug session {session.id} is closed."]
        extra: JsonObject = {"state": "ended", "exit_code": session.exit_code}
        created = await session.watch.created() if session.watch is not None else []
        if created:  # the sandbox cannot refuse a new file there; trust pins keep it inert
            lines.append(created_note(created))
            extra["created_configuration"] = [str(p) for p in created]
        return program_reply(session.id, lines, output, extra)

    def _collect_output(self, session: DebugSession, client: DapClient) -> str:
        assert client.dap is not None
        events = client.dap.events
        start = session.output_cursor
        texts = [
            str((e.get("body") or {}).get("output", ""))
            for e in events[start:]
            if e.get("event") == "output" and (e.get("body") or {}).get("category") in ("stdout", "stderr")
        ]
        session.output_cursor = len(events)
        return "".join(texts)

    async def _stopped(
        self, session: DebugSession, client: DapClient, event: JsonObject, header: list[str], output: str
    ) -> ToolResult:
        body = event.get("body") or {}
        reason = str(body.get("reason", "stopped"))
        thread_id = body.get("threadId") if isinstance(body.get("threadId"), int) else session.thread_id
        if thread_id is None:
            thread_id = await self._first_thread(client)
        frame: JsonObject | None = None
        if thread_id is not None:
            trace = await client.request("stackTrace", {"threadId": thread_id, "startFrame": 0, "levels": 1})
            frames = trace.get("stackFrames") or []
            frame = self._frame(frames[0]) if frames else None
        session.state, session.thread_id = "stopped", thread_id
        session.frame_id = frame["id"] if frame else None
        stop: JsonObject = {"reason": reason, "thread_id": thread_id, "frame": frame}
        if body.get("description") or body.get("text"):
            stop["description"] = str(body.get("text") or body.get("description"))
        if reason == "exception" and thread_id is not None and client.capabilities.get("supportsExceptionInfoRequest"):
            with contextlib.suppress(RpcError):
                info = await client.request("exceptionInfo", {"threadId": thread_id})
                exception = str(info.get("exceptionId") or "")
                detail = str(info.get("description") or "")
                stop["description"] = f"{exception}: {detail}" if exception and detail else exception or detail
        session.last_stop = stop
        self.events.emit(
            DapProgramStopped(
                session=session.id,
                reason=reason,
                path=frame["path"] if frame else None,
                line=frame["line"] if frame else None,
            )
        )
        where = f" at {frame['path']}:{frame['line']} in {frame['name']}" if frame else ""
        lines = [*header, f"Stopped ({reason}){where}, thread {thread_id}."]
        if "description" in stop:
            lines.append(str(stop["description"]))
        if frame and frame["text"]:
            lines.append(f"{frame['line']:>5} | {frame['text']}")
        return program_reply(session.id, lines, output, {"state": "stopped", **stop})

    @staticmethod
    async def _first_thread(client: DapClient) -> int | None:
        threads = (await client.request("threads")).get("threads") or []
        ids = [t["id"] for t in threads if isinstance(t, dict) and isinstance(t.get("id"), int)]
        return ids[0] if ids else None

    def _frame(self, raw: JsonObject) -> JsonObject:
        return frame_record(raw, self.workspace, _READING.get())

    # --- tools on a session --------------------------------------------------------------------------------------

    async def _catch_up(self, session: DebugSession) -> ToolResult | None:
        """Report a stop or end that came while no tool waited (the program was left running)."""
        client = session.lifecycle.client
        if session.state != "running" or client is None or client.dap is None:
            return None
        names = {"stopped", "terminated", "exited"}
        if not any(e.get("event") in names for e in client.dap.events[session.cursor :]) and not client.dap.closed:
            return None
        return await self._outcome(session, session.cursor, 0, ["The program changed while nothing waited for it:"])

    async def _live(self, args: JsonObject) -> DebugSession:
        session = self._session(args)
        await self._catch_up(session)
        return session

    async def _resume(self, args: JsonObject, command: str) -> ToolResult:
        session = self._session(args)
        caught_up = await self._catch_up(session)
        if caught_up is not None:
            return caught_up
        client = self._client(session)
        assert client.dap is not None
        thread_id = args.get("thread_id") if isinstance(args.get("thread_id"), int) else session.thread_id
        if thread_id is None:
            thread_id = await self._first_thread(client) or 0
        if command != "pause" and session.state == "running":
            raise DapSessionError(f"debug session {session.id} is running, not stopped", hint="use dap.pause first")
        since = len(client.dap.events)
        await client.request(command, {"threadId": thread_id})
        session.state = "running"
        return await self._outcome(session, since, _wait(args), [])

    def _breakpoints(self, args: JsonObject) -> dict[Path, list[JsonObject]]:
        """``breakpoints: [{path, line, condition?}]`` grouped by file, in the adapter's shape."""
        grouped: dict[Path, list[JsonObject]] = {}
        for item in args.get("breakpoints") or []:
            if not isinstance(item, dict) or not isinstance(item.get("line"), int):
                raise DapSessionError(
                    "each breakpoint needs `path` and `line`", hint='e.g. {"path": "app.py", "line": 3}'
                )
            wanted: JsonObject = {"line": item["line"]}
            if isinstance(item.get("condition"), str) and item["condition"].strip():
                wanted["condition"] = item["condition"]
            grouped.setdefault(workspace_path(self.workspace, item.get("path"), "breakpoints.path"), []).append(wanted)
        return grouped

    async def _set_breakpoints(self, args: JsonObject) -> ToolResult:
        session = await self._live(args)
        grouped = self._breakpoints(args)
        for value in args.get("clear") or []:
            grouped.setdefault(workspace_path(self.workspace, value, "clear"), [])
        if not grouped:
            raise DapSessionError(
                "name the breakpoints to set or the files to clear",
                hint='e.g. {"breakpoints": [{"path": "app.py", "line": 3}]} or {"clear": ["app.py"]}',
            )
        text: list[str] = []
        items: list[JsonObject] = []
        for path, wanted in grouped.items():
            found = await self._client(session).set_breakpoints(path, wanted)
            shown = display_path(path, self.workspace)
            items += [
                {"path": shown, "line": bp.get("line"), "verified": bool(bp.get("verified")),
                 "message": bp.get("message")}
                for bp in found
            ]  # fmt: skip
            text += breakpoint_lines(shown, found) or [f"No breakpoints left in {shown}."]
        return ToolResult.text("\n".join(text), structured={"session": session.id, "breakpoints": items})

    async def _threads(self, args: JsonObject) -> ToolResult:
        session = await self._live(args)
        threads = (await self._client(session).request("threads")).get("threads") or []
        items = [{"id": t.get("id"), "name": t.get("name")} for t in threads if isinstance(t, dict)]
        text = "\n".join(f"{t['id']}: {t['name']}" for t in items) or "No threads."
        return ToolResult.text(text, structured={"session": session.id, "threads": items})

    async def _stack_trace(self, args: JsonObject) -> ToolResult:
        session = await self._live(args)
        client = self._client(session)
        thread_id = args.get("thread_id") if isinstance(args.get("thread_id"), int) else session.thread_id
        if thread_id is None:
            raise DapSessionError(f"debug session {session.id} has not stopped", hint="set a breakpoint or dap.pause")
        levels = args.get("levels") if isinstance(args.get("levels"), int) else 20
        trace = await client.request("stackTrace", {"threadId": thread_id, "startFrame": 0, "levels": levels})
        frames = [self._frame(f) for f in trace.get("stackFrames") or [] if isinstance(f, dict)]
        return ToolResult.text(stack_text(frames) or "No frames.", structured={"session": session.id, "frames": frames})

    async def _scope_list(self, session: DebugSession, args: JsonObject) -> list[JsonObject]:
        frame_id = args.get("frame_id") if isinstance(args.get("frame_id"), int) else session.frame_id
        if frame_id is None:
            raise DapSessionError(f"debug session {session.id} has not stopped", hint="set a breakpoint or dap.pause")
        return scope_records(await self._client(session).request("scopes", {"frameId": frame_id}))

    async def _scopes(self, args: JsonObject) -> ToolResult:
        session = await self._live(args)
        scopes = await self._scope_list(session, args)
        text = "\n".join(f"{s['name']} [ref {s['variables_reference']}]" for s in scopes) or "No scopes."
        return ToolResult.text(text, structured={"session": session.id, "scopes": scopes})

    async def _variables(self, args: JsonObject) -> ToolResult:
        session = await self._live(args)
        reference = args.get("variables_reference")
        if not isinstance(reference, int):
            scopes = await self._scope_list(session, args)
            wanted = str(args.get("scope") or "Locals").lower()
            chosen = next((s for s in scopes if str(s["name"]).lower() == wanted), scopes[0] if scopes else None)
            if chosen is None:
                raise DapSessionError("the frame has no scopes")
            reference = int(chosen["variables_reference"])
        body = await self._client(session).request("variables", {"variablesReference": reference})
        items = variable_records(body)
        lines = variable_lines(items)
        return ToolResult.text(
            "\n".join(lines) or "No variables.",
            structured={"session": session.id, "variables_reference": reference, "variables": items},
        )

    async def _evaluate(self, args: JsonObject) -> ToolResult:
        session = await self._live(args)
        expression = args.get("expression")
        if not isinstance(expression, str) or not expression.strip():
            raise DapSessionError("`expression` must be a non-empty expression")
        params: JsonObject = {"expression": expression, "context": "repl"}
        frame_id = args.get("frame_id") if isinstance(args.get("frame_id"), int) else session.frame_id
        if frame_id is not None:
            params["frameId"] = frame_id
        body = await self._client(session).request("evaluate", params)
        result, text = evaluation(body)
        return ToolResult.text(text, structured={"session": session.id, "expression": expression, **result})

    async def _disconnect(self, args: JsonObject) -> ToolResult:
        session = self._session(args)
        client = session.lifecycle.client
        if client is not None and client.alive:
            await client.disconnect(terminate=args.get("terminate", True) is not False)
        await session.lifecycle.stop()
        session.state = "ended"
        adapter = session.lifecycle.status
        text = f"Debug session {session.id} is closed" + (
            "." if adapter is ServerStatus.STOPPED else f"; its adapter is {adapter.value}."
        )
        structured: JsonObject = {"session": session.id, "state": "ended"}
        created = await session.watch.created() if session.watch is not None else []
        if created:
            text += "\n" + created_note(created)
            structured["created_configuration"] = [str(p) for p in created]
        return ToolResult.text(text, structured=structured)
