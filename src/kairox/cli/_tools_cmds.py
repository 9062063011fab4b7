"""``kairox tools list|search|call`` and ``kairox policy check``."""

import json
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, TypeVar

import typer

from kairox.cli._common import (
    CliState,
    ExitCode,
    JsonOption,
    YesOption,
    err,
    fail,
    out,
    out_json,
    parse_json_arg,
    state,
)

T = TypeVar("T")

if TYPE_CHECKING:
    from kairox.cli._call_script import ScriptCall
    from kairox.policy import Approver
    from kairox.registry import ToolRegistry
    from kairox.runtime import ExtensionContext
    from kairox.tools import ToolResult, ToolSpec

tools_app = typer.Typer(help="List and call tools through the permission gate.", no_args_is_help=True)
policy_app = typer.Typer(help="Ask the permission policy what it would decide.", no_args_is_help=True)

ArgsArgument = Annotated[str | None, typer.Argument(help="Arguments as a JSON object.")]


def _with_registry(
    cli: CliState,
    approver: "Approver",
    work: "Callable[[ToolRegistry], Awaitable[T]]",
    *,
    for_tools: tuple[str, ...] | None = None,
) -> T:
    """Run ``work`` with the registry of the workspace's extension context: every tool source, and the MCP
    servers ``for_tools`` can come from (all when None)."""
    from kairox.cli._runtime import with_context

    async def inner(context: "ExtensionContext") -> T:
        return await work(context.registry)

    return with_context(cli, inner, approver=approver, for_tools=for_tools)


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
        str | None,
        typer.Option(
            "--provider", help="Print exactly the definitions this model provider is sent: openai, anthropic or gemini."
        ),
    ] = None,
    verbose: Annotated[
        bool, typer.Option("--verbose", "-v", help="Print each description in full (--json always does).")
    ] = False,
) -> None:
    """The tools the model sees, each with the first line of its
    description (hidden ones and their reasons with --json)."""

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
            {
                "name": spec.name,
                "source": str(spec.source),
                "origin": spec.origin,
                "reason": registry.hidden_reason(spec.name),
            }
            for spec in registry.tools()
            if registry.hidden_reason(spec.name) is not None
        ]
        out_json(
            {
                "tools": [_spec_json(s) for s in visible],
                "hidden": hidden,
                "diagnostics": [d.to_json() for d in diagnostics],
            }
        )
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


@tools_app.command("search")
def search_tools(
    ctx: typer.Context,
    query: Annotated[str, typer.Argument(help="What the tool should do, in a user's words.")],
    as_json: JsonOption = False,
    limit: Annotated[int, typer.Option("--limit", "-n", min=1, max=50, help="How many tools to show.")] = 5,
) -> None:
    """The visible tools best matching QUERY, ranked as the model's
    `tool_search` ranks them, with the words that matched."""
    from kairox.policy import NonInteractiveApprover
    from kairox.registry import ToolIndex

    cli = state(ctx)
    registry = _with_registry(cli, NonInteractiveApprover(), _same)
    semantic = None
    resolved = cli.resolve()
    if resolved.config.tools.semantic:  # embeddings from the configured provider, blended in (never required)
        from kairox.agent._embeddings import semantic_ranker

        semantic = semantic_ranker(resolved)
    matches, note = ToolIndex(registry.visible_tools()).search_explained(query, limit=limit, semantic=semantic)
    if as_json:
        payload = {
            "query": query,
            "matches": [m.to_json() for m in matches],
            "diagnostics": [d.to_json() for d in registry.diagnostics],
        }
        out_json({**payload, **({"note": note} if note else {})})
        return
    for problem in registry.diagnostics:
        err(str(problem))
    if note:
        err(note)
    if not matches:
        err(f"no visible tool matches {query!r}")
        raise typer.Exit(ExitCode.NOT_FOUND)
    for rank, match in enumerate(matches, 1):
        out(f"{rank}. {match.spec.name}  ({match.score:.2f}: {match.why()})\n   {one_line(match.spec.description)}")


def one_line(text: str, limit: int = 100) -> str:
    """The first sentence (or line) of a description, at most ``limit`` characters."""
    first = text.strip().split("\n\n", 1)[0]
    first = " ".join(first.split())
    end = first.find(". ")
    if end != -1:
        first = first[: end + 1]
    return first if len(first) <= limit else first[: limit - 1].rstrip() + "…"


def _shown(result: "ToolResult") -> str:
    """The text parts, and a line for each other part: ``[image: image/png, 2.3 KB; --json has its data]``."""
    lines = []
    for part in result.content:
        text = getattr(part, "text", None)
        if isinstance(text, str):
            lines.append(text)
        elif isinstance(data := getattr(part, "data", None) or getattr(part, "blob", None), str):
            kind = getattr(part, "mime_type", None) or "binary"
            lines.append(f"[{part.type}: {kind}, {len(data) * 3 / 4 / 1024:.1f} KB; --json has its data]")
        else:
            lines.append(f"[{part.type}: {getattr(part, 'uri', '')}]")
    return "\n".join(lines)


