"""What Kairox answers when a server asks the client something (M8): roots, elicitation, sampling.

The callbacks are Kairox types; the SDK callbacks that wrap them live in ``_client.py``.
"""

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from kairox._util._json import JsonObject


@dataclass(frozen=True, kw_only=True, slots=True)
class ElicitationRequest:
    server: str
    message: str
    requested_schema: JsonObject | None = None
    """A flat JSON schema of the form to fill (form mode)."""
    url: str | None = None
    """The page the user is asked to open (URL mode)."""


@dataclass(frozen=True, kw_only=True, slots=True)
class ElicitationAnswer:
    action: Literal["accept", "decline", "cancel"]
    content: JsonObject | None = None
    """The filled form; fields left out get the schema's defaults."""


@dataclass(frozen=True, kw_only=True, slots=True)
class SamplingRequest:
    server: str
    messages: tuple[JsonObject, ...]
    system_prompt: str | None = None
    max_tokens: int = 0
    raw: JsonObject = field(default_factory=dict)
    """The whole ``sampling/createMessage`` params, for runtimes that need more."""


@dataclass(frozen=True, kw_only=True, slots=True)
class SamplingAnswer:
    text: str
    model: str
    stop_reason: str | None = "endTurn"


CallbackParams = dict[str, str]
"""The query parameters an authorization server redirected back with (``code``, ``state``, ``iss``)."""


@dataclass(frozen=True, kw_only=True, slots=True)
class OAuthLogin:
    """How to get the user through an authorization page: where to be redirected to, and who does it."""

    redirect_uri: str
    authorize: Callable[[str], Awaitable[CallbackParams]]
    """Takes the authorization URL; returns the callback's query parameters."""


ElicitationHandler = Callable[[ElicitationRequest], Awaitable[ElicitationAnswer]]
SamplingHandler = Callable[[SamplingRequest], Awaitable[SamplingAnswer]]


async def decline_elicitation(request: ElicitationRequest) -> ElicitationAnswer:
    """What a non-interactive run answers: decline, so the server can go on without the input."""
    return ElicitationAnswer(action="decline")


@dataclass(frozen=True, kw_only=True, slots=True)
class ClientFeatures:
    """The client side of every connection: which roots servers see and who answers their questions."""

    roots: tuple[Path, ...] = ()
    """Usually just the workspace."""
    elicitation: ElicitationHandler = decline_elicitation
    sampling: SamplingHandler | None = None
    """``None``: sampling is not offered and requests are refused (no model is configured)."""
    oauth_login: OAuthLogin | None = None
    """Set by ``kairox mcp login``; ``None``: a server that needs authorization fails with a hint to log in."""


def apply_schema_defaults(content: JsonObject | None, schema: JsonObject | None) -> JsonObject:
    """The form answer with every omitted property that has a ``default`` in the schema filled in."""
    filled: dict[str, Any] = dict(content or {})
    properties = (schema or {}).get("properties")
    if isinstance(properties, dict):
        for name, prop in properties.items():
            if name not in filled and isinstance(prop, dict) and "default" in prop:
                filled[name] = prop["default"]
    return filled
