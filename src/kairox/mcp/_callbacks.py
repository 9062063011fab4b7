"""What a server may ask the client (roots, elicitation, sampling) and tell it (log messages), answered through
:class:`ClientFeatures` and events (M8). Parameters and answers are the wire's JSON, so both sessions use them."""

from pathlib import Path
from typing import Any

from kairox._rpc._replies import INVALID_PARAMS, INVALID_REQUEST, MethodError
from kairox.events import EventSink
from kairox.mcp._events import McpServerLog
from kairox.mcp._features import ClientFeatures, ElicitationRequest, SamplingRequest, apply_schema_defaults


class ClientCallbacks:
    """One server's requests to the client, in Kairox terms."""

    def __init__(self, server: str, features: ClientFeatures, events: EventSink) -> None:
        self.server = server
        self.features = features
        self.events = events

    def capabilities(self) -> dict[str, Any]:
        """What the client declares: roots and both kinds of elicitation always, sampling with a model."""
        declared: dict[str, Any] = {"elicitation": {"form": {}, "url": {}}, "roots": {"listChanged": True}}
        if self.features.sampling is not None:
            declared["sampling"] = {}
        return declared

    def log(self, params: Any) -> None:
        params = params if isinstance(params, dict) else {}
        level = params.get("level")
        logger = params.get("logger")
        self.events.emit(
            McpServerLog(
                server=self.server,
                level=level if isinstance(level, str) else "info",
                data=params.get("data"),
                logger=logger if isinstance(logger, str) else None,
            )
        )

    def list_roots(self) -> dict[str, Any]:
        return {"roots": [_root(path) for path in self.features.roots]}

    async def elicit(self, params: Any) -> dict[str, Any]:
        if not isinstance(params, dict) or not isinstance(params.get("message"), str):
            raise MethodError(INVALID_PARAMS, "elicitation/create needs a message")
        if params.get("mode") == "url" or "url" in params:
            if not isinstance(params.get("url"), str):
                raise MethodError(INVALID_PARAMS, "a URL elicitation needs a url")
            request = ElicitationRequest(server=self.server, message=params["message"], url=params["url"])
        else:
            schema = params.get("requestedSchema")
            if not isinstance(schema, dict):
                raise MethodError(INVALID_PARAMS, "a form elicitation needs a requestedSchema object")
            request = ElicitationRequest(server=self.server, message=params["message"], requested_schema=dict(schema))
        answer = await self.features.elicitation(request)
        if answer.action != "accept":
            return {"action": answer.action}
        if request.url is not None:
            return {"action": "accept"}
        # SEP-1034: fields the user left out take the schema's defaults
        return {"action": "accept", "content": apply_schema_defaults(answer.content, request.requested_schema)}

    async def sample(self, params: Any) -> dict[str, Any]:
        handler = self.features.sampling
        if handler is None:
            raise MethodError(
                INVALID_REQUEST, f"Kairox has no model configured for sampling; {self.server}'s request was refused"
            )
        if not isinstance(params, dict) or not isinstance(params.get("messages"), list):
            raise MethodError(INVALID_PARAMS, "sampling/createMessage needs a list of messages")
        system_prompt, max_tokens = params.get("systemPrompt"), params.get("maxTokens")
        request = SamplingRequest(
            server=self.server,
            messages=tuple(params["messages"]),
            system_prompt=system_prompt if isinstance(system_prompt, str) else None,
            max_tokens=max_tokens if isinstance(max_tokens, int) else 0,
            raw=params,
        )
        answer = await handler(request)
        result: dict[str, Any] = {
            "role": "assistant",
            "content": {"type": "text", "text": answer.text},
            "model": answer.model,
        }
        if answer.stop_reason is not None:
            result["stopReason"] = answer.stop_reason
        return result


def _root(path: Path) -> dict[str, str]:
    return {"uri": path.resolve().as_uri(), "name": path.name or str(path)}
