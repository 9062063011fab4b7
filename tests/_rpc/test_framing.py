"""Content-Length framing as real servers write it."""

import asyncio

import pytest

from kairox._rpc._framing import FramingProblem, MessageReader, encode_message

pytestmark = pytest.mark.anyio


def reader_of(data: bytes) -> MessageReader:
    stream = asyncio.StreamReader()
    stream.feed_data(data)
    stream.feed_eof()
    return MessageReader(stream)


async def read_all(reader: MessageReader) -> list[object]:
    found = []
    while (message := await reader.read()) is not None:
        found.append(message)
    return found


async def test_encoded_messages_read_back_with_non_ascii_text() -> None:
    data = encode_message({"id": 1, "text": "wörld 🎉"}) + encode_message([1, 2])
    assert data.startswith(b"Content-Length: 29\r\n\r\n")  # bytes of UTF-8, not characters
    assert await read_all(reader_of(data)) == [{"id": 1, "text": "wörld 🎉"}, [1, 2]]


async def test_reading_tolerates_header_case_extra_headers_bare_newlines_and_noise() -> None:
    body = b'{"a":1}'
    data = (
        b"server starting up...\n"
        b"content-length: 7\n"
        b"Content-Type: application/vscode-jsonrpc; charset=utf-8\n\n"
        + body
        + b"\r\n\r\nCONTENT-LENGTH:7\r\n\r\n"
        + body
    )
    assert await read_all(reader_of(data)) == [{"a": 1}, {"a": 1}]


async def test_a_body_that_is_not_json_is_reported_and_the_stream_goes_on() -> None:
    data = b"Content-Length: 5\r\n\r\n{oops" + encode_message({"ok": True})
    first, second = await read_all(reader_of(data))
    assert isinstance(first, FramingProblem) and first.body == b"{oops"
    assert first.reason.startswith("body is not JSON:")
    assert second == {"ok": True}


async def test_a_stream_cut_inside_a_body_is_reported() -> None:
    messages = await read_all(reader_of(b'Content-Length: 50\r\n\r\n{"partial"'))
    assert messages == [FramingProblem(reason="stream ended inside a 50-byte body", body=b'{"partial"')]
