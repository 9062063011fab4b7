"""``LspToolProvider``: the ``lsp.*`` tools, routed to the language server whose ``file_patterns`` match."""

import contextlib
import contextvars
import errno
import os
import re
import time
from collections.abc import Awaitable, Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from types import TracebackType
from typing import Any, Self

from kairox._rpc._errors import RpcError, RpcResponseError
from kairox._rpc._status import usable_servers
from kairox._util._filestate import FileState, file_state
from kairox._util._json import JsonObject
from kairox.config import LspServerConfig
from kairox.errors import ToolCallError
from kairox.events import EventSink, NullSink
from kairox.lsp import _render as render
from kairox.lsp._client import LspClient, OpenDocument, language_id
from kairox.lsp._errors import LspError, LspLocationError, LspNoServerError
from kairox.lsp._files import locate
from kairox.lsp._lifecycle import LspServerLifecycle
from kairox.lsp._specs import lsp_tool_specs
from kairox.lsp._symbols import document_symbols, flatten_symbols, resolve_symbol
from kairox.lsp._text import (
    display_path,
    matches_pattern,
    relative_real,
    shown_real,
    to_server_character,
    uri_to_path,
)
from kairox.sandbox import ServerConfinement
from kairox.tools import CallContext, ToolProvider, ToolResult, ToolSpec

Handler = Callable[[JsonObject], Awaitable[ToolResult]]
_UNREADABLE: contextvars.ContextVar[Callable[[Path], str | None] | None] = contextvars.ContextVar(
    "lsp_unreadable", default=None
)
"""The read rules of the call being served (``CallContext.unreadable``): set per call, so concurrent calls of
different tools each see their own."""


def _refusal(path: Path) -> str | None:
    """Why the call's read rules forbid ``path``, or None (also None when no rule applies)."""
    unreadable = _UNREADABLE.get()
    return None if unreadable is None else unreadable(Path(os.path.realpath(str(path))))


def _readable_uri(item: Any, files: render.Files | None = None) -> bool:
    unreadable = _UNREADABLE.get()
    if unreadable is None or not isinstance(item, dict):
        return True
    uri = item.get("targetUri") or item.get("uri")
    if not isinstance(uri, str):
        location = item.get("location")
        uri = location.get("uri") if isinstance(location, dict) else None
    if not isinstance(uri, str):
        return True
    # the file the rules judge is the one the answer is rendered from: ``files`` resolves each path once
    real = files.real(uri) if files is not None else os.path.realpath(str(uri_to_path(uri)))
    return unreadable(Path(real)) is None


def _readable_only(result: Any, files: render.Files | None = None) -> tuple[Any, int]:
    """A location answer without the items in files the read rules forbid, and how many were left out."""
    if _UNREADABLE.get() is None:
        return result, 0
    if isinstance(result, list):
        kept = [item for item in result if _readable_uri(item, files)]
        return kept, len(result) - len(kept)
    if isinstance(result, dict) and not _readable_uri(result, files):
        return None, 1
    return result, 0


def _left_out_note(count: int) -> str:
    return f"({count} result(s) in files the read rules forbid were left out)" if count else ""


_DIAGNOSTICS_WAIT = 10.0
_INDEX_WAIT = 10.0
"""How long a workspace-wide query waits for the server's reported indexing to end."""
_PROJECT_FILES = 400
"""Files of its languages a server is given before a cross-file question, at most."""
_PROJECT_WAIT = 20.0
"""How long the first cross-file question waits for a server to load the project (listing and opening the files,
then the loading it reports)."""
_LIST_WAIT = 3.0
"""Of it, how long listing the workspace's files may take."""
_RELIST_AFTER = 30.0
"""Seconds after which a cross-file question lists the workspace again (files added since are opened too)."""
_SKIPPED_DIRS = frozenset({"node_modules", "__pycache__", "venv", "site-packages", "dist", "build", "target"})
"""Folders whose files are not the project's own (dependencies, build output); hidden folders are skipped too."""
_SAFE_NAME = re.compile(r"[^A-Za-z0-9_.-]")
"""Characters of a server name kept in its log file's name (no separators: the file stays in the log folder)."""


