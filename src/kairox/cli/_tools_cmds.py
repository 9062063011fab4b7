"""``kairox tools list|call`` and ``kairox policy check``."""

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Annotated, Any, TypeVar

import typer

from kairox.cli._common import CliState, ExitCode, err, fail, out, out_json, parse_json_arg, state

T = TypeVar("T")

if TYPE_CHECKING:
    from kairox.policy import Approver
    from kairox.registry import ToolRegistry
    from kairox.runtime import ExtensionContext
    from kairox.tools import ToolResult, ToolSpec

tools_app = typer.Typer(help="List and call tools through the permission gate.", no_args_is_help=True)
policy_app = typer.Typer(help="Ask the permission policy what it would decide.", no_args_is_help=True)

JsonOption = Annotated[bool, typer.Option("--json", help="Machine-readable output on stdout.")]
YesOption = Annotated[
    bool, typer.Option("--yes", "-y", help="Approve once what the policy asks about (not writes to protected paths; deny rules still deny).")
]
ArgsArgument = Annotated[str | None, typer.Argument(help="Arguments as a JSON object.")]


def _with_registry(cli: CliState, approver: "Approver", work: "Callable[[ToolRegistry], Awaitable[T]]") -> T:
    """Run ``work`` with the registry of the workspace's whole extension context (every tool source)."""
    from kairox.cli._runtime import with_context

    async def inner(context: "ExtensionContext") -> T:
        return await work(context.registry)

    return with_context(cli, inner, approver=approver)


async def _same(registry: "ToolRegistry") -> "ToolRegistry":
    """The registry itself: listing and policy checks read specs, which outlive the servers."""
    return registry


def _spec_json(spec: "ToolSpec") -> dict[str, Any]:
    profile = spec.permission
    return {
        "name": spec.name,
        "source": str(spec.source),
        "origin": spec.origin,
        "description": spec.description,
        "input_schema": spec.input_schema,
        "permission_profile": {
            "access": str(profile.access),
            "destructive": profile.destructive,
            "open_world": profile.open_world,
            "path_args": list(profile.path_args),
            "command_arg": profile.command_arg,
        },
    }


@tools_app.command("list")
def list_tools(
    ctx: typer.Context,
    as_json: JsonOption = False,
    provider: Annotated[
        str | None, typer.Option("--provider", help="Print exactly the definitions this model provider is sent: openai, anthropic or gemini.")
    ] = None,
    verbose: Annotated[bool, typer.Option("--verbose", "-v", help="Print each description in full (--json always does).")] = False,
) -> None:
    """The tools the model sees, each with the first line of its description (hidden ones and their reasons with --json)."""

    from kairox.policy import NonInteractiveApprover
    from kairox.registry import ModelProvider

    if provider is not None and provider not in {p.value for p in ModelProvider}:
        fail(f"unknown provider {provider!r}; use openai, anthropic or gemini", ExitCode.USAGE)
    registry = _with_registry(state(ctx), NonInteractiveApprover(), _same)
    diagnostics = registry.diagnostics
    if provider is not None:
        definitions, problems = registry.definitions(provider)
        for problem in [*diagnostics, *problems]:
            err(str(problem))
        out_json(definitions)
        return
    visible = registry.visible_tools()
    if as_json:
        hidden = [
            {"name": spec.name, "source": str(spec.source), "origin": spec.origin, "reason": registry.hidden_reason(spec.name)}
            for spec in registry.tools()
            if registry.hidden_reason(spec.name) is not None
        ]
        out_json({"tools": [_spec_json(s) for s in visible], "hidden": hidden, "diagnostics": [d.to_json() for d in diagnostics]})
        return
    from kairox.cli._notices import ShownWarnings, held_back_note

    shown, held = ShownWarnings(state(ctx).resolve().home).split(diagnostics)
    for problem in shown:
        err(str(problem))
    if held:
        err(held_back_note(held))
    width = max((len(s.name) for s in visible), default=0)
    for spec in visible:
        description = spec.description.strip() if verbose else one_line(spec.description)
        out(f"{spec.name:<{width}}  {spec.source!s:<7}  {spec.permission.access!s:<13}  {description}")
    for spec in registry.tools():
        reason = registry.hidden_reason(spec.name)
        if reason is not None:
            err(f"hidden: {spec.name}: {reason}")


def one_line(text: str, limit: int = 100) -> str:
    """The first sentence (or line) of a description, at most ``limit`` characters."""
    first = text.strip().split("\n\n", 1)[0]
    first = " ".join(first.split())
    end = first.find(". ")
    if end != -1:
        first = first[: end + 1]
    return first if len(first) <= limit else first[: limit - 1].rstrip() + "…"


def _result_json(result: "ToolResult") -> dict[str, Any]:
    import dataclasses

    return {
        "is_error": result.is_error,
        "text": result.text_content(),
        "content": [dataclasses.asdict(part) for part in result.content],
        "structured": result.structured,
        "meta": result.meta,
    }


@tools_app.command("call")
def call_tool(
    ctx: typer.Context,
    name: Annotated[str, typer.Argument(help="Tool name, e.g. fs.read or mcp__github__search.")],
    arguments: ArgsArgument = None,
    yes: YesOption = False,
    as_json: JsonOption = False,
) -> None:
    """Call one tool through the gate: validation, hooks, policy, approval, timeout, output cap.

    What the policy asks about is asked at the terminal; --yes approves it once (not writes to protected paths);
    without a terminal it is refused with how to allow it. Deny rules always deny.
    """

    from kairox.cli._approver import command_line_approver
    from kairox.tools import ToolCall

    args = parse_json_arg(arguments)
    approver = command_line_approver(yes)

    async def run(registry: "ToolRegistry") -> tuple["ToolResult", bool]:
        known = registry.get(name) is not None
        return await registry.call(ToolCall(name=name, arguments=args, call_id="cli")), known

    result, known = _with_registry(state(ctx), approver, run)
    if as_json:
        out_json(_result_json(result))
    elif result.is_error:
        err(result.text_content())
    else:
        out(result.text_content())
    if not known:
        raise typer.Exit(int(ExitCode.NOT_FOUND))
    if "decision" in result.meta:
        raise typer.Exit(int(ExitCode.DENIED))
    if result.is_error:
        raise typer.Exit(int(ExitCode.TOOL_ERROR))


@policy_app.command("check")
def check(
    ctx: typer.Context,
    tool: Annotated[str, typer.Argument(help="Tool name, e.g. shell.exec.")],
    arguments: ArgsArgument = None,
    as_json: JsonOption = False,
) -> None:
    """What the policy decides for a call: allow, ask or deny, why, and the rule with its file:line."""

    from kairox.policy import NonInteractiveApprover

    args = parse_json_arg(arguments)
    registry = _with_registry(state(ctx), NonInteractiveApprover(), _same)
    known = registry.get(tool) is not None
    decision = registry.check(tool, args)
    if as_json:
        out_json({"tool": tool, "arguments": args, **decision.to_json(), "where": decision.where})
    else:
        out(f"{decision.verdict}: {decision.reason}")
        if decision.rule is not None:
            out(f"rule: {decision.rule.action} {decision.rule.pattern!r} at {decision.where or decision.rule.layer}")
        else:
            out(f"decided by: {decision.source}")
    if not known:
        raise typer.Exit(int(ExitCode.NOT_FOUND))
