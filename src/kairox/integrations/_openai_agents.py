"""The registry as OpenAI Agents SDK tools: one ``FunctionTool`` per tool the model may see, whose invocation is
a call through Kairox's gate.

    agent = Agent(name="coder", instructions=context.prompt_context, tools=agents_tools(context.registry))

The definitions are Kairox's OpenAI ones (strict where the schema allows it), under their wire names; the gate
maps a wire name back and drops the nulls strict mode makes a model send for optional arguments. An ``ask`` goes
to the Kairox approver (the context's, or ``approver`` for this agent's calls alone), not to the SDK's
``needs_approval`` interruptions: the gate decides once, with its rules, grants and events.
"""

from typing import TYPE_CHECKING, Any

from kairox._util._decode import DecodeProblem, decode_json
from kairox.integrations._results import result_images, result_text
from kairox.policy import Approver
from kairox.registry import ModelProvider, SessionApprovals, ToolRegistry

if TYPE_CHECKING:
    from agents import FunctionTool, ToolOutputImage, ToolOutputText
    from agents.tool_context import ToolContext


def agents_tools(registry: ToolRegistry, *, approver: Approver | None = None) -> list["FunctionTool"]:
    """The tools the model may see now, as ``FunctionTool`` objects (list them again after a ``ToolsChanged``
    event). ``approver`` answers this tool list's asks, with grants of its own; default: the registry's."""
    from agents import FunctionTool  # the SDK loads when the adapter is used: kairox[agents]

    approvals = None if approver is None else registry.session_approvals(approver)
    definitions, _ = registry.definitions(ModelProvider.OPENAI)
    tools = []
    for definition in definitions:
        function = definition["function"]
        tools.append(
            FunctionTool(
                name=function["name"],
                description=function.get("description") or "",
                params_json_schema=function["parameters"],
                on_invoke_tool=_GatedCall(registry, function["name"], approvals),
                strict_json_schema=bool(function.get("strict")),
            )
        )
    return tools


class _GatedCall:
    """What the SDK invokes for one tool: the model's JSON arguments through the gate; the result as text, with
    its images as ``ToolOutputImage`` data URLs beside it when it has any."""

    def __init__(self, registry: ToolRegistry, wire: str, approvals: SessionApprovals | None) -> None:
        self.registry, self.wire, self.approvals = registry, wire, approvals

    async def __call__(
        self, context: "ToolContext[Any]", arguments: str
    ) -> "str | list[ToolOutputText | ToolOutputImage]":
        try:
            value = decode_json(arguments.strip() or "{}")
        except DecodeProblem as exc:
            return f"{self.wire} was not run: the arguments are not valid JSON ({exc.message})"
        if not isinstance(value, dict):
            return f"{self.wire} was not run: the arguments must be a JSON object"
        result = await self.registry.call_from_model(
            ModelProvider.OPENAI, self.wire, value, call_id=context.tool_call_id, approvals=self.approvals
        )
        images = result_images(result)
        if not images:
            return result_text(result)
        from agents import ToolOutputImage, ToolOutputText

        return [
            ToolOutputText(text=result_text(result)),
            *(ToolOutputImage(image_url=f"data:{image.mime_type};base64,{image.data}") for image in images),
        ]
