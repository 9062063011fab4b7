"""Entry point for the MCP conformance suite's client mode: drives Kairox's McpClient through the gate.

The suite runs ``python conformance_client.py <server-url>`` with ``MCP_CONFORMANCE_SCENARIO`` set (and, for some
scenarios, ``MCP_CONFORMANCE_CONTEXT``); this connects over Streamable HTTP, puts the server's tools in a
``ToolRegistry`` as every session does, and calls each one through the gate: with the arguments the scenario names
when it names them, else with arguments made to fit the tool's schema. A tool whose one required argument is a
``schema`` object is given the input schema of the server's other tool as the registry holds it (the suite checks
that a JSON Schema 2020-12 comes back untouched). Calls go in as a model's would (``call_from_model``: a strict-mode
model's nulls for optional arguments are dropped). Elicitation requests are accepted with the schema's defaults.
Exits 0 when every step worked.
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

from kairox.config import McpServerConfig, PolicyConfig
from kairox.mcp import ClientFeatures, McpClient, McpToolAdapter
from kairox.mcp._features import ElicitationAnswer, ElicitationRequest, OAuthLogin
from kairox.mcp._oauth import FileTokenStorage, token_path
from kairox.policy import NonInteractiveApprover, PolicySettings, Rule
from kairox.registry import ModelProvider, ToolRegistry, build_registry
from kairox.registry._registry import RegistrySettings
from kairox.runtime._mcp_skills import mcp_skills
from kairox.sandbox import SandboxSettings
from kairox.skills import SkillRegistry, SkillToolProvider

REDIRECT_URI = "http://127.0.0.1:9/callback"
CLIENT_METADATA_URL = "https://conformance-test.local/client-metadata.json"
"""The client ID metadata document the suite's authorization servers expect (none is fetched)."""
NAME = "conformance"


async def follow_authorization(authorization_url: str) -> dict[str, str]:
    """The suite's authorization server approves at once: read the code from its redirect, as a browser would."""
    async with httpx.AsyncClient(follow_redirects=False, timeout=10) as http:
        response = await http.get(authorization_url)
    location = response.headers.get("location", "")
    return {key: values[0] for key, values in parse_qs(urlsplit(location).query).items()}


async def preregister(home: Path, context: dict[str, Any]) -> None:
    """Scenarios with a pre-registered client pass its credentials in MCP_CONFORMANCE_CONTEXT."""
    from mcp.shared.auth import OAuthClientInformationFull

    if "client_id" in context and "client_secret" in context:
        info = OAuthClientInformationFull(
            client_id=context["client_id"],
            client_secret=context["client_secret"],
            redirect_uris=[REDIRECT_URI],  # type: ignore[list-item]
            token_endpoint_auth_method="client_secret_basic",
        )
        await FileTokenStorage(token_path(home, NAME)).set_client_info(info)


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
    """Arguments that fit ``schema``: its required properties and those with defaults, then each property a
    validator still finds missing (``allOf``, ``anyOf``, ``if``/``then`` may require more)."""
    from jsonschema.validators import validator_for

    properties = schema.get("properties") or {}
    required = set(schema.get("required") or [])
    arguments = {name: sample_value(prop) for name, prop in properties.items() if name in required or "default" in prop}
    validator = validator_for(schema)(schema)
    for _ in range(len(properties)):
        errors = list(validator.iter_errors(arguments))
        missing = {
            name
            for error in errors
            for part in (error, *(error.context or ()))
            if part.validator == "required" and not part.path
            for name in part.validator_value
            if name in properties and name not in arguments
        }
        if not missing:
            break
        name = sorted(missing)[0]
        arguments[name] = sample_value(properties[name])
    return arguments


async def accept_with_defaults(request: ElicitationRequest) -> ElicitationAnswer:
    return ElicitationAnswer(action="accept", content={})


async def gate(home: Path, client: McpClient) -> ToolRegistry:
    """The registry as a session builds it, with the server's tools allowed by a rule."""
    rules = [Rule(action="allow", pattern=f"mcp__{NAME}__*"), Rule(action="allow", pattern=f"skill({NAME}:*)")]
    policy = PolicySettings.from_config(PolicyConfig(), workspace=client.workspace, rules=rules, home=home)
    sandbox = SandboxSettings(mode=policy.sandbox, writable_roots=policy.writable_roots)
    settings = RegistrySettings(policy=policy, sandbox=sandbox, spill_dir=home / "spill")
    registry = await build_registry(settings, approver=NonInteractiveApprover())
    await registry.add_provider(McpToolAdapter(client))
    return registry


