"""``LspClient``: one language server process, from ``initialize`` to ``exit``.

The client speaks raw JSON (the replies of real servers are taken as they come), keeps the documents it
opened in sync with the disk (didOpen / didChange with versions), answers the server's own requests, records
pushed diagnostics and ``$/progress`` (so a caller can tell "still indexing" from "nothing found"), and stops
the server with shutdown + exit, then the process-group kill of :class:`ChildProcess` after a timeout.
"""

import os
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import Any, Self

import anyio

from kairox._rpc._errors import RpcError
from kairox._rpc._jsonrpc import JsonRpcEndpoint
from kairox._rpc._launch import closed_reason, server_process
from kairox._util._filestate import FileState
from kairox._util._json import JsonObject
from kairox.config import LspServerConfig, SecretScrubber
from kairox.errors import SandboxUnavailableError
from kairox.lsp._errors import LspStartupError
from kairox.lsp._files import disk_text, locate, read_text
from kairox.lsp._text import UTF8, UTF16, UTF32, path_to_uri, real_path_uri, split_lines, uri_to_path
from kairox.sandbox import ServerConfinement, confine_server, refusal_hint

_LOAD_QUIET = 1.0
"""Seconds without reported work after the project's files were opened before the server counts as loaded."""

OFFERED_ENCODINGS = [UTF32, UTF16, UTF8]
"""Position encodings offered to servers. Character counts first: they are what the model's columns are, and
servers built on Python strings (pygls) then report exact columns; UTF-16 is the protocol's default and is
converted."""

_LANGUAGE_IDS = {
    ".py": "python",
    ".pyi": "python",
    ".js": "javascript",
    ".ts": "typescript",
    ".tsx": "typescriptreact",
    ".jsx": "javascriptreact",
    ".rs": "rust",
    ".go": "go",
    ".c": "c",
    ".h": "c",
    ".cpp": "cpp",
    ".java": "java",
    ".rb": "ruby",
    ".lua": "lua",
    ".sh": "shellscript",
    ".json": "json",
    ".md": "markdown",
    ".toml": "toml",
}

_CLIENT_CAPABILITIES: JsonObject = {
    "general": {"positionEncodings": OFFERED_ENCODINGS},
    "workspace": {
        "applyEdit": False,
        "configuration": True,
        "workspaceFolders": True,
        "symbol": {"dynamicRegistration": False},
        "didChangeConfiguration": {"dynamicRegistration": False},
        "diagnostics": {"refreshSupport": False},
    },
    "textDocument": {
        "synchronization": {"dynamicRegistration": False, "didSave": False, "willSave": False},
        "definition": {"linkSupport": True},
        "implementation": {"linkSupport": True},
        "references": {},
        "hover": {"contentFormat": ["markdown", "plaintext"]},
        "documentSymbol": {"hierarchicalDocumentSymbolSupport": True},
        "callHierarchy": {},
        "rename": {"prepareSupport": True},
        "publishDiagnostics": {"relatedInformation": False, "versionSupport": True},
        "diagnostic": {"dynamicRegistration": False, "relatedDocumentSupport": False},
    },
    "window": {"workDoneProgress": True, "showMessage": {}},
}


def language_id(path: Path, languages: list[str]) -> str:
    """The LSP language id of a file: from its suffix, or the server's first configured language."""
    by_suffix = _LANGUAGE_IDS.get(path.suffix.lower())
    if by_suffix and (not languages or by_suffix in languages):
        return by_suffix
    return languages[0] if languages else by_suffix or "plaintext"


@dataclass(kw_only=True, slots=True)
class OpenDocument:
    path: Path
    uri: str
    language_id: str
    version: int
    text: str
    lines: list[str]
    """``text`` split as LSP counts lines."""
    state: FileState | None
    """The file's status taken before ``text`` was read from it."""
    sent_at: int
    """Diagnostics sequence number when the current text was sent: pushes after it describe this text."""


@dataclass(kw_only=True, slots=True)
class PushedDiagnostics:
    items: list[JsonObject]
    version: int | None
    seq: int


