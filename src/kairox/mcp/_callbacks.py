"""The SDK callbacks of one connection: roots, elicitation, sampling and log messages (M8), in Kairox terms."""

from pathlib import Path

import mcp_types
from mcp.client.session import ClientRequestContext

from kairox.events import EventSink
from kairox.mcp._events import McpServerLog
from kairox.mcp._features import ClientFeatures, ElicitationRequest, SamplingRequest, apply_schema_defaults


class ClientCallbacks:
    """What one server may ask the client, answered through :class:`ClientFeatures` and events."""

    def __init__(self, server: str, features: ClientFeatures, events: EventSink) -> None:
        self.server = server
        self.features = features
        self.events = events

    async def log(self, params: mcp_types.LoggingMessageNotificationParams) -> None:
        self.events.emit(McpServerLog(server=self.server, level=params.level, data=params.data, logger=params.logger))

    async def list_roots(self, context: ClientRequestContext) -> mcp_types.ListRootsResult:
        return mcp_types.ListRootsResult(roots=[_root(path) for path in self.features.roots])

    async def elicit(
        self, context: ClientRequestContext, params: mcp_types.ElicitRequestParams
    ) -> mcp_types.ElicitResult | mcp_types.ErrorData:
        if isinstance(params, mcp_types.ElicitRequestURLParams):
            request = ElicitationRequest(server=self.server, message=params.message, url=params.url)
        else:
            request = ElicitationRequest(
                server=self.server, message=params.message, requested_schema=dict(params.requested_schema)
            )
        answer = await self.features.elicitation(request)
        if answer.action != "accept":
            return mcp_types.ElicitResult(action=answer.action)
        if request.url is not None:
            return mcp_types.ElicitResult(action="accept")
        # SEP-1034: fields the user left out take the schema's defaults
        content = apply_schema_defaults(answer.content, request.requested_schema)
        return mcp_types.ElicitResult(action="accept", content=content)

    async def sample(
        self, context: ClientRequestContext, params: mcp_types.CreateMessageRequestParams
    ) -> mcp_types.CreateMessageResult | mcp_types.ErrorData:
        handler = self.features.sampling
        if handler is None:
            return mcp_types.ErrorData(
                code=mcp_types.INVALID_REQUEST,
                message=f"Kairox has no model configured for sampling; {self.server}'s request was refused",
            )
        raw = params.model_dump(by_alias=True, mode="json", exclude_none=True)
        request = SamplingRequest(
            server=self.server,
            messages=tuple(raw.get("messages", [])),
            system_prompt=params.system_prompt,
            max_tokens=params.max_tokens,
            raw=raw,
        )
        answer = await handler(request)
        return mcp_types.CreateMessageResult(
            role="assistant",
            content=mcp_types.TextContent(text=answer.text),
            model=answer.model,
            stop_reason=answer.stop_reason,
        )


def _root(path: Path) -> mcp_types.Root:
    return mcp_types.Root(uri=path.resolve().as_uri(), name=path.name or str(path))  # type: ignore[arg-type]