def result_json(result: "ToolResult") -> dict[str, Any]:
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
    name: Annotated[str | None, typer.Argument(help="Tool name, e.g. fs.read or mcp__github__search.")] = None,
    arguments: ArgsArgument = None,
    script: Annotated[
        Path | None,
        typer.Option(
            "--script", help='Run the calls of a file, one JSON line each: {"tool": NAME, "arguments": {...}}.'
        ),
    ] = None,
    interactive: Annotated[
        bool,
        typer.Option("--interactive", "-i", help="Read calls at a prompt (TOOL [JSON]) until exit or end of input."),
    ] = False,
    yes: YesOption = False,
    as_json: JsonOption = False,
) -> None:
    """Call tools through the gate: validation, hooks, policy, approval, timeout, output cap.

    One call (NAME [JSON]), the calls of a --script file, or calls typed at an --interactive prompt; the calls of
    one command share one process, so a debug session lives from dap.launch to dap.disconnect. Only the MCP
    servers the named tools come from start (a built-in tool starts none; --interactive starts every server).
    What the policy asks about is asked at the terminal; --yes approves it once (not writes to protected paths);
    without a terminal it is refused with how to allow it. Deny rules always deny.
    """

    from kairox.cli._approver import command_line_approver
    from kairox.cli._call_script import ScriptCall, ScriptLineError, read_script

    modes = [
        mode
        for mode, given in (
            ("NAME", name is not None),
            ("--script", script is not None),
            ("--interactive", interactive),
        )
        if given
    ]
    if len(modes) != 1:
        fail("give one of: a tool NAME, --script FILE, --interactive", ExitCode.USAGE)
    approver = command_line_approver(yes)
    if name is not None:
        args = parse_json_arg(arguments)
        code = _with_registry(
            state(ctx),
            approver,
            _calls_runner([ScriptCall(tool=name, arguments=args, where="")], as_json, single=True),
            for_tools=(name,),
        )
    elif script is not None:
        try:
            calls = read_script(script)
        except ScriptLineError as exc:
            fail(str(exc), ExitCode.USAGE)
        # only the servers the script's tools come from start
        code = _with_registry(
            state(ctx), approver, _calls_runner(calls, as_json), for_tools=tuple(c.tool for c in calls)
        )
    else:
        code = _with_registry(state(ctx), approver, _prompt_runner(as_json))
    if code is not ExitCode.OK:
        raise typer.Exit(int(code))


async def _call_one(registry: "ToolRegistry", call: "ScriptCall", as_json: bool, *, single: bool = False) -> ExitCode:
    """Run one call and render it: the text (errors on stderr), or its JSON; returns its exit code."""
    from kairox.tools import ToolCall

    known = registry.get(call.tool) is not None
    result = await registry.call(ToolCall(name=call.tool, arguments=call.arguments, call_id="cli"))
    if as_json:
        data = result_json(result)
        if single:
            out_json(data)
        else:
            out(json.dumps({"tool": call.tool, "where": call.where, **data}, ensure_ascii=False, default=str))
    else:
        if not single:
            out(f"── {call.tool} ({call.where})")
        (err if result.is_error else out)(_shown(result))
    if not known:
        return ExitCode.NOT_FOUND
    if "decision" in result.meta:
        return ExitCode.DENIED
    return ExitCode.TOOL_ERROR if result.is_error else ExitCode.OK


def _calls_runner(
    calls: "list[ScriptCall]", as_json: bool, *, single: bool = False
) -> "Callable[[ToolRegistry], Awaitable[ExitCode]]":
    async def run(registry: "ToolRegistry") -> ExitCode:
        from kairox.cli._call_script import worst_exit

        return worst_exit([await _call_one(registry, call, as_json, single=single) for call in calls])

    return run


def _prompt_runner(as_json: bool) -> "Callable[[ToolRegistry], Awaitable[ExitCode]]":
    async def run(registry: "ToolRegistry") -> ExitCode:
        import anyio

        from kairox.cli._call_script import ScriptLineError, parse_prompt_line, read_prompt_line, worst_exit

        codes: list[ExitCode] = []
        number = 0
        # the prompt is read in a worker thread: the servers keep being served while nobody types
        while (line := await anyio.to_thread.run_sync(read_prompt_line)) is not None:
            number += 1
            try:
                call = parse_prompt_line(line, f"<stdin>:{number}")
            except ScriptLineError as exc:
                err(f"kairox: {exc}")
                codes.append(ExitCode.USAGE)
                continue
            if call is not None:
                codes.append(await _call_one(registry, call, as_json))
        return worst_exit(codes)

    return run


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