@dataclass(kw_only=True, slots=True)
class _Progress:
    active: dict[str, str] = field(default_factory=dict)
    """Token -> title of every ``$/progress`` that began and has not ended."""
    changed_at: float = field(default_factory=time.monotonic)
    """When work last began, moved on or ended (or the server was initialized)."""
    changed: anyio.Event = field(default_factory=anyio.Event)

    def touch(self) -> None:
        self.changed_at = time.monotonic()
        self.changed.set()
        self.changed = anyio.Event()


@dataclass(kw_only=True, slots=True)
class ProjectLoad:
    """What :meth:`LspClient.load_project` did: which files it opened, and whether the server then had the project."""

    opened: int = 0
    found: int = 0
    """Files of the server's languages in the workspace (counted up to the bound)."""
    truncated: bool = False
    """The workspace held more files than the bound, or listing them took longer than allowed."""
    settled: bool = False
    """The server answered after the files were open and reported no work still going on."""
    busy: list[str] = field(default_factory=list)
    """The work it still reported when the wait ended."""
    at: float = field(default_factory=time.monotonic)

    @property
    def complete(self) -> bool:
        return self.settled and not self.truncated

    def gap(self, name: str) -> str | None:
        """Why an answer across files may miss some, in words, or None."""
        if self.truncated:
            return f"only the first {self.opened} files of the workspace were opened in {name}"
        if not self.settled:
            work = f" ({'; '.join(self.busy)})" if self.busy else ""
            return f"{name} had not finished loading the project{work}"
        return None


