"""The server fixtures of the MCP conformance suite (``@modelcontextprotocol/conformance`` in server mode), written
with the official Python SDK's low-level server: the ``test_*`` tools, the ``test://`` resources and the prompts the
suite calls, in both eras (the ``initialize`` handshake of 2025 and the per-request ``_meta`` of 2026-07-28).

A tool that needs the client (sampling, elicitation, roots) asks over the request's back-channel in the handshake
era and answers with an ``input_required`` result in the 2026 era, as each era's scenarios expect.

Usage: ``conformance_fixture_server.py`` (stdio) or ``conformance_fixture_server.py --http PORT`` (Streamable HTTP
on 127.0.0.1; ``0`` picks a free port, and ``serving on http://127.0.0.1:PORT/mcp`` is written to stderr).
"""

import argparse
import base64
import json
import sys
import warnings
from typing import Any

import anyio
import mcp_types as types
from mcp.server.caching import CacheHint
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel import NotificationOptions, Server
from mcp.server.request_state import RequestStateBoundary, RequestStateSecurity
from mcp.server.subscriptions import (
    InMemorySubscriptionBus,
    ListenHandler,
    PromptsListChanged,
    ResourceUpdated,
    ToolsListChanged,
)
from mcp.shared.exceptions import MCPError
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

PNG = base64.b64encode(
    bytes.fromhex(
        "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
        "1f15c4890000000d49444154789c6360000002000154a24f5d0000000049454e44ae426082"
    )
).decode()
WAV = base64.b64encode(
    b"RIFF$\x00\x00\x00WAVEfmt \x10\x00\x00\x00\x01\x00\x01\x00D\xac\x00\x00"
    b"\x88X\x01\x00\x02\x00\x10\x00data\x00\x00\x00\x00"
).decode()
NO_ARGS: dict[str, Any] = {"type": "object", "properties": {}}
SCHEMA_2020_12: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "$defs": {
        "address": {
            "$anchor": "addressDef",
            "type": "object",
            "properties": {"street": {"type": "string"}, "city": {"type": "string"}},
        }
    },
    "properties": {
        "name": {"type": "string"},
        "address": {"$ref": "#/$defs/address"},
        "contactMethod": {"type": "string", "enum": ["phone", "email"]},
        "phone": {"type": "string"},
        "email": {"type": "string"},
    },
    "allOf": [{"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}],
    "if": {"properties": {"contactMethod": {"const": "phone"}}, "required": ["contactMethod"]},
    "then": {"required": ["phone"]},
    "else": {"required": ["email"]},
    "additionalProperties": False,
}


def _text(text: str, *, error: bool = False) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(text=text)], is_error=error)


def _string_schema(*names: str) -> dict[str, Any]:
    return {"type": "object", "properties": {n: {"type": "string"} for n in names}, "required": list(names)}


def _elicit(message: str, schema: dict[str, Any]) -> types.ElicitRequest:
    return types.ElicitRequest(params=types.ElicitRequestFormParams(message=message, requested_schema=schema))  # type: ignore[arg-type]


def _sample(text: str, max_tokens: int) -> types.CreateMessageRequest:
    message = types.SamplingMessage(role="user", content=types.TextContent(text=text))
    params = types.CreateMessageRequestParams(messages=[message], max_tokens=max_tokens)
    return types.CreateMessageRequest(params=params)


SEP1034 = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "default": "John Doe"},
        "age": {"type": "integer", "default": 30},
        "score": {"type": "number", "default": 95.5},
        "status": {"type": "string", "enum": ["active", "inactive", "pending"], "default": "active"},
        "verified": {"type": "boolean", "default": True},
    },
}
SEP1330 = {
    "type": "object",
    "properties": {
        "untitledSingle": {"type": "string", "enum": ["option1", "option2", "option3"]},
        "titledSingle": {
            "type": "string",
            "oneOf": [
                {"const": "value1", "title": "First Option"},
                {"const": "value2", "title": "Second Option"},
                {"const": "value3", "title": "Third Option"},
            ],
        },
        "legacyEnum": {
            "type": "string",
            "enum": ["opt1", "opt2", "opt3"],
            "enumNames": ["Option One", "Option Two", "Option Three"],
        },
        "untitledMulti": {"type": "array", "items": {"type": "string", "enum": ["option1", "option2", "option3"]}},
        "titledMulti": {
            "type": "array",
            "items": {
                "anyOf": [
                    {"const": "value1", "title": "First Choice"},
                    {"const": "value2", "title": "Second Choice"},
                    {"const": "value3", "title": "Third Choice"},
                ]
            },
        },
    },
}

