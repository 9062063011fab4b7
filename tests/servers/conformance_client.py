"""Entry point for the MCP conformance suite's client mode: drives Kairox's McpClient.

The suite runs ``python conformance_client.py <server-url>`` with ``MCP_CONFORMANCE_SCENARIO`` set; this
connects over Streamable HTTP, lists the tools, calls each one with arguments made from its schema, and exits
0 when every step worked. Elicitation requests are accepted with the schema's defaults.
"""

import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import anyio
import httpx

from kairox.config import McpServerConfig
from kairox.mcp import (
    ClientFeatures,
    ElicitationAnswer,
    ElicitationRequest,
    McpClient,
    OAuthLogin,
    ServerStatus,
)
from kairox.mcp._oauth import FileTokenStorage, token_path

REDIRECT_URI = "http://127.0.0.1:9/callback"


async def follow_authorization(authorization_url: str) -> dict[str, str]:
    """The suite's authorization server approves at once: read the code from its redirect, as a browser would."""
    async with httpx.AsyncClient(follow_redirects=False, timeout=10) as http:
        response = await http.get(authorization_url)
    location = response.headers.get("location", "")
    return {key: values[0] for key, values in parse_qs(urlsplit(location).query).items()}


async def preregister(home: Path) -> None:
    """Scenarios with a pre-registered client pass its credentials in MCP_CONFORMANCE_CONTEXT."""
    from mcp.shared.auth import OAuthClientInformationFull

    context = json.loads(os.environ.get("MCP_CONFORMANCE_CONTEXT") or "{}")
    if "client_id" in context and "client_secret" in context:
        info = OAuthClientInformationFull(
            client_id=context["client_id"],
            client_secret=context["client_secret"],
            redirect_uris=[REDIRECT_URI],  # type: ignore[list-item]
            token_endpoint_auth_method="client_secret_basic",
        )
        await FileTokenStorage(token_path(home, "conformance")).set_client_info(info)


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
    auth = scenario.startswith("auth/")
    config = McpServerConfig(type="streamable_http", url=url, startup_timeout_sec=20, tool_timeout_sec=20, oauth=auth)
    workspace = Path(tempfile.gettempdir())
    home = Path(tempfile.mkdtemp(prefix="kairox-conformance-"))
    login = OAuthLogin(redirect_uri=REDIRECT_URI, authorize=follow_authorization) if auth else None
    if auth:
        await preregister(home)
    features = ClientFeatures(roots=(workspace,), elicitation=accept_with_defaults, oauth_login=login)
    async with McpClient("conformance", config, workspace=workspace, home=home, features=features) as client:
        if client.status != ServerStatus.READY:
            sys.stderr.write(f"{scenario}: not ready: {client.reason}\n")
            return 1
        # the test checks which session spoke to the suite's server: Kairox's own for the handshake era
        sys.stdout.write(f"session: {client.session_kind} {client.protocol_version}\n")
        failures = 0
        for tool in client.tools:
            result = await client.call_tool(tool.name, sample_arguments(tool.input_schema))
            sys.stdout.write(f"{tool.name}: {'error' if result.is_error else 'ok'}: {result.text_content()[:200]}\n")
            failures += result.is_error
        return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(anyio.run(main, sys.argv[-1]))
