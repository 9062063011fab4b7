"""The registry as a pydantic-ai toolset: ``KairoxToolset`` lists the tools the model may see and calls each one
through Kairox's gate.

    agent = Agent(model, toolsets=[KairoxToolset(context.registry, instructions=context.prompt_context)])

Arguments are checked by the gate (against the tool's own schema, with a message the model can act on), so the
toolset's validator only requires a JSON object. A refusal is the tool's result, as in Kairox's own sessions,
not a ``ModelRetry``: the model reads why and adapts. A result's images go along as ``BinaryContent``. An
``ask`` goes to the Kairox approver (the registry's, or ``approver`` for this toolset's calls alone).
"""

import base64
import binascii
from typing import Any

import pydantic_core
from pydantic_ai import BinaryContent, RunContext
from pydantic_ai.tools import ToolDefinition
from pydantic_ai.toolsets import AbstractToolset, ToolsetTool

from kairox.integrations._results import result_images, result_text
from kairox.policy import Approver
from kairox.registry import ModelProvider, ToolRegistry

_ANY_OBJECT = pydantic_core.SchemaValidator(
    pydantic_core.core_schema.dict_schema(
        pydantic_core.core_schema.str_schema(), pydantic_core.core_schema.any_schema()
    )
)


class KairoxToolset(AbstractToolset[Any]):
    """Kairox's tools for a pydantic-ai agent, each call through the gate (hooks, policy, approval, events)."""

    def __init__(
        self,
        registry: ToolRegistry,
        *,
        instructions: str | None = None,
        approver: Approver | None = None,
        id: str | None = "kairox",
        max_retries: int = 1,
    ) -> None:
        self.registry = registry
        self.instructions = instructions
        """Given to the model with the tools (``ExtensionContext.prompt_context`` is made for it)."""
        self.max_retries = max_retries
        self._id = id
        self._approvals = None if approver is None else registry.session_approvals(approver)

    @property
    def id(self) -> str | None:
        return self._id

    async def get_instructions(self, ctx: RunContext[Any]) -> str | None:
        return self.instructions

    async def get_tools(self, ctx: RunContext[Any]) -> dict[str, ToolsetTool[Any]]:
        # Anthropic's dialect is the tool's own schema with an object root: pydantic-ai adapts it per model itself
        definitions, _ = self.registry.definitions(ModelProvider.ANTHROPIC)
        return {
            d["name"]: ToolsetTool(
                toolset=self,
                tool_def=ToolDefinition(
                    name=d["name"], description=d.get("description"), parameters_json_schema=d["input_schema"]
                ),
                max_retries=self.max_retries,
                args_validator=_ANY_OBJECT,
            )
            for d in definitions
        }

    async def call_tool(
        self, name: str, tool_args: dict[str, Any], ctx: RunContext[Any], tool: ToolsetTool[Any]
    ) -> str | list[str | BinaryContent]:
        result = await self.registry.call_from_model(
            ModelProvider.ANTHROPIC, name, tool_args, call_id=ctx.tool_call_id or "", approvals=self._approvals
        )
        images = []
        for image in result_images(result):
            try:
                images.append(
                    BinaryContent(data=base64.b64decode(image.data, validate=True), media_type=image.mime_type)
                )
            except (binascii.Error, ValueError):
                continue  # not base64: the text names the image, which is all the model can be given
        return [result_text(result), *images] if images else result_text(result)
