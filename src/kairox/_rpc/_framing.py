"""Content-Length framed JSON messages, as LSP and DAP put them on a byte stream.

Reading is tolerant of real servers: header names in any case, extra headers (``Content-Type``), bare ``\\n``
line ends, stray lines a server prints before a header (skipped and counted), and bodies that are not JSON
(reported to the caller as :class:`FramingProblem`, never a crash), and nesting or sizes no reply needs.
"""

import asyncio
import json
from dataclasses import dataclass
from typing import Any

from kairox._util._decode import DecodeProblem, decode_json

MAX_BODY = 64 * 1024 * 1024
"""Largest message body read; a longer one is skipped as a :class:`FramingProblem`."""


def encode_message(message: Any) -> bytes:
    """One framed message: the header block and the compact UTF-8 JSON body."""
    body = json.dumps(message, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    return b"Content-Length: " + str(len(body)).encode("ascii") + b"\r\n\r\n" + body


@dataclass(frozen=True, kw_only=True, slots=True)
class FramingProblem:
    """A message that could not be read as JSON; the stream itself is still usable."""

    reason: str
    body: bytes


class MessageReader:
    """Reads framed JSON messages from an asyncio stream, one per :meth:`read` call."""

    def __init__(self, stream: asyncio.StreamReader) -> None:
        self._stream = stream

    async def read(self) -> Any | FramingProblem | None:
        """The next decoded message, a :class:`FramingProblem`, or ``None`` at end of stream."""
        length: int | None = None
        while True:
            line = await self._stream.readline()
            if not line:
                return None
            text = line.strip()
            if not text:
                if length is not None:
                    break
                continue
            name, sep, value = text.partition(b":")
            # any other line is another header or noise a server printed on stdout: skipped
            if sep and name.strip().lower() == b"content-length":
                try:
                    length = int(value.strip())
                except ValueError:
                    length = None
                if length is not None and length < 0:
                    length = None
        if length > MAX_BODY:
            await self._discard(length)
            return FramingProblem(
                reason=f"a {length}-byte body is larger than {MAX_BODY} bytes; it was skipped", body=b""
            )
        try:
            body = await self._stream.readexactly(length)
        except asyncio.IncompleteReadError as exc:
            if not exc.partial:
                return None
            return FramingProblem(reason=f"stream ended inside a {length}-byte body", body=exc.partial)
        try:
            return decode_json(body)
        except DecodeProblem as exc:
            return FramingProblem(reason=f"body is not JSON: {exc}", body=body)

    async def _discard(self, length: int) -> None:
        while length > 0:
            chunk = await self._stream.read(min(length, 1 << 20))
            if not chunk:
                return
            length -= len(chunk)


class MessageWriter:
    """Writes framed messages; concurrent writers are serialised so frames never interleave."""

    def __init__(self, stream: asyncio.StreamWriter) -> None:
        self._stream = stream
        self._lock = asyncio.Lock()

    async def write(self, message: Any) -> None:
        data = encode_message(message)
        async with self._lock:
            self._stream.write(data)
            await self._stream.drain()

    def close(self) -> None:
        if not self._stream.is_closing():
            self._stream.close()
