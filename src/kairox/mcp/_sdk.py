"""The SDK's ``Client`` as an :class:`~kairox.mcp._session.McpSession`, for remote servers (SSE and Streamable
HTTP, OAuth included), whichever era they speak. Importing this module imports the SDK; a process whose servers
all run over stdio never does.

Listing follows every page (with a cap); a page the SDK refuses as a whole because of one malformed tool is read
raw, so the other tools of that page are kept.
"""

import contextlib
from collections.abc import Callable
from typing import Any

import anyio
import anyio.abc
import mcp_types
from mcp.client import Transport
from mcp.client.session import ClientRequestContext
from mcp.shared.exceptions import MCPError
from pydantic import ValidationError

from kairox._version import __version__
from kairox.mcp._callbacks import ClientCallbacks
from kairox.mcp._content import (
    McpResource,
    McpTool,
    prompts_page,
    resource_contents_from_wire,
    resources_page,
    result_from_wire,
    tool_from_wire,
    tools_page,
)
from kairox.mcp._session import (
    InvalidResult,
    PageFetch,
    ProgressHandler,
    ServerOffers,
    SessionError,
    T,
    every_page,
)
from kairox.tools import ToolResult
from mcp import Client

_DUMP: dict[str, Any] = {"by_alias": True, "mode": "json", "exclude_none": True}


def _wire(model: Any) -> Any:
    return model.model_dump(**_DUMP)


def _session_error(exc: MCPError) -> SessionError:
    return SessionError(exc.error.code, exc.error.message, exc.error.data)


