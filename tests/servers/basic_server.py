"""A small, well-behaved MCP server for Kairox's tests, written with the SDK's server side.

Options: ``--delay-init-ms N`` waits before reading the first message (a slow start);
``--stderr-bytes N`` writes N bytes to stderr before answering; ``--name NAME`` sets the server name;
``--http-port PORT`` serves Streamable HTTP on 127.0.0.1 instead of stdio.
Environment: ``KAIROX_TEST_MARKER`` names a file where ``wait_forever`` records that it was cancelled.
"""

import argparse
import base64
import os
import sys
import time
from typing import Annotated, Any

import anyio
from mcp.server.mcpserver import Context, MCPServer
from mcp_types import (
    AudioContent,
    BlobResourceContents,
    CallToolResult,
    ElicitRequest,
    ElicitRequestFormParams,
    ElicitResult,
    EmbeddedResource,
    ImageContent,
    InputRequiredResult,
    ResourceLink,
    TextContent,
    TextResourceContents,
    ToolAnnotations,
)
from pydantic import BaseModel, Field

PNG_1PX = base64.b64encode(
    bytes.fromhex(
        "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
        "1f15c4890000000d49444154789c6360000002000154a24f5d0000000049454e44ae426082"
    )
).decode()

parser = argparse.ArgumentParser()
parser.add_argument("--delay-init-ms", type=int, default=0)
parser.add_argument("--stderr-bytes", type=int, default=0)
parser.add_argument("--name", default="basic")
parser.add_argument("--http-port", type=int, default=0, help="serve Streamable HTTP on 127.0.0.1:PORT instead of stdio")
parser.add_argument(
    "--long-names", action="store_true", help="also serve two tools with 60-character names alike in their first 57"
)
parser.add_argument("--ask-tool", action="store_true", help="also serve `ask`, which asks the client for a colour")
options = parser.parse_args()

app = MCPServer(options.name)


class Sum(BaseModel):
    total: int


@app.tool(annotations=ToolAnnotations(read_only_hint=True, open_world_hint=False))
def echo(message: str) -> str:
    """Return the message unchanged."""
    return message


@app.tool()
def add(a: int, b: int) -> Sum:
    """Add two integers (structured result)."""
    return Sum(total=a + b)


@app.tool()
def bad_structured() -> CallToolResult:
    """Declares an output schema (below) and returns structured content that breaks it."""
    return CallToolResult(content=[TextContent(text="oops")], structured_content={"total": "not a number"})


# the SDK derives no schema from a CallToolResult annotation: declare one the result above breaks
app._tool_manager.get_tool("bad_structured").fn_metadata.output_schema = Sum.model_json_schema()


@app.tool()
async def slow(steps: int, delay: float, ctx: Context) -> str:
    """Report progress ``steps`` times, ``delay`` seconds apart."""
    for step in range(steps):
        await ctx.report_progress(step + 1, steps, f"step {step + 1}")
        await anyio.sleep(delay)
    return f"done after {steps} steps"


@app.tool()
async def wait_forever() -> str:
    """Never returns; writes a marker file when cancelled."""
    try:
        await anyio.sleep_forever()
    finally:
        marker = os.environ.get("KAIROX_TEST_MARKER")
        if marker:
            with open(marker, "w") as handle:
                handle.write("cancelled")
    return "unreachable"


@app.tool()
async def die() -> str:
    """The server process exits in the middle of this call."""
    sys.stderr.write("dying in the middle of a call\n")
    sys.stderr.flush()
    await anyio.sleep(0.05)
    os._exit(17)


@app.tool()
def media() -> list[TextContent | ImageContent | AudioContent | EmbeddedResource | ResourceLink]:
    """One content block of every kind."""
    return [
        TextContent(text="caption"),
        ImageContent(data=PNG_1PX, mime_type="image/png"),
        AudioContent(data=base64.b64encode(b"RIFF").decode(), mime_type="audio/wav"),
        EmbeddedResource(resource=TextResourceContents(uri="memo://note", mime_type="text/plain", text="note body")),
        EmbeddedResource(
            resource=BlobResourceContents(uri="memo://blob", mime_type="application/octet-stream", blob="AAE=")
        ),
        ResourceLink(uri="memo://linked", name="linked", description="a linked resource", mime_type="text/plain"),
    ]


@app.tool()
async def log(message: str, ctx: Context) -> str:
    """Send a log notification, then answer."""
    await ctx.info(message, logger_name="basic")
    return "logged"


@app.tool()
async def burst(count: int, ctx: Context) -> str:
    """Replace the ``extra_*`` tools with ``count`` new ones, announcing each change."""
    for name in [tool.name for tool in await app.list_tools() if tool.name.startswith("extra_")]:
        app.remove_tool(name)
    for index in range(count):

        def extra(index: int = index) -> str:
            return f"extra {index}"

        app.add_tool(extra, name=f"extra_{index}", description=f"extra tool {index}")
        await ctx.notify_tools_changed()
        try:
            await ctx.request_context.session.send_tool_list_changed()
        except Exception:
            pass
    return f"{count} extra tools"


@app.tool()
def roots_echo(value: Annotated[str, Field(description="anything")] = "") -> str:
    """Return its argument (a second plain tool)."""
    return value


def _summary(region: str) -> Any:
    def summarise() -> str:
        return f"summary of {region}"

    return summarise


if options.long_names:
    for region in ("north", "south"):
        app.add_tool(
            _summary(region),
            name=f"summarise_the_quarterly_revenue_figures_for_every_region_{region}"[:60],
            description=f"Summarise {region}.",
        )


class Colour(BaseModel):
    colour: str = Field(description="a colour")


async def ask(ctx: Context) -> Any:
    """Ask the person for a colour and say what came back: with an elicitation request in the handshake era, with an
    input-required result in the 2026 era (which has no requests from server to client)."""
    answered = (ctx.input_responses or {}).get("colour")
    if isinstance(answered, ElicitResult):
        return f"{answered.action}: {(answered.content or {}).get('colour', '-')}"
    try:
        answer = await ctx.elicit("Which colour?", schema=Colour)
    except Exception:
        form = ElicitRequestFormParams(message="Which colour?", requested_schema=Colour.model_json_schema())
        return InputRequiredResult(input_requests={"colour": ElicitRequest(params=form)}, request_state="asked")
    return f"{answer.action}: {answer.data.colour if answer.data is not None else '-'}"


if options.ask_tool:
    app.add_tool(ask, name="ask")


@app.resource("memo://note", mime_type="text/plain")
def note() -> str:
    return "note body"


if options.stderr_bytes:
    chunk = "x" * 1023 + "\n"
    for _ in range(options.stderr_bytes // 1024):
        sys.stderr.write(chunk)
    sys.stderr.flush()
if options.delay_init_ms:
    time.sleep(options.delay_init_ms / 1000)
if options.http_port:
    app.run("streamable-http", host="127.0.0.1", port=options.http_port)
else:
    app.run("stdio")
