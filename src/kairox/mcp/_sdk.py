"""The SDK's ``Client`` as an :class:`~kairox.mcp._session.McpSession`, for remote servers (SSE and Streamable
HTTP, OAuth included), whichever era they speak. Importing this module imports the SDK; a process whose servers
all run over stdio never does.

The SDK does the transport, the handshake and what it stamps on each request (the protocol version, the 2026
headers, ``Mcp-Param-*`` from a tool's ``x-mcp-header`` arguments); the requests go out raw and their answers are
read as Kairox reads them (``_session``), so both sessions treat results alike. Tools are listed by the SDK, which
drops those the 2026 revision says a client must drop; a page it refuses as a whole because of one malformed tool
is read raw, so the other tools of that page are kept.
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

from kairox._rpc._replies import MethodError
from kairox._version import __version__
from kairox.mcp._callbacks import ClientCallbacks
from kairox.mcp._content import McpTool, tool_from_wire, tools_page
from kairox.mcp._session import McpSession, ProgressHandler, ServerOffers, SessionError, every_page
from mcp import Client

_DUMP: dict[str, Any] = {"by_alias": True, "mode": "json", "exclude_none": True}


def _wire(model: Any) -> Any:
    return model.model_dump(**_DUMP)


class SdkSession(McpSession):
    """A connected SDK ``Client`` in Kairox's terms."""

    def __init__(self, client: Client, *, server: str, callbacks: ClientCallbacks) -> None:
        super().__init__(callbacks)
        self.client = client
        self.server = server
        self.protocol_version = client.protocol_version or ""
        self.instructions = client.instructions
        self.offers = ServerOffers.from_wire(_wire(client.server_capabilities))
        info = client.session.server_info
        self.server_info = _wire(info) if info is not None else None

    @property
    def needs_listen(self) -> bool:
        from mcp_types.version import MODERN_PROTOCOL_VERSIONS

        return self.protocol_version in MODERN_PROTOCOL_VERSIONS and self.offers.tools_list_changed

    async def listen(self, *, task_status: anyio.abc.TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
        """Hold the ``subscriptions/listen`` stream open (its changes reach the client's message handler)."""
        async with self.client.listen(tools_list_changed=True) as subscription:
            task_status.started()
            async for _event in subscription:
                pass

    async def request(
        self, method: str, params: dict[str, Any] | None = None, *, progress: ProgressHandler | None = None
    ) -> dict[str, Any]:
        session = self.client.session
        data: dict[str, Any] = {"method": method, "params": dict(params or {})}
        opts: Any = {"on_progress": progress} if progress is not None else {}
        # the SDK's own stamp and dispatcher, as its typed requests use them: the raw answer is read as Kairox
        # reads every answer (a result without ``resultType`` is complete, as the revision says)
        session._stamp(data, opts)
        try:
            raw = await session._dispatcher.send_raw_request(method, data.get("params"), opts)
        except MCPError as exc:
            raise SessionError(exc.error.code, exc.error.message, exc.error.data) from exc
        return raw  # type: ignore[no-any-return]

    async def list_tools(self) -> tuple[McpTool, ...]:
        async def fetch(cursor: str | None) -> tuple[list[McpTool], str | None]:
            try:
                page = await self.client.list_tools(cursor=cursor, cache_mode="bypass")
            except ValidationError:
                return await self._list_tools_raw(cursor)
            except MCPError as exc:
                raise SessionError(exc.error.code, exc.error.message, exc.error.data) from exc
            return [tool_from_wire(_wire(tool)) for tool in page.tools], page.next_cursor

        return self._listed(await every_page(fetch))

    async def _list_tools_raw(self, cursor: str | None) -> tuple[list[McpTool], str | None]:
        """One page read raw and each tool read alone, for a page the SDK refused as a whole."""
        raw = await self.request("tools/list", {"cursor": cursor} if cursor is not None else None)
        found, next_cursor = tools_page(raw)
        valid = []
        for item in raw["tools"]:
            with contextlib.suppress(ValidationError):
                valid.append(mcp_types.Tool.model_validate(item, by_name=False))
        result = mcp_types.ListToolsResult(tools=valid, next_cursor=next_cursor)
        # keep the session's per-tool state (header maps) as a normal listing would; the page's tools it drops
        # (2026: an invalid x-mcp-header) are dropped here too
        kept = {tool.name for tool in self.client.session._absorb_tool_listing(result, complete=False).tools}
        return [tool for tool in found if tool.name in kept or tool.problem is not None], next_cursor


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
        except MethodError as exc:
            return mcp_types.ErrorData(code=exc.code, message=exc.message)

    async def sample(
        context: ClientRequestContext, params: mcp_types.CreateMessageRequestParams
    ) -> mcp_types.CreateMessageResult | mcp_types.ErrorData:
        try:
            return mcp_types.CreateMessageResult.model_validate(await callbacks.sample(_wire(params)))
        except MethodError as exc:
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