class SdkSession:
    """A connected SDK ``Client`` in Kairox's terms."""

    def __init__(self, client: Client, *, server: str) -> None:
        self.client = client
        self.server = server
        self.protocol_version = client.protocol_version or ""
        self.instructions = client.instructions
        caps = client.server_capabilities
        self.offers = ServerOffers.from_wire(_wire(caps))

    @property
    def needs_listen(self) -> bool:
        """2026-era servers announce tool changes only on a ``subscriptions/listen`` stream."""
        from mcp_types.version import MODERN_PROTOCOL_VERSIONS

        return self.protocol_version in MODERN_PROTOCOL_VERSIONS and self.offers.tools_list_changed

    async def listen(self, *, task_status: anyio.abc.TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
        """Hold the ``subscriptions/listen`` stream open (its changes reach the client's message handler)."""
        async with self.client.listen(tools_list_changed=True) as subscription:
            task_status.started()
            async for _event in subscription:
                pass

    async def list_tools(self) -> tuple[McpTool, ...]:
        async def fetch(cursor: str | None) -> tuple[list[McpTool], str | None]:
            try:
                page = await self.client.list_tools(cursor=cursor, cache_mode="bypass")
            except ValidationError:
                return await self._list_tools_raw(cursor)
            return [tool_from_wire(_wire(tool)) for tool in page.tools], page.next_cursor

        return tuple(await every_page(_sdk_errors(fetch)))

    async def _list_tools_raw(self, cursor: str | None) -> tuple[list[McpTool], str | None]:
        """One page read raw and each tool read alone, for a page the SDK refused as a whole."""
        session = self.client.session
        request = mcp_types.ListToolsRequest(params=mcp_types.PaginatedRequestParams(cursor=cursor))
        data = request.model_dump(by_alias=True, mode="json", exclude_none=True)
        opts: Any = {}
        # the SDK validates a page as a whole; reading it raw is the only way to keep the good tools of a page
        # that holds one bad tool (the same stamp and dispatcher ``send_request`` uses)
        session._stamp(data, opts)
        raw = await session._dispatcher.send_raw_request("tools/list", data.get("params"), opts)
        found, next_cursor = tools_page(raw)
        valid = []
        for item in raw["tools"]:
            with contextlib.suppress(ValidationError):
                valid.append(mcp_types.Tool.model_validate(item, by_name=False))
        result = mcp_types.ListToolsResult(tools=valid, next_cursor=next_cursor)
        # keep the session's per-tool state (output schema validators, header maps) as a normal listing would
        session._absorb_tool_listing(result, complete=cursor is None and next_cursor is None)
        return found, next_cursor

    async def list_resources(self) -> list[McpResource]:
        async def resources(cursor: str | None) -> tuple[list[McpResource], str | None]:
            page = await self.client.list_resources(cursor=cursor, cache_mode="bypass")
            return resources_page(_wire(page), templates=False)

        async def templates(cursor: str | None) -> tuple[list[McpResource], str | None]:
            page = await self.client.list_resource_templates(cursor=cursor, cache_mode="bypass")
            return resources_page(_wire(page), templates=True)

        return await every_page(_sdk_errors(resources)) + await every_page(_sdk_errors(templates))

    async def list_prompts(self) -> tuple[str, ...]:
        async def fetch(cursor: str | None) -> tuple[list[str], str | None]:
            return prompts_page(_wire(await self.client.list_prompts(cursor=cursor, cache_mode="bypass")))

        return tuple(await every_page(_sdk_errors(fetch)))

    async def call_tool(self, name: str, arguments: dict[str, Any], on_progress: ProgressHandler) -> ToolResult:
        try:
            raw = await self.client.call_tool(name, arguments, progress_callback=on_progress)  # type: ignore[arg-type]
        except MCPError as exc:
            raise _session_error(exc) from exc
        except (RuntimeError, ValidationError) as exc:
            raise InvalidResult(str(exc)) from exc
        return result_from_wire(_wire(raw))

    async def read_resource(self, uri: str) -> ToolResult:
        try:
            return resource_contents_from_wire(_wire(await self.client.read_resource(uri, cache_mode="bypass")))
        except MCPError as exc:
            raise _session_error(exc) from exc
        except ValidationError as exc:
            raise InvalidResult(str(exc)) from exc


def _sdk_errors(fetch: PageFetch[T]) -> PageFetch[T]:
    """``fetch`` with the SDK's JSON-RPC errors as Kairox's."""

    async def fetched(cursor: str | None) -> tuple[list[T], str | None]:
        try:
            return await fetch(cursor)
        except MCPError as exc:
            raise _session_error(exc) from exc

    return fetched


def sdk_client(
    transport: Transport,
    *,
    mode: str,
    callbacks: ClientCallbacks,
    on_tools_changed: Callable[[], None],
    on_violation: Callable[[str], None],
) -> Client:
    """The SDK ``Client`` for one connection, its callbacks answering through ``callbacks``."""

    async def log(params: mcp_types.LoggingMessageNotificationParams) -> None:
        callbacks.log(_wire(params))

    async def list_roots(context: ClientRequestContext) -> mcp_types.ListRootsResult:
        return mcp_types.ListRootsResult.model_validate(callbacks.list_roots())

    async def elicit(
        context: ClientRequestContext, params: mcp_types.ElicitRequestParams
    ) -> mcp_types.ElicitResult | mcp_types.ErrorData:
        try:
            return mcp_types.ElicitResult.model_validate(await callbacks.elicit(_wire(params)))
        except SessionError as exc:
            return mcp_types.ErrorData(code=exc.code, message=exc.message)

    async def sample(
        context: ClientRequestContext, params: mcp_types.CreateMessageRequestParams
    ) -> mcp_types.CreateMessageResult | mcp_types.ErrorData:
        try:
            return mcp_types.CreateMessageResult.model_validate(await callbacks.sample(_wire(params)))
        except SessionError as exc:
            return mcp_types.ErrorData(code=exc.code, message=exc.message)

    async def on_message(message: Any) -> None:
        if isinstance(message, Exception):
            on_violation(str(message)[:300])
        elif isinstance(message, mcp_types.ToolListChangedNotification):
            on_tools_changed()

    return Client(
        transport,
        mode=mode,  # type: ignore[arg-type]
        cache=None,
        client_info=mcp_types.Implementation(name="kairox", version=__version__),
        list_roots_callback=list_roots,
        elicitation_callback=elicit,
        sampling_callback=sample if callbacks.features.sampling is not None else None,
        logging_callback=log,
        log_level="info",
        message_handler=on_message,
    )
