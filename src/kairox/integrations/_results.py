"""A gate result as the text a framework hands back to its model."""

import json

from kairox.tools import EmbeddedResource, ImageContent, ResourceLink, TextContent, ToolResult


def result_images(result: ToolResult) -> list[ImageContent]:
    """The images of a result, which the adapters hand to their framework beside the text."""
    return [content for content in result.content if isinstance(content, ImageContent)]


def result_text(result: ToolResult) -> str:
    """The result's text (a refusal says why it was not run); structured content when there is no text; an image
    or other content named by its kind (images also go along as images: ``result_images``)."""
    parts: list[str] = []
    for content in result.content:
        if isinstance(content, TextContent):
            parts.append(content.text)
        elif isinstance(content, EmbeddedResource):
            parts.append(
                content.text
                if content.text is not None
                else f"[resource {content.uri} ({content.mime_type or 'binary'})]"
            )
        elif isinstance(content, ResourceLink):
            parts.append(f"[resource link {content.uri}: {content.name}]")
        elif isinstance(content, ImageContent):
            parts.append(f"[image {content.mime_type}]")
        else:
            parts.append(f"[{content.type} content, {content.mime_type}, not shown]")
    text = "\n".join(parts)
    if not text and result.structured is not None:
        text = json.dumps(result.structured, ensure_ascii=False)
    return text or "(no output)"
