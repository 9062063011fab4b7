"""The text of the read-only panels (/doctor, /config, /tools, /skills, /plugins, /hooks, /trust, /model) and the
lines of the /resume picker, built from the running context. Plain strings: the panel widget only shows them."""

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
    "[model_providers.NAME] table with base_url and api_key_env "
    "for any OpenAI-compatible server; then restart `kairox tui`."
)


def doctor_text(context: "ExtensionContext") -> str:
    """The runtime's doctor report, as ``kairox doctor`` prints it."""
    from kairox.runtime import doctor_lines, doctor_report

    return "\n".join(doctor_lines(doctor_report(context)))


def config_text(resolved: "ResolvedConfig") -> str:
    """What ``kairox config show --provenance`` prints: every key with where it was set, secrets redacted."""
    from kairox.config import provenance_lines

    return "\n".join(
        ["Effective configuration (layer, where it was set, key = value)", "", *provenance_lines(resolved)]
    )


def tools_text(context: "ExtensionContext") -> str:
    registry = context.registry
    visible = context.tools()
    lines = [f"Tools the model sees ({len(visible)}):", ""]
    lines += [f"  {spec.name:<40} {spec.source} {spec.origin or ''}".rstrip() for spec in visible]
    hidden = [
        (spec.name, registry.hidden_reason(spec.name)) for spec in registry.tools() if registry.hidden_reason(spec.name)
    ]
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


def model_text(settings: "ModelSettings | None", usage: tuple[int, int], resolved: "ResolvedConfig") -> str:
    """/model alone: the current model and what /model NAME can switch to."""
    import os

    from kairox.agent import known_providers, model_choices

    if settings is None:
        return NO_MODEL
    lines = [
        f"Model {settings.model} from provider {settings.provider} ({settings.wire_api})",
        f"Tokens this session: {usage[0]} in, {usage[1]} out",
        "",
        "Switch for this session with /model NAME (same provider) or /model PROVIDER/NAME;",
        "for every session, set `model` / `model_provider` in kairox.toml, or start with `kairox tui -m MODEL`.",
    ]
    current = f"{settings.provider}/{settings.model}"
    lines += ["", "Models named in the configuration:"]
    lines += [
        f"  {name:<40} {where}" + ("   (current)" if name == current else "") for name, where in model_choices(resolved)
    ] or ["  none"]
    lines += ["", "Providers:"]
    for name, entry in sorted(known_providers(resolved).items()):
        key = (
            "no key needed"
            if entry.api_key_env is None
            else f"{entry.api_key_env} {'set' if os.environ.get(entry.api_key_env) else 'not set'}"
        )
        lines.append(f"  {name:<16} {entry.wire_api:<10} {entry.base_url or '(default endpoint)'}   {key}")
    return "\n".join(lines)


def session_lines(context: "ExtensionContext") -> list[tuple[str, str]]:
    """``(id, line)`` of the workspace's sessions for the /resume picker, newest first."""
    from kairox.agent import list_sessions

    found = list_sessions(context.resolved.home, workspace=context.resolved.workspace)
    lines = []
    for info in reversed(found[-100:]):
        when = time.strftime("%Y-%m-%d %H:%M", time.localtime(info.updated))
        prompt = info.first_prompt.replace("\n", " ")[:70]
        lines.append((info.id, f"{when}  {info.turns:>3} turn(s)  {prompt}"))
    return lines