def planned_calls(registry: ToolRegistry, context: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """(registry name, arguments) of every call to make, in order."""
    specs = {spec.meta["mcp_tool"]: spec for spec in registry.visible_tools() if "mcp_tool" in spec.meta}
    named = context.get("toolCalls")
    if isinstance(named, list):
        return [(specs[call["name"]].name, call.get("arguments") or {}) for call in named if call["name"] in specs]
    calls = []
    for tool, spec in specs.items():
        schema = spec.input_schema
        if schema.get("required") == ["schema"] and (schema.get("properties") or {}).get("schema", {}).get("type") == (
            "object"
        ):
            other = next((s for t, s in specs.items() if t != tool), None)
            calls.append((spec.name, {"schema": other.input_schema if other is not None else {}}))
        else:
            calls.append((spec.name, sample_arguments(schema)))
    return calls


def allow_a_busy_suite() -> None:
    """The suite starts every scenario's client and server at once; on two busy cores the SDK's first request, its
    ``server/discover`` probe, can take longer than its 10 s, and in the OAuth scenarios the whole authorization
    flow shares them (a person's login happens in ``kairox mcp login``, before any server starts)."""
    import mcp.client.session

    mcp.client.session.DISCOVER_TIMEOUT_SECONDS = 120.0


async def main(url: str) -> int:
    scenario = os.environ.get("MCP_CONFORMANCE_SCENARIO", "")
    context = json.loads(os.environ.get("MCP_CONFORMANCE_CONTEXT") or "{}")
    auth = scenario.startswith("auth/")
    machine = "client_id" in context and ("private_key_pem" in context or scenario.startswith("auth/client-cred"))
    environ = {
        **os.environ,
        "CLIENT_SECRET": context.get("client_secret", ""),
        "CLIENT_KEY": context.get("private_key_pem", ""),
    }
    config = McpServerConfig(
        type="streamable_http",
        url=url,
        # the suite starts every scenario's client at once: on a busy machine the imports alone take seconds
        startup_timeout_sec=100,
        tool_timeout_sec=60,
        oauth=auth,
        oauth_client_metadata_url=CLIENT_METADATA_URL if auth else None,
        oauth_grant="client_credentials" if machine else "authorization_code",
        oauth_client_id=context.get("client_id") if machine else None,
        oauth_client_secret_env="CLIENT_SECRET" if machine and "client_secret" in context else None,
        oauth_private_key_env="CLIENT_KEY" if machine and "private_key_pem" in context else None,
    )
    workspace = Path(tempfile.gettempdir())
    home = Path(tempfile.mkdtemp(prefix="kairox-conformance-"))
    login = OAuthLogin(redirect_uri=REDIRECT_URI, authorize=follow_authorization) if auth else None
    allow_a_busy_suite()
    if auth and not machine:
        await preregister(home, context)
    features = ClientFeatures(roots=(workspace,), elicitation=accept_with_defaults, oauth_login=login)
    async with McpClient(NAME, config, workspace=workspace, home=home, features=features, environ=environ) as client:
        if client.status != "ready":
            sys.stderr.write(f"{scenario}: not ready: {client.reason}\n")
            return 1
        # the test checks which session spoke to the suite's server: the SDK's, for every remote server
        sys.stdout.write(f"session: {client.session_kind} {client.protocol_version}\n")
        registry = await gate(home, client)
        failures = 0
        wire = registry.wire_names()
        for name, arguments in planned_calls(registry, context):
            result = await registry.call_from_model(ModelProvider.OPENAI, wire[name], arguments)
            sys.stdout.write(f"{name}: {'error' if result.is_error else 'ok'}: {result.text_content()[:200]}\n")
            failures += result.is_error
        # the server's skills (the skills extension) join the registry as a session's do; one is loaded, and so its
        # SKILL.md read and checked against its entry, only where the scenario is about loading one
        skills, fetch = mcp_skills({NAME: client}, home)
        skill_tool = SkillToolProvider(SkillRegistry(skills))
        skill_tool.fetch = fetch
        await registry.add_provider(skill_tool)
        for skill in skills if scenario.startswith("sep-2640-client-verify") else []:
            result = await registry.call_from_model(ModelProvider.OPENAI, "skill", {"name": skill.qualified_name})
            sys.stdout.write(
                f"{skill.qualified_name}: {'error' if result.is_error else 'ok'}: {result.text_content()}\n"
            )
        return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(anyio.run(main, sys.argv[-1]))