# tools whose one round asks the client: the 2026 era's input requests, each under its key
ASKING: dict[str, dict[str, types.InputRequest]] = {
    "test_input_required_result_elicitation": {
        "user_name": _elicit("What is your name?", _string_schema("name")),
    },
    "test_input_required_result_sampling": {"capital_question": _sample("What is the capital of France?", 100)},
    "test_input_required_result_list_roots": {"client_roots": types.ListRootsRequest(params=None)},
    "test_input_required_result_request_state": {
        "confirm": _elicit(
            "Please confirm",
            {"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]},
        )
    },
    "test_input_required_result_multiple_inputs": {
        "user_name": _elicit("What is your name?", _string_schema("name")),
        "greeting": _sample("Generate a greeting", 50),
        "client_roots": types.ListRootsRequest(params=None),
    },
    "test_input_required_result_tampered_state": {
        "confirm": _elicit(
            "Please confirm",
            {"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]},
        )
    },
}
STATEFUL = {
    "test_input_required_result_request_state",
    "test_input_required_result_multiple_inputs",
    "test_input_required_result_tampered_state",
}
MULTI_ROUND = [
    ("step1", _elicit("Step 1: What is your name?", _string_schema("name"))),
    ("step2", _elicit("Step 2: What is your favorite color?", _string_schema("color"))),
]


class Fixture:
    def __init__(self) -> None:
        self.changes = InMemorySubscriptionBus()
        self.extra_tools: list[str] = []
        self.extra_prompts: list[str] = []
        self.subscriptions: set[str] = set()
        self.sessions: list[Any] = []
        """Handshake-era sessions, told of list changes on their standalone stream."""
        with warnings.catch_warnings():  # logging is deprecated in the 2026 revision and still served before it
            warnings.simplefilter("ignore")
            self.server = _Server(
                "conformance-fixture",
                version="1.0.0",
                instructions="The MCP conformance suite's server fixtures.",
                cache_hints={
                    method: CacheHint(ttl_ms=0, scope="private")
                    for method in (
                        "tools/list",
                        "prompts/list",
                        "resources/list",
                        "resources/templates/list",
                        "resources/read",
                    )
                },
                on_list_tools=self.list_tools,
                on_call_tool=self.call_tool,
                on_list_resources=self.list_resources,
                on_list_resource_templates=self.list_templates,
                on_read_resource=self.read_resource,
                on_subscribe_resource=self.subscribe,
                on_unsubscribe_resource=self.unsubscribe,
                on_list_prompts=self.list_prompts,
                on_get_prompt=self.get_prompt,
                on_completion=self.complete,
                on_set_logging_level=self.set_level,
                on_subscriptions_listen=ListenHandler(self.changes),
            )
        self.server.middleware.append(
            RequestStateBoundary(RequestStateSecurity.ephemeral(), default_audience="conformance-fixture")
        )

    def _seen(self, ctx: ServerRequestContext[Any, Any]) -> bool:
        """Whether this request speaks the 2026 era; a handshake-era session is kept for list changes."""
        if ctx.protocol_version in MODERN_PROTOCOL_VERSIONS:
            return True
        if ctx.session not in self.sessions:
            self.sessions.append(ctx.session)
        return False

    # --- tools -----------------------------------------------------------------------------------------------

    async def list_tools(
        self, ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        self._seen(ctx)
        simple = [
            ("test_simple_text", "Returns simple text content"),
            ("test_image_content", "Returns image content"),
            ("test_audio_content", "Returns audio content"),
            ("test_embedded_resource", "Returns an embedded resource"),
            ("test_multiple_content_types", "Returns text, image and resource content"),
            ("test_tool_with_logging", "Sends three log messages while it runs"),
            ("test_tool_with_progress", "Reports progress while it runs"),
            ("test_error_handling", "Always fails with a tool error"),
            ("test_elicitation_sep1034_defaults", "Asks for values with defaults of every primitive type"),
            ("test_elicitation_sep1330_enums", "Asks for values of every enum variant"),
            ("test_reconnection", "Closes its SSE stream before it answers"),
            ("test_missing_capability", "Needs the client's sampling capability"),
            ("test_logging_tool", "Logs one message at each of three levels"),
            ("test_streaming_elicitation", "Asks the client's user while it runs"),
            ("test_trigger_tool_change", "Adds a tool and announces the change"),
            ("test_trigger_prompt_change", "Adds a prompt and announces the change"),
            ("test_input_required_result_multi_round", "Asks the client twice"),
            ("test_input_required_result_capabilities", "Asks only for what the client declared"),
            *((name, f"Asks the client ({', '.join(ASKING[name])})") for name in ASKING),
            *((name, "Added at run time") for name in self.extra_tools),
        ]
        tools = [types.Tool(name=name, description=description, input_schema=NO_ARGS) for name, description in simple]
        tools += [
            types.Tool(
                name="test_sampling",
                description="Asks the client's model",
                input_schema=_string_schema("prompt"),
            ),
            types.Tool(
                name="test_elicitation",
                description="Asks the client's user",
                input_schema=_string_schema("message"),
            ),
            types.Tool(
                name="test_custom_headers",
                description="Echoes a region mirrored into the Mcp-Param-Region header",
                input_schema={
                    "type": "object",
                    "properties": {"region": {"type": "string", "x-mcp-header": "Region"}},
                    "required": ["region"],
                },
            ),
            types.Tool(
                name="json_schema_2020_12_tool",
                description="Tool with JSON Schema 2020-12 features",
                input_schema=SCHEMA_2020_12,
            ),
        ]
        return types.ListToolsResult(tools=tools)

    async def call_tool(
        self, ctx: ServerRequestContext[Any, Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult | types.InputRequiredResult:
        modern = self._seen(ctx)
        name, arguments = params.name, dict(params.arguments or {})
        if name == "test_simple_text":
            return _text("This is a simple text response for testing.")
        if name == "test_image_content":
            return types.CallToolResult(content=[types.ImageContent(data=PNG, mime_type="image/png")])
        if name == "test_audio_content":
            return types.CallToolResult(content=[types.AudioContent(data=WAV, mime_type="audio/wav")])
        if name == "test_embedded_resource":
            embedded = _embedded("test://embedded-resource", "This is an embedded resource content.")
            return types.CallToolResult(content=[embedded])
        if name == "test_multiple_content_types":
            resource = types.TextResourceContents(
                uri="test://mixed-content-resource",
                mime_type="application/json",
                text=json.dumps({"test": "data", "value": 123}),
            )
            return types.CallToolResult(
                content=[
                    types.TextContent(text="Multiple content types test:"),
                    types.ImageContent(data=PNG, mime_type="image/png"),
                    types.EmbeddedResource(resource=resource),
                ]
            )
        if name == "test_error_handling":
            return _text("This tool intentionally returns an error for testing", error=True)
        if name == "test_tool_with_logging":
            for index, message in enumerate(
                ("Tool execution started", "Tool processing data", "Tool execution completed")
            ):
                if index:
                    await anyio.sleep(0.05)
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    await ctx.session.send_log_message("info", message, "fixture", related_request_id=ctx.request_id)
            return _text("Tool with logging executed successfully")
        if name == "test_logging_tool":
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                for level in ("debug", "info", "warning"):
                    await ctx.session.send_log_message(level, f"a {level} message", "conformance")  # type: ignore[arg-type]
            return _text("Logged at debug, info and warning")
        if name == "test_custom_headers":
            return _text(f"Region: {arguments.get('region')}")
        if name == "test_tool_with_progress":
            token = (ctx.meta or {}).get("progress_token") if ctx.meta else None
            for index, progress in enumerate((0, 50, 100)):
                if index:
                    await anyio.sleep(0.05)
                if token is not None:
                    await ctx.session.send_progress_notification(
                        token, progress, 100, f"step {index + 1}", related_request_id=str(ctx.request_id)
                    )
            return _text("Tool with progress executed successfully")
        if name == "test_reconnection":
            if ctx.close_sse_stream is not None:
                await anyio.sleep(0.1)
                await ctx.close_sse_stream()
            await anyio.sleep(0.2)
            return _text("Reconnection test completed")
        if name == "test_missing_capability":
            caps = ctx.session.client_capabilities
            if caps is None or caps.sampling is None:
                raise MCPError(
                    -32021,
                    "test_missing_capability needs the client's sampling capability",
                    {"requiredCapabilities": {"sampling": {}}},
                )
            return _text("The client declared sampling")
        if name in ("test_trigger_tool_change", "test_trigger_prompt_change"):
            return await self._change(ctx, tool=name == "test_trigger_tool_change")
        if name == "json_schema_2020_12_tool":
            return _text(f"Received: {json.dumps(arguments, sort_keys=True)}")
        if name in ("test_sampling", "test_elicitation", "test_streaming_elicitation") or name.startswith(
            "test_elicitation_sep"
        ):
            return await self._ask(ctx, params, modern)
        if name in ASKING:
            return self._rounds(name, params, ASKING[name], stateful=name in STATEFUL)
        if name == "test_input_required_result_multi_round":
            return self._multi_round(params)
        if name == "test_input_required_result_capabilities":
            caps = ctx.session.client_capabilities or types.ClientCapabilities()
            wanted: dict[str, types.InputRequest] = {}
            if caps.sampling is not None:
                wanted["capital_question"] = _sample("What is the capital of France?", 100)
            if caps.elicitation is not None:
                wanted["user_name"] = _elicit("What is your name?", _string_schema("name"))
            if wanted and not set(wanted) <= set(params.input_responses or {}):
                return types.InputRequiredResult(input_requests=wanted)
            return _text("Asked only for what the client declared")
        raise MCPError(types.INVALID_PARAMS, f"Unknown tool: {name}")

    async def _ask(
        self, ctx: ServerRequestContext[Any, Any], params: types.CallToolRequestParams, modern: bool
    ) -> types.CallToolResult | types.InputRequiredResult:
        """The handshake era's sampling and elicitation tools; in the 2026 era the same asks as input requests."""
        arguments = dict(params.arguments or {})
        name = params.name
        request: types.InputRequest
        if name == "test_sampling":
            request = _sample(str(arguments.get("prompt", "")), 100)
        elif name in ("test_elicitation", "test_streaming_elicitation"):
            request = _elicit(
                str(arguments.get("message", "Who are you?")),
                {
                    "type": "object",
                    "properties": {
                        "username": {"type": "string", "description": "User's response"},
                        "email": {"type": "string", "description": "User's email address"},
                    },
                    "required": ["username", "email"],
                },
            )
        else:
            schema = SEP1034 if name == "test_elicitation_sep1034_defaults" else SEP1330
            request = _elicit("Please review and update the form fields", schema)
        if modern:
            answer = (params.input_responses or {}).get("answer")
            if answer is None:
                return types.InputRequiredResult(input_requests={"answer": request})
        else:
            result_type: Any = types.CreateMessageResult if name == "test_sampling" else types.ElicitResult
            answer = await ctx.session.send_request(
                request,  # type: ignore[arg-type]
                result_type,
                metadata=_related(ctx),
            )
        if isinstance(answer, types.CreateMessageResult):
            content = answer.content
            said = content.text if isinstance(content, types.TextContent) else str(content)
            return _text(f"LLM response: {said}")
        if isinstance(answer, types.ElicitResult):
            if name == "test_elicitation":
                return _text(f"User response: action={answer.action}, content={json.dumps(answer.content)}")
            return _text(f"Elicitation completed: action={answer.action}, content={json.dumps(answer.content)}")
        return _text(f"Answered: {answer}")

    def _rounds(
        self,
        name: str,
        params: types.CallToolRequestParams,
        asks: dict[str, types.InputRequest],
        *,
        stateful: bool,
    ) -> types.CallToolResult | types.InputRequiredResult:
        responses = params.input_responses or {}
        state = json.dumps({"tool": name, "round": 1}) if stateful else None
        if not set(asks) <= set(responses) or (stateful and params.request_state != state):
            return types.InputRequiredResult(input_requests=asks, request_state=state)
        said = {key: responses[key].model_dump(by_alias=True, mode="json", exclude_none=True) for key in asks}
        if name == "test_input_required_result_elicitation":
            answer = responses["user_name"]
            who = answer.content.get("name") if isinstance(answer, types.ElicitResult) and answer.content else None
            return _text(f"Hello, {who}!")
        if name == "test_input_required_result_list_roots":
            roots = responses["client_roots"]
            uris = [str(r.uri) for r in roots.roots] if isinstance(roots, types.ListRootsResult) else []
            return _text(f"Roots: {', '.join(uris)}")
        if stateful:
            return _text(f"state-ok: {json.dumps(said, sort_keys=True)}")
        return _text(json.dumps(said, sort_keys=True))

    def _multi_round(self, params: types.CallToolRequestParams) -> types.CallToolResult | types.InputRequiredResult:
        responses = params.input_responses or {}
        done = 0
        if params.request_state:
            try:
                done = int(json.loads(params.request_state).get("answered", 0))
            except (ValueError, AttributeError):
                raise MCPError(types.INVALID_PARAMS, "requestState is not this tool's") from None
        for index, (key, _) in enumerate(MULTI_ROUND):
            if index == done and key in responses:
                done += 1
        if done < len(MULTI_ROUND):
            key, ask = MULTI_ROUND[done]
            return types.InputRequiredResult(input_requests={key: ask}, request_state=json.dumps({"answered": done}))
        return _text("Both steps answered: multi-round complete")

    async def _change(self, ctx: ServerRequestContext[Any, Any], *, tool: bool) -> types.CallToolResult:
        if tool:
            self.extra_tools.append(f"test_dynamic_tool_{len(self.extra_tools) + 1}")
            await self.changes.publish(ToolsListChanged())
        else:
            self.extra_prompts.append(f"test_dynamic_prompt_{len(self.extra_prompts) + 1}")
            await self.changes.publish(PromptsListChanged())
        for session in list(self.sessions):
            try:
                with anyio.fail_after(2):
                    if tool:
                        await session.send_tool_list_changed()
                    else:
                        await session.send_prompt_list_changed()
            except Exception:  # a session gone away hears of nothing
                self.sessions.remove(session)
        return _text("tool list changed" if tool else "prompt list changed")

    # --- resources -------------------------------------------------------------------------------------------

    async def list_resources(
        self, ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
    ) -> types.ListResourcesResult:
        self._seen(ctx)
        return types.ListResourcesResult(
            resources=[
                types.Resource(
                    uri="test://static-text",
                    name="static-text",
                    description="A static text resource",
                    mime_type="text/plain",
                ),
                types.Resource(
                    uri="test://static-binary",
                    name="static-binary",
                    description="A static binary resource (a PNG image)",
                    mime_type="image/png",
                ),
                types.Resource(
                    uri="test://watched-resource",
                    name="watched-resource",
                    description="A resource that changes while subscribed",
                    mime_type="text/plain",
                ),
            ]
        )

    async def list_templates(
        self, ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
    ) -> types.ListResourceTemplatesResult:
        self._seen(ctx)
        return types.ListResourceTemplatesResult(
            resource_templates=[
                types.ResourceTemplate(
                    uri_template="test://template/{id}/data",
                    name="template-data",
                    description="Data by id",
                    mime_type="application/json",
                )
            ]
        )

    async def read_resource(
        self, ctx: ServerRequestContext[Any, Any], params: types.ReadResourceRequestParams
    ) -> types.ReadResourceResult:
        self._seen(ctx)
        uri = str(params.uri)
        contents: types.TextResourceContents | types.BlobResourceContents
        if uri == "test://static-text":
            contents = types.TextResourceContents(
                uri=uri, mime_type="text/plain", text="This is the content of the static text resource."
            )
        elif uri == "test://static-binary":
            contents = types.BlobResourceContents(uri=uri, mime_type="image/png", blob=PNG)
        elif uri == "test://watched-resource":
            contents = types.TextResourceContents(uri=uri, mime_type="text/plain", text="Watched resource content")
        elif uri.startswith("test://template/") and uri.endswith("/data"):
            item = uri[len("test://template/") : -len("/data")]
            text = json.dumps({"id": item, "templateTest": True, "data": f"Data for ID: {item}"})
            contents = types.TextResourceContents(uri=uri, mime_type="application/json", text=text)
        else:
            raise MCPError(types.INVALID_PARAMS, "Resource not found", {"uri": uri})
        return types.ReadResourceResult(contents=[contents])

    async def subscribe(
        self, ctx: ServerRequestContext[Any, Any], params: types.SubscribeRequestParams
    ) -> types.EmptyResult:
        self._seen(ctx)
        self.subscriptions.add(str(params.uri))
        return types.EmptyResult()

    async def unsubscribe(
        self, ctx: ServerRequestContext[Any, Any], params: types.UnsubscribeRequestParams
    ) -> types.EmptyResult:
        self.subscriptions.discard(str(params.uri))
        return types.EmptyResult()

    async def touch_watched(self) -> None:
        """Change ``test://watched-resource`` every few seconds and tell whoever subscribed."""
        while True:
            await anyio.sleep(3)
            await self.changes.publish(ResourceUpdated(uri="test://watched-resource"))
            if "test://watched-resource" not in self.subscriptions:
                continue
            for session in list(self.sessions):
                try:
                    with anyio.fail_after(2):
                        await session.send_resource_updated("test://watched-resource")
                except Exception:
                    self.sessions.remove(session)

    # --- prompts, completion, logging ------------------------------------------------------------------------

    async def list_prompts(
        self, ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
    ) -> types.ListPromptsResult:
        self._seen(ctx)
        required = [("arg1", "First test argument"), ("arg2", "Second test argument")]
        return types.ListPromptsResult(
            prompts=[
                types.Prompt(name="test_simple_prompt", description="A simple prompt without arguments"),
                types.Prompt(
                    name="test_prompt_with_arguments",
                    description="A prompt with two arguments",
                    arguments=[types.PromptArgument(name=n, description=d, required=True) for n, d in required],
                ),
                types.Prompt(
                    name="test_prompt_with_embedded_resource",
                    description="A prompt that embeds a resource",
                    arguments=[
                        types.PromptArgument(name="resourceUri", description="URI of the resource", required=True)
                    ],
                ),
                types.Prompt(name="test_prompt_with_image", description="A prompt with an image"),
                types.Prompt(name="test_input_required_result_prompt", description="A prompt that asks the client"),
                *(types.Prompt(name=name, description="Added at run time") for name in self.extra_prompts),
            ]
        )

    async def get_prompt(
        self, ctx: ServerRequestContext[Any, Any], params: types.GetPromptRequestParams
    ) -> types.GetPromptResult | types.InputRequiredResult:
        self._seen(ctx)
        args = params.arguments or {}

        def said(*content: types.ContentBlock) -> types.GetPromptResult:
            return types.GetPromptResult(messages=[types.PromptMessage(role="user", content=c) for c in content])

        if params.name == "test_simple_prompt":
            return said(types.TextContent(text="This is a simple prompt for testing."))
        if params.name == "test_prompt_with_arguments":
            return said(
                types.TextContent(text=f"Prompt with arguments: arg1='{args.get('arg1')}', arg2='{args.get('arg2')}'")
            )
        if params.name == "test_prompt_with_embedded_resource":
            return said(
                _embedded(args.get("resourceUri", "test://example-resource"), "Embedded resource content for testing."),
                types.TextContent(text="Please process the embedded resource above."),
            )
        if params.name == "test_prompt_with_image":
            return said(
                types.ImageContent(data=PNG, mime_type="image/png"),
                types.TextContent(text="Please analyze the image above."),
            )
        if params.name == "test_input_required_result_prompt":
            answer = (params.input_responses or {}).get("user_context")
            if not isinstance(answer, types.ElicitResult):
                ask = _elicit("What context should the prompt use?", _string_schema("context"))
                return types.InputRequiredResult(input_requests={"user_context": ask})
            context = (answer.content or {}).get("context")
            return said(types.TextContent(text=f"Use this context: {context}"))
        if params.name in self.extra_prompts:
            return said(types.TextContent(text=f"{params.name} was added at run time."))
        raise MCPError(types.INVALID_PARAMS, f"Unknown prompt: {params.name}")

    async def complete(
        self, ctx: ServerRequestContext[Any, Any], params: types.CompleteRequestParams
    ) -> types.CompleteResult:
        options = ["paris", "park", "party", "test-value"]
        values = [v for v in options if v.startswith(params.argument.value)]
        return types.CompleteResult(completion=types.Completion(values=values, total=len(values), has_more=False))

    async def set_level(
        self, ctx: ServerRequestContext[Any, Any], params: types.SetLevelRequestParams
    ) -> types.EmptyResult:
        self._seen(ctx)
        return types.EmptyResult()


class _Server(Server[Any]):
    def create_initialization_options(self, *args: Any, **kwargs: Any) -> Any:
        # the HTTP manager asks without options: list changes are always announced
        return super().create_initialization_options(
            NotificationOptions(prompts_changed=True, resources_changed=True, tools_changed=True)
        )


def _embedded(uri: str, text: str) -> types.EmbeddedResource:
    return types.EmbeddedResource(resource=types.TextResourceContents(uri=uri, mime_type="text/plain", text=text))


def _related(ctx: ServerRequestContext[Any, Any]) -> Any:
    from mcp.shared.message import ServerMessageMetadata

    return ServerMessageMetadata(related_request_id=ctx.request_id)


async def serve_stdio(fixture: Fixture) -> None:
    from mcp.server.stdio import stdio_server

    async with anyio.create_task_group() as tasks:
        tasks.start_soon(fixture.touch_watched)
        async with stdio_server() as (read, write):
            await fixture.server.run(read, write, fixture.server.create_initialization_options())
        tasks.cancel_scope.cancel()


async def serve_http(fixture: Fixture, port: int) -> None:
    import uvicorn
    from mcp.server.transport_security import TransportSecuritySettings

    security = TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=["127.0.0.1:*", "localhost:*", "[::1]:*"],
        allowed_origins=["http://127.0.0.1:*", "http://localhost:*", "http://[::1]:*"],
    )
    app = fixture.server.streamable_http_app(streamable_http_path="/mcp", transport_security=security, host="127.0.0.1")
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", lifespan="on"))
    async with anyio.create_task_group() as tasks:
        tasks.start_soon(fixture.touch_watched)

        async def announce() -> None:
            while not server.started:
                await anyio.sleep(0.02)
            bound = server.servers[0].sockets[0].getsockname()[1]
            sys.stderr.write(f"serving on http://127.0.0.1:{bound}/mcp\n")
            sys.stderr.flush()

        tasks.start_soon(announce)
        await server.serve()
        tasks.cancel_scope.cancel()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--http", type=int, default=None, metavar="PORT", help="serve Streamable HTTP on 127.0.0.1")
    options = parser.parse_args()
    fixture = Fixture()
    if options.http is None:
        anyio.run(serve_stdio, fixture)
    else:
        anyio.run(serve_http, fixture, options.http)


if __name__ == "__main__":
    main()
