"""The text of the read-only panels (/doctor, /config, /tools, /skills, /plugins, /hooks, /trust, /model,
/resume), built from the running context. Plain strings: the panel widget only shows them."""

import time
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from kairox.agent import ModelSettings
    from kairox.config import ResolvedConfig
    from kairox.runtime import ExtensionContext

NO_MODEL = (
    "No model is configured, so this session cannot send prompts yet. The panels work (/mcp, /doctor, /tools ...).\n\n"
    "To talk to a model, set one in ~/.kairox/kairox.toml (or the workspace's kairox.toml), e.g.\n\n"
    '    model = "gpt-4.1"\n    model_provider = "openai"      # reads OPENAI_API_KEY\n\n'
    'or `model = "claude-sonnet-4-5"` with `model_provider = "anthropic"` (ANTHROPIC_API_KEY), or a\n'
    "[model_providers.NAME] table with base_url and api_key_env for any OpenAI-compatible server; then restart `kairox tui`."
)


def doctor_text(context: "ExtensionContext") -> str:
    """The runtime's doctor report, as ``kairox doctor`` prints it."""
    from kairox.runtime import doctor_lines, doctor_report

    return "\n".join(doctor_lines(doctor_report(context)))


def config_text(resolved: "ResolvedConfig") -> str:
    """What ``kairox config show --provenance`` prints: every key with where it was set, secrets redacted."""
    from kairox.config import provenance_lines

    return "\n".join(["Effective configuration (layer, where it was set, key = value)", "", *provenance_lines(resolved)])


def tools_text(context: "ExtensionContext") -> str:
    registry = context.registry
    visible = context.tools()
    lines = [f"Tools the model sees ({len(visible)}):", ""]
    lines += [f"  {spec.name:<40} {spec.source} {spec.origin or ''}".rstrip() for spec in visible]
    hidden = [(spec.name, registry.hidden_reason(spec.name)) for spec in registry.tools() if registry.hidden_reason(spec.name)]
    if hidden:
        lines += ["", f"Hidden from the model ({len(hidden)}):", ""]
        lines += [f"  {name:<40} {reason}" for name, reason in hidden]
    return "\n".join(lines)


def tool_search_text(context: "ExtensionContext", query: str, *, limit: int = 10) -> str:
    """``/tools QUERY``: the visible tools best matching it, ranked and explained as ``kairox tools search`` and
    the model's ``tool_search`` rank them."""
    from kairox.registry import ToolIndex

    matches = ToolIndex(context.tools()).search(query, limit=limit)
    if not matches:
        return f"No visible tool matches {query!r}.\n\nTry other words; /tools lists every tool the model sees."
    lines = [f"Tools matching {query!r} ({len(matches)}):", ""]
    for rank, match in enumerate(matches, 1):
        first = " ".join(match.spec.description.strip().split("\n\n", 1)[0].split())
        lines += [f"  {rank}. {match.spec.name}  ({match.score:.2f}: {match.why()})", f"     {first[:100]}"]
    return "\n".join(lines)


def hooks_text(context: "ExtensionContext") -> str:
    hooks = context.hooks.hooks
    lines = [f"Hooks ({len(hooks)})", ""]
    for spec in hooks:
        data = spec.to_json()  # its command redacted
        lines.append("  " + ", ".join(f"{k}={v}" for k, v in data.items() if v not in (None, "", [], {})))
    for item in context.hooks.diagnostics:
        lines.append(f"  ! {item.name}: {item.reason}")
    return "\n".join(lines)


def trust_text(resolved: "ResolvedConfig") -> str:
    lines = [f"Workspace {resolved.workspace}: {'trusted' if resolved.trusted else 'not trusted'}", ""]
    if resolved.pending:
        lines.append("Waiting for trust (run `kairox trust` in the workspace, then restart):")
        lines += [f"  {p.key}" for p in resolved.pending]
    elif not resolved.trusted:
        lines.append("The project declares nothing that needs trust.")
    return "\n".join(lines)


def model_text(settings: "ModelSettings | None", usage: tuple[int, int]) -> str:
    if settings is None:
        return NO_MODEL
    return (
        f"Model {settings.model} from provider {settings.provider} ({settings.wire_api})\n"
        f"Tokens this session: {usage[0]} in, {usage[1]} out\n\n"
        "Change it with `model` / `model_provider` in kairox.toml, or `kairox tui -m MODEL`."
    )


def sessions_text(context: "ExtensionContext") -> str:
    from kairox.agent import list_sessions

    found = list_sessions(context.resolved.home, workspace=context.resolved.workspace)
    if not found:
        return "No earlier sessions in this workspace."
    lines = ["Earlier sessions (`/resume ID` continues one here, `kairox tui --resume ID` at start):", ""]
    for info in found[-30:]:
        when = time.strftime("%Y-%m-%d %H:%M", time.localtime(info.updated))
        prompt = info.first_prompt.replace("\n", " ")[:60]
        lines.append(f"  {info.id}  {when}  {info.turns:>3} turn(s)  {prompt}")
    return "\n".join(lines)
