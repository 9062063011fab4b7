"""Entry point for the MCP conformance suite's client mode: drives Kairox's McpClient.

The suite runs ``python conformance_client.py <server-url>`` with ``MCP_CONFORMANCE_SCENARIO`` set; this
connects over Streamable HTTP, lists the tools, calls each one with arguments made from its schema, and exits
0 when every step worked. Elicitation requests are accepted with the schema's defaults.
"""

import os
import sys
import tempfile
from pathlib import Path
from typing import Any

import anyio

from kairox.config import McpServerConfig
from kairox.mcp import ClientFeatures, ElicitationAnswer, ElicitationRequest, McpClient, ServerStatus


def sample_value(schema: dict[str, Any]) -> Any:
    if "default" in schema:
        return schema["default"]
    if "enum" in schema:
        return schema["enum"][0]
    kind = schema.get("type")
    if kind in ("number", "integer"):
        return 1
    if kind == "boolean":
        return True
    if kind == "array":
        return []
    if kind == "object":
        return {}
    return "conformance"


def sample_arguments(schema: dict[str, Any]) -> dict[str, Any]:
    properties = schema.get("properties") or {}
    required = set(schema.get("required") or [])
    return {name: sample_value(prop) for name, prop in properties.items() if name in required or "default" in prop}


async def accept_with_defaults(request: ElicitationRequest) -> ElicitationAnswer:
    return ElicitationAnswer(action="accept", content={})


async def main(url: str) -> int:
    scenario = os.environ.get("MCP_CONFORMANCE_SCENARIO", "")
    config = McpServerConfig(type="streamable_http", url=url, startup_timeout_sec=20, tool_timeout_sec=20)
    workspace = Path(tempfile.gettempdir())
    features = ClientFeatures(roots=(workspace,), elicitation=accept_with_defaults)
    async with McpClient("conformance", config, workspace=workspace, features=features) as client:
        if client.status != ServerStatus.READY:
            sys.stderr.write(f"{scenario}: not ready: {client.lifecycle.reason}\n")
            return 1
        failures = 0
        for tool in client.tools:
            result = await client.call_tool(tool.name, sample_arguments(tool.input_schema))
            sys.stdout.write(f"{tool.name}: {'error' if result.is_error else 'ok'}: {result.text_content()[:200]}\n")
            failures += result.is_error
        return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(anyio.run(main, sys.argv[-1]))
