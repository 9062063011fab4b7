"""The neutral conversation model every provider translates from and to: text, tool calls, tool results, images,
usage. Messages serialise to plain JSON for transcripts and come back from it on ``--resume``."""

import enum
from dataclasses import dataclass, field
from typing import Any

from kairox._util._json import JsonObject


class Role(enum.StrEnum):
    USER = "user"
    ASSISTANT = "assistant"
    TOOL = "tool"
    """The results of one assistant message's tool calls, together (Anthropic needs them in one message)."""


@dataclass(frozen=True, kw_only=True, slots=True)
class ImagePart:
    data: str
    """Base64."""
    mime_type: str


@dataclass(frozen=True, kw_only=True, slots=True)
class ToolCallPart:
    id: str
    name: str
    """The wire name the model called (``fs_read``)."""
    arguments: JsonObject = field(default_factory=dict)
    invalid_arguments: str | None = None
    """Why the arguments the model sent could not be read (not a JSON object); the call is answered with it."""


@dataclass(frozen=True, kw_only=True, slots=True)
class ToolResultPart:
    call_id: str
    name: str
    text: str
    is_error: bool = False
    images: tuple[ImagePart, ...] = ()


@dataclass(frozen=True, kw_only=True, slots=True)
class Message:
    role: Role
    text: str = ""
    tool_calls: tuple[ToolCallPart, ...] = ()
    tool_results: tuple[ToolResultPart, ...] = ()
    images: tuple[ImagePart, ...] = ()
    summary: bool = False
    """A user message holding the model's summary of the turns a compaction replaced."""
    reasoning: tuple[JsonObject, ...] = ()
    """The provider's reasoning items of an answer (Responses), sent back with the conversation as they came."""

    @classmethod
    def user(cls, text: str) -> "Message":
        return cls(role=Role.USER, text=text)

    def to_json(self) -> JsonObject:
        data: JsonObject = {"role": str(self.role)}
        if self.text:
            data["text"] = self.text
        if self.tool_calls:
            data["tool_calls"] = [{"id": c.id, "name": c.name, "arguments": c.arguments} for c in self.tool_calls]
        if self.tool_results:
            data["tool_results"] = [
                {
                    "call_id": r.call_id,
                    "name": r.name,
                    "text": r.text,
                    "is_error": r.is_error,
                    "images": [_image_json(i) for i in r.images],
                }
                for r in self.tool_results
            ]
        if self.images:
            data["images"] = [_image_json(i) for i in self.images]
        if self.summary:
            data["summary"] = True
        if self.reasoning:
            data["reasoning"] = list(self.reasoning)
        return data

    @classmethod
    def from_json(cls, data: Any) -> "Message":
        """A message as ``to_json`` wrote it; raises ``ValueError`` for anything else."""
        if not isinstance(data, dict) or data.get("role") not in {r.value for r in Role}:
            raise ValueError(f"not a message: {str(data)[:120]}")
        return cls(
            role=Role(data["role"]),
            text=str(data.get("text", "")),
            tool_calls=tuple(
                ToolCallPart(id=str(c["id"]), name=str(c["name"]), arguments=dict(c.get("arguments") or {}))
                for c in data.get("tool_calls", [])
            ),
            tool_results=tuple(
                ToolResultPart(
                    call_id=str(r["call_id"]),
                    name=str(r.get("name", "")),
                    text=str(r.get("text", "")),
                    is_error=bool(r.get("is_error")),
                    images=tuple(_image(i) for i in r.get("images", [])),
                )
                for r in data.get("tool_results", [])
            ),
            images=tuple(_image(i) for i in data.get("images", [])),
            summary=bool(data.get("summary")),
            reasoning=tuple(r for r in data.get("reasoning", []) if isinstance(r, dict)),
        )


def _image_json(image: ImagePart) -> JsonObject:
    return {"data": image.data, "mime_type": image.mime_type}


def _image(data: Any) -> ImagePart:
    return ImagePart(data=str(data["data"]), mime_type=str(data["mime_type"]))


@dataclass(frozen=True, kw_only=True, slots=True)
class Usage:
    input_tokens: int = 0
    """The whole prompt, cached parts included (what it takes of the window)."""
    output_tokens: int = 0
    cache_read_tokens: int = 0
    """Of ``input_tokens``: read from the provider's prompt cache."""
    cache_write_tokens: int = 0
    """Of ``input_tokens``: written to the provider's prompt cache (Anthropic reports it)."""

    def __add__(self, other: "Usage") -> "Usage":
        return Usage(
            input_tokens=self.input_tokens + other.input_tokens,
            output_tokens=self.output_tokens + other.output_tokens,
            cache_read_tokens=self.cache_read_tokens + other.cache_read_tokens,
            cache_write_tokens=self.cache_write_tokens + other.cache_write_tokens,
        )


@dataclass(frozen=True, kw_only=True, slots=True)
class ModelRequest:
    model: str
    system: str
    messages: tuple[Message, ...]
    tools: tuple[JsonObject, ...] = ()
    """Definitions in the provider's dialect (``ToolRegistry.definitions``), in the order first sent."""
    max_output_tokens: int = 8192
    cache_key: str | None = None
    """Names the prompt prefix for providers that route by it (OpenAI's ``prompt_cache_key``)."""


@dataclass(frozen=True, kw_only=True, slots=True)
class ModelResponse:
    message: Message
    usage: Usage
    stop_reason: str | None = None
