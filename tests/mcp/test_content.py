"""What a server sends back becomes Kairox content, read from the wire's JSON: a malformed part is named in a
WireError, never a crash; a tool with malformed fields is kept with its problem, so the listing goes on."""

import pytest

from kairox.mcp._content import (
    WireError,
    resource_contents_from_wire,
    result_from_wire,
    tool_from_wire,
    tools_page,
)
from kairox.tools import EmbeddedResource, ImageContent, ResourceLink, TextContent, ToolResult


def test_text_blob_that_is_not_base64_is_kept_as_the_blob() -> None:
    raw = {
        "contents": [
            {"uri": "file:///a.txt", "mimeType": "text/plain", "blob": "aGk="},
            {"uri": "file:///b.txt", "mimeType": "text/plain", "blob": "!!!notbase64"},
        ]
    }

    result = resource_contents_from_wire(raw)

    assert result == ToolResult(
        content=(
            TextContent(text="hi"),
            EmbeddedResource(uri="file:///b.txt", mime_type="text/plain", blob="!!!notbase64"),
        )
    )


def test_every_content_kind_and_the_result_fields_are_read() -> None:
    raw = {
        "content": [
            {"type": "text", "text": "a"},
            {"text": "no type is text"},
            {"type": "image", "data": "AA==", "mimeType": "image/png"},
            {"type": "resource", "resource": {"uri": "memo://x", "text": "body"}},
            {"type": "resource_link", "uri": "memo://y", "name": "y"},
            {"type": "hologram"},
        ],
        "structuredContent": [1, 2],
        "isError": True,
        "_meta": {"k": 1},
    }

    result = result_from_wire(raw)

    assert result.content == (
        TextContent(text="a"),
        TextContent(text="no type is text"),
        ImageContent(data="AA==", mime_type="image/png"),
        EmbeddedResource(uri="memo://x", text="body"),
        ResourceLink(uri="memo://y", name="y"),
        TextContent(text="[content of type 'hologram' that Kairox does not render]"),
    )
    assert (result.structured, result.is_error, result.meta) == ({"value": [1, 2]}, True, {"k": 1})


@pytest.mark.parametrize(
    ("raw", "named"),
    [
        ({}, "no content list"),
        ({"content": "text"}, "no content list"),
        ({"content": [], "isError": "yes"}, "isError"),
        ({"content": [{"type": "text", "text": 5}]}, "content[0].text"),
        ({"content": [{"type": "text", "text": "a"}, {"type": "image", "data": "AA=="}]}, "content[1]"),
        ({"content": [{"type": "resource", "resource": {"uri": "x"}}]}, "content[0].resource"),
        ({"content": [{"type": "resource_link", "uri": "x"}]}, "content[0]"),
        ([], "not an object"),
    ],
)
def test_a_malformed_result_is_a_wire_error_naming_the_part(raw: object, named: str) -> None:
    with pytest.raises(WireError, match=named.replace("[", r"\[").replace("]", r"\]")):
        result_from_wire(raw)


def test_a_tool_with_malformed_fields_is_kept_with_its_problem_and_the_page_goes_on() -> None:
    page = {
        "tools": [
            {"name": "good", "inputSchema": {"type": "object"}, "annotations": {"readOnlyHint": True}},
            {"name": "no_schema"},
            {"name": "bad_hint", "inputSchema": {"type": "object"}, "annotations": {"readOnlyHint": "yes"}},
            "not a tool",
        ],
        "nextCursor": "page-2",
    }

    tools, cursor = tools_page(page)

    assert cursor == "page-2"
    assert [(tool.name, tool.problem) for tool in tools] == [
        ("good", None),
        ("no_schema", "the server listed it with invalid fields: inputSchema"),
        ("bad_hint", "the server listed it with invalid fields: annotations.readOnlyHint"),
        ("#3", "the server listed it with invalid fields: (tool)"),
    ]
    assert tools[0].annotations.read_only_hint is True


def test_a_readable_tool_with_a_looping_schema_carries_that_problem() -> None:
    tool = tool_from_wire({"name": "loop", "inputSchema": {"type": "object", "$ref": "#"}})
    assert tool.problem is not None and "invalid fields" not in tool.problem