class LspClient:
    """``async with LspClient("pylsp", config, workspace=root) as client:`` runs one server until the block ends.

    Enter and exit in the same task. :meth:`request` may be called from any task.
    """

    def __init__(
        self,
        name: str,
        config: LspServerConfig,
        *,
        workspace: Path,
        host_env: Mapping[str, str] | None = None,
        stderr_log: Path | None = None,
        base_dir: Path | None = None,
        confinement: ServerConfinement | None = None,
        on_confined: Callable[[JsonObject, str | None], None] | None = None,
    ) -> None:
        self.name = name
        self.config = config
        self.workspace = workspace.resolve()
        self.confinement = confinement
        self.confinement_state: JsonObject = {"confined": False, "sandbox": "none", "reason": "not started"}
        self._on_confined = on_confined
        self.child = server_process(
            config.command,
            config.args,
            config.env,
            cwd=self.workspace,
            base_dir=base_dir or self.workspace,
            host_env=host_env,
            stderr_log=stderr_log,
            scrub_stderr=SecretScrubber.for_server(config, environ=dict(host_env) if host_env is not None else None),
            stop_timeout=config.shutdown_timeout_sec,
        )
        self.rpc: JsonRpcEndpoint | None = None
        self.capabilities: JsonObject = {}
        self.server_info: JsonObject = {}
        self.position_encoding = UTF16
        self.documents: dict[str, OpenDocument] = {}
        self.diagnostics: dict[str, PushedDiagnostics] = {}
        self._diag_seq = 0
        self._diag_changed = anyio.Event()
        self._progress = _Progress()
        self.project: ProjectLoad | None = None
        """Set once the workspace's files were opened for a cross-file question (:meth:`load_project`)."""

    # --- lifetime ------------------------------------------------------------------------------------------------

    async def __aenter__(self) -> Self:
        try:
            self.child.check_runnable()  # the server's own program: bwrap, in front of it, would only say so later
            # in the sandbox shell.exec commands get, under the entry's profile
            started = await confine_server(
                self.child.argv,
                self.child.env,
                cwd=self.workspace,
                confinement=self.confinement,
                given_env=self.config.env.keys(),
            )
            self.child.argv, self.child.env = started.argv, started.env
            # bubblewrap's --die-with-parent and own pid namespace take the whole tree down with the host
            self.child.guarded = not started.confined
            self.confinement_state = started.confinement
            if self._on_confined is not None:
                self._on_confined(started.confinement, started.warning)
            await self.child.start()
        except SandboxUnavailableError as exc:
            raise LspStartupError(self.name, f"{exc.message} (hint: {exc.hint})" if exc.hint else exc.message) from exc
        except OSError as exc:
            raise LspStartupError(self.name, f"cannot run {self.child.argv[0]!r}: {exc.strerror or exc}") from exc
        self.rpc = JsonRpcEndpoint(
            self.child.stdout,
            self.child.stdin,
            peer=f"language server {self.name!r}",
            timeout=self.config.request_timeout_sec,
            cancel_method="$/cancelRequest",
            closed_reason=lambda: closed_reason(self.child, "the server"),
        )
        self._install_handlers(self.rpc)
        await self.rpc.__aenter__()
        try:
            await self._initialize()
        except BaseException as exc:
            await self._stop(exc)
            if isinstance(exc, RpcError):
                tail = self.child.stderr.text(2000)
                refused = refusal_hint(tail, self.confinement_state, f"lsp_servers.{self.name}")
                message = f"{exc.message}; {refused}" if refused else exc.message
                raise LspStartupError(self.name, message, stderr_tail=tail) from exc
            raise
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self._stop(exc)

    async def _stop(self, exc: BaseException | None = None) -> None:
        # the whole stop is bounded by shutdown_timeout_sec: shutdown, exit, then the process-group kill
        budget = self.config.shutdown_timeout_sec
        deadline = time.monotonic() + budget
        with anyio.CancelScope(shield=True):
            rpc = self.rpc
            if rpc is not None and not rpc.closed and self.child.returncode is None:
                try:
                    await rpc.request("shutdown", timeout=budget / 2)
                    await rpc.notify("exit", timeout=max(deadline - time.monotonic(), 0.1))
                except RpcError:
                    pass
            await self.child.stop(timeout=max(deadline - time.monotonic(), 0.2))
            self.documents.clear()
        if rpc is not None:  # outside the shield: the reader's task group was entered before it
            await rpc.__aexit__(None, None, None)

    @property
    def alive(self) -> bool:
        return self.rpc is not None and not self.rpc.closed

    @property
    def stderr_tail(self) -> str:
        return self.child.stderr.text(2000) if self.child.started else ""

    def _capabilities(self) -> JsonObject:
        if self.config.position_encoding == "auto":
            return _CLIENT_CAPABILITIES
        return {**_CLIENT_CAPABILITIES, "general": {"positionEncodings": [self.config.position_encoding]}}

    async def _initialize(self) -> None:
        assert self.rpc is not None
        root = path_to_uri(self.workspace)
        result = await self.rpc.request(
            "initialize",
            {
                # a confined server lives in a PID namespace of its own, where Kairox's pid names no process (or
                # another one): servers that watch the client's pid (typescript-language-server, pyright) would
                # see it gone and exit. bwrap's --die-with-parent does that watching instead.
                "processId": None if self.confinement_state.get("confined") else os.getpid(),
                "clientInfo": {"name": "kairox"},
                "rootUri": root,
                "rootPath": str(self.workspace),
                "workspaceFolders": [{"uri": root, "name": self.workspace.name}],
                "capabilities": self._capabilities(),
                "initializationOptions": self.config.initialization_options or None,
            },
            timeout=self.config.startup_timeout_sec,
        )
        result = result if isinstance(result, dict) else {}
        capabilities = result.get("capabilities")
        self.capabilities = capabilities if isinstance(capabilities, dict) else {}
        info = result.get("serverInfo")
        self.server_info = info if isinstance(info, dict) else {}
        encoding = self.capabilities.get("positionEncoding", UTF16)
        self.position_encoding = encoding if encoding in OFFERED_ENCODINGS else UTF16
        if self.config.position_encoding != "auto":
            self.position_encoding = self.config.position_encoding
        await self.rpc.notify("initialized", {})
        self._progress.touch()  # the indexing a server starts now reports its begin a moment later
        if self.config.settings:
            await self.rpc.notify("workspace/didChangeConfiguration", {"settings": self.config.settings})

    # --- the server's requests and notifications -----------------------------------------------------------------

    def _install_handlers(self, rpc: JsonRpcEndpoint) -> None:
        async def configuration(params: Any) -> list[Any]:
            items = params.get("items", []) if isinstance(params, dict) else []
            return [self._setting(item.get("section") if isinstance(item, dict) else None) for item in items]

        async def nothing(params: Any) -> None:
            return None

        async def apply_edit(params: Any) -> JsonObject:
            return {
                "applied": False,
                "failureReason": "Kairox shows edits as a preview; apply them with fs.edit",
            }

        async def folders(params: Any) -> list[JsonObject]:
            return [{"uri": path_to_uri(self.workspace), "name": self.workspace.name}]

        async def show_document(params: Any) -> JsonObject:
            return {"success": False}

        rpc.on_request("workspace/configuration", configuration)
        rpc.on_request("client/registerCapability", nothing)
        rpc.on_request("client/unregisterCapability", nothing)
        rpc.on_request("window/workDoneProgress/create", nothing)
        rpc.on_request("window/showMessageRequest", nothing)
        rpc.on_request("window/showDocument", show_document)
        rpc.on_request("workspace/applyEdit", apply_edit)
        rpc.on_request("workspace/workspaceFolders", folders)
        for refresh in (
            "semanticTokens",
            "inlayHint",
            "inlineValue",
            "codeLens",
            "diagnostic",
            "foldingRange",
        ):
            rpc.on_request(f"workspace/{refresh}/refresh", nothing)
        rpc.on_notification("textDocument/publishDiagnostics", self._on_diagnostics)
        rpc.on_notification("$/progress", self._on_progress)

    def _setting(self, section: str | None) -> Any:
        value: Any = self.config.settings
        for part in (section or "").split(".") if section else ():
            if not isinstance(value, dict) or part not in value:
                return None
            value = value[part]
        return value

    def _on_diagnostics(self, method: str, params: Any) -> None:
        if not isinstance(params, dict) or not isinstance(params.get("uri"), str):
            return
        self._diag_seq += 1
        items = [d for d in params.get("diagnostics") or [] if isinstance(d, dict)]
        version = params.get("version")
        self.diagnostics[params["uri"]] = PushedDiagnostics(
            items=items, version=version if isinstance(version, int) else None, seq=self._diag_seq
        )
        self._diag_changed.set()
        self._diag_changed = anyio.Event()

    def _on_progress(self, method: str, params: Any) -> None:
        if not isinstance(params, dict) or not isinstance(params.get("value"), dict):
            return
        token, value = str(params.get("token")), params["value"]
        if value.get("kind") == "begin":
            self._progress.active[token] = str(value.get("title") or value.get("message") or "working")[:200]
        elif value.get("kind") == "end":
            self._progress.active.pop(token, None)
        self._progress.touch()

    @property
    def progress(self) -> list[str]:
        """Titles of the work the server reported as begun and not yet ended (indexing, analysis ...)."""
        return list(self._progress.active.values())

    async def wait_until_idle(self, timeout: float, *, quiet: float = 0.5) -> bool:
        """Wait until no reported work is active and none has begun, moved on or ended for ``quiet`` seconds
        (a server reports its indexing a moment after it is initialized); False when ``timeout`` passes first."""
        deadline = time.monotonic() + timeout
        while True:
            now = time.monotonic()
            settled = quiet - (now - self._progress.changed_at)
            if not self._progress.active and settled <= 0:
                return True
            if now >= deadline:
                return False
            changed = self._progress.changed
            wait = deadline - now if self._progress.active else min(settled, deadline - now)
            with anyio.move_on_after(wait):
                await changed.wait()

    async def load_project(
        self, paths: Iterable[Path], *, limit: int, timeout: float, truncated: bool = False
    ) -> ProjectLoad:
        """Open ``paths`` (the workspace's files this server serves, at most ``limit``) so that a cross-file
        question (references, rename, workspace symbols) sees every caller, then wait until the server has
        loaded them: a request on an open file (servers answer it once the project is in), then until the work
        it reports with ``$/progress`` has ended, within ``timeout`` seconds in all."""
        deadline = time.monotonic() + timeout
        load = ProjectLoad(truncated=truncated)
        first: OpenDocument | None = None
        for path in paths:
            load.found += 1
            if load.opened >= limit or time.monotonic() >= deadline:
                load.truncated = True
                break
            try:
                document = await self.sync_document(path)
            except (OSError, ValueError):
                continue  # unreadable (or gone since it was listed): the server reads it itself, if it can
            load.opened += 1
            first = first or document
        self._progress.touch()  # a server reports its loading a moment after the files arrive
        answered = True
        if first is not None and self.supports("documentSymbolProvider"):
            try:
                await self.request(
                    "textDocument/documentSymbol",
                    {"textDocument": {"uri": first.uri}},
                    timeout=max(deadline - time.monotonic(), 0.1),
                )
            except RpcError:
                answered = False  # not answered in time (or an error): said as "may be incomplete"
        # a longer quiet time than between queries: a busy machine delays the begin of the loading it reports
        idle = await self.wait_until_idle(max(deadline - time.monotonic(), 0.0), quiet=_LOAD_QUIET)
        load.settled, load.busy = answered and idle, self.progress
        self.project = load
        return load

    async def refresh_documents(self) -> None:
        """Send the text of every open document that changed on disk since it was sent (a server believes the
        open text over the disk); close the ones that are gone."""
        for document in list(self.documents.values()):
            try:
                real, state = locate(str(document.path))
                if real != str(document.path):
                    raise FileNotFoundError(real)
                await self.sync_file(real, state)
            except (OSError, ValueError):
                if self.documents.pop(document.uri, None) is not None and self.rpc is not None:
                    await self.rpc.notify("textDocument/didClose", {"textDocument": {"uri": document.uri}})

    # --- documents -----------------------------------------------------------------------------------------------

    async def sync_document(self, path: Path) -> OpenDocument:
        """Open ``path`` in the server, or send its new text when it changed on disk since."""
        real, state = locate(str(path))
        return await self.sync_file(real, state)

    async def sync_file(self, real: str, state: FileState) -> OpenDocument:
        """:meth:`sync_document` for a path whose symlinks are resolved (``real``) and its status taken before;
        the file is read again unless that status is the one of the text last sent, and settled."""
        assert self.rpc is not None
        uri = real_path_uri(real)
        document = self.documents.get(uri)
        if document is not None and document.state is not None and document.state.same_file_as(state):
            return document
        text = read_text(real)
        if document is None:
            resolved = Path(real)
            document = OpenDocument(
                path=resolved,
                uri=uri,
                language_id=language_id(resolved, self.config.languages),
                version=1,
                text=text,
                lines=split_lines(text),
                state=state,
                sent_at=self._diag_seq,
            )
            self.documents[uri] = document
            await self.rpc.notify(
                "textDocument/didOpen",
                {
                    "textDocument": {
                        "uri": uri,
                        "languageId": document.language_id,
                        "version": 1,
                        "text": text,
                    }
                },
            )
        elif document.text != text:
            document.version += 1
            document.text = text
            document.lines = split_lines(text)
            document.state = state
            document.sent_at = self._diag_seq
            await self.rpc.notify(
                "textDocument/didChange",
                {
                    "textDocument": {"uri": uri, "version": document.version},
                    "contentChanges": [{"text": text}],
                },
            )
        else:
            document.state = state
        return document

    async def pushed_diagnostics(self, document: OpenDocument, *, timeout: float) -> PushedDiagnostics | None:
        """The diagnostics the server pushed for the document's current text, waiting up to ``timeout``."""
        with anyio.move_on_after(timeout):
            while True:
                pushed = self.diagnostics.get(document.uri)
                fresh = pushed is not None and pushed.seq > document.sent_at
                if fresh and pushed and (pushed.version is None or pushed.version >= document.version):
                    return pushed
                await self._diag_changed.wait()
        return None

    def text_of(self, uri: str) -> str:
        """The text of a document as the server sees it (open) or as it is on disk ('' when it cannot be read)."""
        document = self.documents.get(uri)
        if document is not None:
            return document.text
        return disk_text(str(uri_to_path(uri)))

    def lines_of(self, uri: str) -> list[str]:
        """The lines of :meth:`text_of` as LSP counts them (an open document's are shared: do not change the list)."""
        document = self.documents.get(uri)
        if document is not None:
            return document.lines
        return split_lines(disk_text(str(uri_to_path(uri))))

    # --- requests ------------------------------------------------------------------------------------------------

    def supports(self, capability: str) -> bool:
        value = self.capabilities.get(capability)
        return value is not None and value is not False

    async def request(self, method: str, params: Any = None, *, timeout: float | None = None) -> Any:
        if self.rpc is None:
            raise RuntimeError("the client has not been started")
        return await self.rpc.request(method, params, timeout=timeout)
