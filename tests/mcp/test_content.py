"""What a server sends back becomes Kairox content; a malformed part is kept as data, never an exception."""

import mcp_types

from kairox.mcp._content import resource_contents_from_mcp
from kairox.tools import EmbeddedResource, TextContent, ToolResult


def test_text_blob_that_is_not_base64_is_kept_as_the_blob() -> None:
    good = mcp_types.BlobResourceContents(uri="file:///a.txt", mime_type="text/plain", blob="aGk=")
    bad = mcp_types.BlobResourceContents(uri="file:///b.txt", mime_type="text/plain", blob="!!!notbase64")

    result = resource_contents_from_mcp(mcp_types.ReadResourceResult(contents=[good, bad]))

    assert result == ToolResult(
        content=(TextContent(text="hi"), EmbeddedResource(uri="file:///b.txt", mime_type="text/plain", blob="!!!notbase64"))
    )