def server_log(log_dir: Path, name: str) -> Path:
    """The log of language server ``name``: its stderr, and how it ended each time it did."""
    return log_dir / f"lsp-{_SAFE_NAME.sub('_', name)}.log"


_NO_FILE = {errno.ENOENT, errno.ENOTDIR, errno.EBADF, errno.ELOOP}
"""Errors of ``stat`` that mean there is no such file (the others are reported as they are)."""


@dataclass(frozen=True, slots=True)
class _File:
    """A file a call names: its path with symlinks resolved, and its status taken then."""

    real: str
    state: FileState

    @property
    def path(self) -> Path:
        return Path(self.real)


class _Target:
    """A resolved location: the server, the open document, and the server position."""

    def __init__(self, server: LspServerLifecycle, client: LspClient, document: OpenDocument, pos: JsonObject) -> None:
        self.server, self.client, self.document, self.pos = server, client, document, pos

    @property
    def params(self) -> JsonObject:
        return {"textDocument": {"uri": self.document.uri}, "position": self.pos}

    def where(self) -> str:
        line, column = render.position(self.client, self.document.lines, self.pos)
        return f"{shown_real(str(self.document.path), str(self.client.workspace))}:{line}:{column}"


class LspToolProvider(ToolProvider):
    """``async with LspToolProvider(config.lsp_servers, workspace=root, events=sink) as provider:``.

    No server starts until a tool is used on a file its ``file_patterns`` match; then it stays warm until the
    provider is left. Servers named in ``pending`` (untrusted project layers) and disabled ones are left out;
    ``held`` says why for each pending one.
    """

    origin = "lsp"

    def __init__(
        self,
        servers: Mapping[str, LspServerConfig],
        *,
        workspace: Path,
        events: EventSink | None = None,
        pending: Collection[str] = (),
        held: Mapping[str, str] | None = None,
        host_env: Mapping[str, str] | None = None,
        log_dir: Path | None = None,
        base_dirs: Mapping[str, Path] | None = None,
        confine: "Callable[[str, LspServerConfig], ServerConfinement | None] | None" = None,
    ) -> None:
        super().__init__()
        self.workspace = workspace.resolve()
        self._root = str(self.workspace)
        confine = confine or (lambda name, config: None)
        self.events: EventSink = events or NullSink()
        base_dirs = base_dirs or {}
        self.servers: dict[str, LspServerLifecycle] = {
            name: LspServerLifecycle(
                name,
                config,
                workspace=self.workspace,
                events=self.events,
                host_env=host_env,
                stderr_log=server_log(log_dir, name) if log_dir else None,
                base_dir=base_dirs.get(name),
                confinement=confine(name, config),
            )
            for name, config in usable_servers("lsp_servers", servers, pending).items()
        }
        self.held: dict[str, tuple[LspServerConfig, str]] = {
            name: (servers[name], why)
            for name, why in (held or {}).items()
            if name in servers and name not in self.servers and servers[name].enabled
        }
        """Servers trust holds back (``pending``), with why in the runtime's words (``pending re-trust: ...``): a
        file or name one of them would serve is answered with that, not with "no language server"."""
        self._stack = contextlib.AsyncExitStack()
        self._handlers: dict[str, Handler] = {
            "lsp.definition": self._definition,
            "lsp.references": self._references,
            "lsp.hover": self._hover,
            "lsp.document_symbols": self._document_symbols,
            "lsp.workspace_symbols": self._workspace_symbols,
            "lsp.implementation": self._implementation,
            "lsp.call_hierarchy": self._call_hierarchy,
            "lsp.diagnostics": self._diagnostics,
            "lsp.rename": self._rename,
        }

    async def __aenter__(self) -> Self:
        await self._stack.__aenter__()
        try:
            for server in self.servers.values():
                await self._stack.enter_async_context(server)
        except BaseException:
            await self._stack.aclose()
            raise
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self._stack.__aexit__(exc_type, exc, tb)

    async def list_tools(self) -> Sequence[ToolSpec]:
        return lsp_tool_specs() if self.servers else []

    async def call_tool(self, name: str, arguments: JsonObject, context: CallContext) -> ToolResult:
        handler = self._handlers.get(name) or self._handlers.get(f"lsp.{name.removeprefix('lsp_')}")
        if handler is None:
            raise ToolCallError(tool=name, reason="not an LSP tool", hint="`kairox tools list` shows the tools")
        token = _UNREADABLE.set(context.unreadable)
        try:
            return await handler(arguments)
        except RpcResponseError as exc:
            # a server's error can carry its stack trace (tsserver, a Python server): the model gets the message
            reason = f"{exc.peer} answered {exc.method} with error {exc.code}: {render.server_error_text(exc.reason)}"
            raise ToolCallError(tool=name, reason=reason, hint=exc.hint) from exc
        except (LspError, RpcError) as exc:
            raise ToolCallError(tool=name, reason=exc.message, hint=exc.hint) from exc
        except OSError as exc:
            raise ToolCallError(tool=name, reason=f"cannot read {exc.filename}: {exc.strerror}") from exc
        finally:
            _UNREADABLE.reset(token)

    # --- routing -------------------------------------------------------------------------------------------------

    def _file(self, file: Any) -> _File:
        """The regular file ``path`` names (relative to the workspace), resolved once and allowed by the read rules."""
        if not isinstance(file, str) or not file:
            raise LspLocationError("`path` must be a path", hint="give a path relative to the workspace")
        try:
            real, state = locate(os.path.join(self._root, os.path.expanduser(file)))  # an absolute path stays
        except OSError as exc:
            if exc.errno not in _NO_FILE:
                raise
            state = None
        except ValueError:  # a name no file can have
            state = None
        if state is None or not state.regular:
            raise LspLocationError(f"no file {file!r} in {self.workspace}", hint="check the path (fs.list shows files)")
        self._check_readable(real)
        return _File(real, state)

    def _check_readable(self, real: str) -> None:
        """Refuse before a language server is asked to open a file the read rules forbid (``real``: a path whose
        symlinks are resolved)."""
        unreadable = _UNREADABLE.get()
        reason = None if unreadable is None else unreadable(Path(real))
        if reason is not None:
            raise LspLocationError(
                f"{shown_real(real, self._root)} may not be read ({reason})", hint="the read rules forbid it"
            )

    def _server_for(self, relative: PurePosixPath, real: str) -> LspServerLifecycle:
        for server in self.servers.values():
            patterns = server.config.file_patterns
            if patterns and any(matches_pattern(relative, p) for p in patterns):
                return server
        for server in self.servers.values():
            languages = server.config.languages
            if not server.config.file_patterns and languages and language_id(Path(real), languages) in languages:
                return server
        for name, (config, _why) in self.held.items():
            patterns = config.file_patterns
            if (patterns and any(matches_pattern(relative, p) for p in patterns)) or (
                not patterns and config.languages and language_id(Path(real), config.languages) in config.languages
            ):
                raise self._held_error(name, f" for {relative}")
        configured = ", ".join(f"{s.name} ({', '.join(s.config.file_patterns) or '-'})" for s in self.servers.values())
        raise LspNoServerError(
            f"no language server is configured for {relative}",
            hint=f"configured: {configured or 'none'}; add [lsp_servers.NAME] with matching file_patterns",
        )

    def _held_error(self, name: str, what: str = "") -> LspNoServerError:
        return LspNoServerError(
            f"language server {name!r}{what} is {self.held[name][1]}",
            hint="`kairox trust` in the workspace reviews the entry; the server starts once it is trusted",
        )

    def _named_server(self, name: Any) -> LspServerLifecycle:
        if isinstance(name, str) and name:
            if name in self.held:
                raise self._held_error(name)
            if name not in self.servers:
                raise LspNoServerError(f"no language server named {name!r}", hint=f"servers: {', '.join(self.servers)}")
            return self.servers[name]
        if not self.servers:
            raise LspNoServerError("no language server is configured", hint="add [lsp_servers.NAME] to kairox.toml")
        return next(iter(self.servers.values()))

    def _file_server(self, file: _File) -> LspServerLifecycle:
        return self._server_for(relative_real(file.real, self._root), file.real)

    def _project_files(self, server: LspServerLifecycle, deadline: float) -> tuple[list[Path], bool]:
        """The workspace's files ``server`` serves (routed to it as a call naming them would be), in a stable order,
        at most :data:`_PROJECT_FILES` (and what was found by ``deadline``); True when the list was cut short."""
        found: list[Path] = []
        stack = [self._root]
        while stack:
            folder = stack.pop()
            try:
                with os.scandir(folder) as entries:
                    listed = sorted(entries, key=lambda e: e.name)
            except OSError:
                continue
            subfolders = []
            for entry in listed:
                if entry.name.startswith("."):
                    continue
                try:
                    if entry.is_dir(follow_symlinks=False):
                        if entry.name not in _SKIPPED_DIRS:
                            subfolders.append(entry.path)
                        continue
                    if not entry.is_file(follow_symlinks=False):
                        continue
                except OSError:
                    continue
                if _refusal(Path(entry.path)) is not None:
                    continue  # the read rules forbid it: not sent to a server either
                try:
                    routed = self._server_for(relative_real(entry.path, self._root), entry.path)
                except LspNoServerError:
                    continue
                if routed is server:
                    found.append(Path(entry.path))
                    if len(found) > _PROJECT_FILES:
                        return found, True
            if time.monotonic() >= deadline:
                return found, True
            stack.extend(reversed(subfolders))
        return found, False

    async def _cross_file(self, server: LspServerLifecycle, client: LspClient) -> str | None:
        """Before a question across files: the workspace's files of the server's languages are open and the server
        has loaded them (the first time, and again after :data:`_RELIST_AFTER`); why the answer may be incomplete
        otherwise."""
        load = client.project
        if load is None or (time.monotonic() - load.at > _RELIST_AFTER):
            start = time.monotonic()
            files, cut = self._project_files(server, start + min(_LIST_WAIT, _PROJECT_WAIT))
            wait = min(client.config.request_timeout_sec, _PROJECT_WAIT) - (time.monotonic() - start)
            previous = load
            load = await client.load_project(files, limit=_PROJECT_FILES, timeout=max(wait, 1.0), truncated=cut)
            if previous is not None and previous.complete and not load.settled:
                load.settled = True  # loaded before: a slow answer now is not a project still loading
        else:
            await client.refresh_documents()
            if client.progress:  # re-indexing after a change: waited for as at the start
                await client.wait_until_idle(min(client.config.request_timeout_sec, _INDEX_WAIT))
        gap = load.gap(client.name)
        if gap is None and client.progress:
            gap = f"{client.name} is still working ({'; '.join(client.progress)})"
        return gap

    async def _target(self, args: JsonObject) -> _Target:
        given, symbol = args.get("path"), args.get("symbol")
        file = self._file(given) if given is not None else None
        if isinstance(symbol, str) and symbol.strip():
            server = self._file_server(file) if file else self._named_server(args.get("server"))
            client = await server.ensure_running()
            path = file.path if file else None
            found = await resolve_symbol(client, symbol, path, readable=lambda p: _refusal(p) is None)
            real = os.path.realpath(str(uri_to_path(found.uri)))
            self._check_readable(real)
            document = await client.sync_file(real, file_state(real))
            return _Target(server, client, document, {"line": found.line, "character": found.character})
        if file is None:
            raise LspLocationError("give `path` and `line`, or `symbol`", hint='e.g. {"symbol": "Greeter.greet"}')
        line = args.get("line")
        if not isinstance(line, int) or line < 1:
            raise LspLocationError("`line` (1-based) is needed with `path`", hint="or give `symbol` instead")
        server = self._file_server(file)
        client = await server.ensure_running()
        document = await client.sync_file(file.real, file.state)
        total = len(document.lines)
        if line > max(total, 1):
            raise LspLocationError(f"{shown_real(file.real, self._root)} has {total} lines, not {line}")
        text = document.lines[line - 1] if line <= total else ""
        column = args.get("column")
        if not isinstance(column, int) or column < 1:
            column = len(text) - len(text.lstrip()) + 1
        character = to_server_character(text, column, client.position_encoding)
        return _Target(server, client, document, {"line": line - 1, "character": character})

    # --- results -------------------------------------------------------------------------------------------------

    @staticmethod
    def _result(
        client: LspClient, lines: list[str], empty: str, structured: JsonObject, *, gap: str | None = None
    ) -> ToolResult:
        """``gap``: why an answer across files may miss some (said with the answer, and ``complete: false``)."""
        structured = {"server": client.name, **structured}
        if gap is not None:
            note = f"({gap}: the answer may be incomplete; ask again shortly)"
            structured = {**structured, "complete": False, "incomplete_reason": gap}
            if lines:
                return ToolResult.text("\n".join([*lines, note]), structured=structured)
            message = f"{empty}, but {gap}: the answer may be incomplete; ask again shortly."
            return ToolResult.text(message, structured={**structured, "message": message})
        if lines:
            return ToolResult.text("\n".join(lines), structured=structured)
        busy = client.progress
        # an empty answer says so in the structured form too (hosts that show only that form show the message)
        if not busy:
            return ToolResult.text(empty + ".", structured={**structured, "message": empty + "."})
        # an empty answer while the server still works (indexing) is not "nothing there"
        text = f"{empty}, but {client.name} is still working ({'; '.join(busy)}): try again shortly."
        return ToolResult.text(text, structured={**structured, "indexing": busy, "message": text})

    def _unsupported(self, client: LspClient, what: str, alternative: str) -> ToolResult:
        message = f"{client.name} does not support {what}; {alternative}"
        return ToolResult.text(message, structured={"server": client.name, "supported": False, "message": message})

    async def _locations(
        self, target: _Target, method: str, params: JsonObject, what: str, *, across: bool = False
    ) -> ToolResult:
        """``across``: the answer spans files (references, implementations): asked once the project is loaded."""
        gap = await self._cross_file(target.server, target.client) if across else None
        files = render.Files(target.client)
        result, left_out = _readable_only(await target.client.request(method, params), files)
        items = render.locations(target.client, result, files)
        lines = render.location_lines(items)
        if left_out:
            lines.append(_left_out_note(left_out))
        empty = "" if lines else f"No {what} found at {target.where()}"  # only said when nothing was found
        return self._result(target.client, lines, empty, {"locations": items}, gap=gap)

    # --- tools ---------------------------------------------------------------------------------------------------

    async def _definition(self, args: JsonObject) -> ToolResult:
        target = await self._target(args)
        return await self._locations(target, "textDocument/definition", target.params, "definition")

    async def _implementation(self, args: JsonObject) -> ToolResult:
        target = await self._target(args)
        if not target.client.supports("implementationProvider"):
            return self._unsupported(target.client, "implementations", "try lsp.references or lsp.definition")
        return await self._locations(
            target, "textDocument/implementation", target.params, "implementation", across=True
        )

    async def _references(self, args: JsonObject) -> ToolResult:
        target = await self._target(args)
        include = args.get("include_declaration", True) is not False
        params = {**target.params, "context": {"includeDeclaration": include}}
        return await self._locations(target, "textDocument/references", params, "references", across=True)

    async def _hover(self, args: JsonObject) -> ToolResult:
        target = await self._target(args)
        if _UNREADABLE.get() is not None:
            # a hover shows the definition's documentation: not when it lives in a file the rules forbid
            found, left_out = _readable_only(await target.client.request("textDocument/definition", target.params))
            if left_out and not found:
                return self._result(
                    target.client,
                    [_left_out_note(left_out)],
                    f"Nothing to show at {target.where()}",
                    {"contents": None},
                )
        text = render.hover_text(await target.client.request("textDocument/hover", target.params))
        return self._result(
            target.client, [text] if text else [], f"Nothing to show at {target.where()}", {"contents": text}
        )

    async def _document_symbols(self, args: JsonObject) -> ToolResult:
        file = self._file(args.get("path"))
        path = file.path
        client = await self._file_server(file).ensure_running()
        items = render.symbols(client, await document_symbols(client, path))
        return self._result(
            client,
            render.symbol_lines(items, with_path=False),
            f"No symbols in {display_path(path, self.workspace)}",
            {"path": display_path(path, self.workspace), "symbols": items},
        )

    async def _workspace_symbols(self, args: JsonObject) -> ToolResult:
        query = args.get("query")
        if not isinstance(query, str):
            raise LspLocationError("`query` must be a string")
        server = self._named_server(args.get("server"))
        client = await server.ensure_running()
        if not client.supports("workspaceSymbolProvider"):
            return self._unsupported(
                client,
                "workspace symbols",
                "use lsp.document_symbols on a file, or search.ripgrep for the name",
            )
        # right after start a server has no project (tsserver: none before a file is open) or indexes it: asked
        # then, it finds nothing (or fails); the workspace's files are opened and the loading waited for first
        gap = await self._cross_file(server, client)
        try:
            reply = await client.request("workspace/symbol", {"query": query})
        except RpcResponseError as exc:
            if gap is None:
                raise
            # failed while loading: that it could not search yet, and why; never "no symbols match"
            message = (
                f"{client.name} could not search the workspace yet: {gap} (it "
                f"answered: {render.server_error_text(exc.reason)}); ask again shortly."
            )
            structured: JsonObject = {
                "server": client.name,
                "symbols": [],
                "complete": False,
                "incomplete_reason": gap,
                "message": message,
            }
            if client.progress:
                structured["indexing"] = client.progress
            return ToolResult.text(message, structured=structured)
        result, left_out = _readable_only(reply)
        found = []
        for item in result if isinstance(result, list) else []:
            location = item.get("location") if isinstance(item, dict) else None
            uri = location.get("uri") if isinstance(location, dict) else None
            if isinstance(uri, str):
                found.extend(flatten_symbols(client, uri, [item]))
        items = render.symbols(client, found)
        for item in items:
            item["depth"] = 0
        lines = render.symbol_lines(items, with_path=True)
        if left_out:
            lines.append(_left_out_note(left_out))
        return self._result(client, lines, f"No symbols match {query!r}", {"symbols": items}, gap=gap)

    async def _call_hierarchy(self, args: JsonObject) -> ToolResult:
        target = await self._target(args)
        if not target.client.supports("callHierarchyProvider"):
            return self._unsupported(target.client, "call hierarchy", "use lsp.references to find the callers")
        direction = "outgoing" if args.get("direction") == "outgoing" else "incoming"
        # callers live in other files; what a function calls is found in its own
        gap = await self._cross_file(target.server, target.client) if direction == "incoming" else None
        prepared = await target.client.request("textDocument/prepareCallHierarchy", target.params)
        calls: list[JsonObject] = []
        for item in prepared if isinstance(prepared, list) else []:
            reply = await target.client.request(f"callHierarchy/{direction}Calls", {"item": item})
            for call in reply if isinstance(reply, list) else []:
                other = call.get("from" if direction == "incoming" else "to") if isinstance(call, dict) else None
                if isinstance(other, dict) and _readable_uri(other):
                    link = {
                        "uri": other.get("uri"),
                        "range": other.get("selectionRange") or other.get("range"),
                    }
                    for location in render.locations(target.client, link):
                        calls.append({"name": other.get("name"), **location})
        lines = [f"{c['name']}  {c['path']}:{c['line']}:{c['column']}: {c['text']}" for c in calls]
        what = "callers" if direction == "incoming" else "callees"
        return self._result(
            target.client,
            lines,
            f"No {what} found for {target.where()}",
            {"direction": direction, "calls": calls},
            gap=gap,
        )

    async def _diagnostics(self, args: JsonObject) -> ToolResult:
        file = self._file(args.get("path"))
        path = file.path
        client = await self._file_server(file).ensure_running()
        document = await client.sync_file(file.real, file.state)
        items: list[JsonObject] | None = None
        mode = "pushed"
        if client.supports("diagnosticProvider"):
            with contextlib.suppress(RpcError):
                reply = await client.request("textDocument/diagnostic", {"textDocument": {"uri": document.uri}})
                if isinstance(reply, dict) and isinstance(reply.get("items"), list):
                    items, mode = reply["items"], "pulled"
        if items is None:
            pushed = await client.pushed_diagnostics(
                document, timeout=min(client.config.request_timeout_sec, _DIAGNOSTICS_WAIT)
            )
            if pushed is None:
                return self._result(
                    client,
                    [],
                    f"{client.name} sent no diagnostics for {display_path(path, self.workspace)} "
                    f"within {min(client.config.request_timeout_sec, _DIAGNOSTICS_WAIT):g}s",
                    {"path": display_path(path, self.workspace), "diagnostics": [], "received": False},
                )
            items = pushed.items
        found = render.diagnostics(client, document.uri, items)
        return self._result(
            client,
            render.diagnostic_lines(found),
            f"No problems reported in {display_path(path, self.workspace)}",
            {"path": display_path(path, self.workspace), "diagnostics": found, "mode": mode},
        )

    async def _rename(self, args: JsonObject) -> ToolResult:
        new_name = args.get("new_name")
        if not isinstance(new_name, str) or not new_name.strip():
            raise LspLocationError("`new_name` must be a non-empty name")
        target = await self._target(args)
        if not target.client.supports("renameProvider"):
            return self._unsupported(target.client, "rename", "use lsp.references and edit each use with fs.edit")
        gap = await self._cross_file(target.server, target.client)
        edit = await target.client.request("textDocument/rename", {**target.params, "newName": new_name})
        for uri in _edited_uris(edit):
            self._check_readable(os.path.realpath(str(uri_to_path(uri))))
        files = render.rename_preview(target.client, edit)
        lines = render.rename_lines(files)
        structured: JsonObject = {"new_name": new_name, "files": files, "applied": False}
        if lines:
            count = sum(len(f["changes"]) for f in files)
            summary = (
                f"Preview: renaming to {new_name!r} changes {count} "
                f"line(s) in {len(files)} file(s); nothing was written."
            )
            lines.insert(0, summary)
            structured["summary"] = summary
        return self._result(target.client, lines, f"Nothing to rename at {target.where()}", structured, gap=gap)

    # --- reporting -----------------------------------------------------------------------------------------------

    def status(self) -> list[JsonObject]:
        return [server.snapshot() for server in self.servers.values()]


def _edited_uris(edit: Any) -> list[str]:
    """The files a ``WorkspaceEdit`` touches."""
    uris: list[str] = []
    if isinstance(edit, dict):
        changes = edit.get("changes")
        if isinstance(changes, dict):
            uris += [u for u in changes if isinstance(u, str)]
        for change in edit.get("documentChanges") or []:
            document = change.get("textDocument") if isinstance(change, dict) else None
            if isinstance(document, dict) and isinstance(document.get("uri"), str):
                uris.append(document["uri"])
    return uris
