"""The API's read models: the running runtime's state as the JSON shapes ``docs/web-api.md`` names."""

import re
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from kairox import __version__
from kairox.config import Layer, ResolvedConfig
from kairox.web._hub import context_json, event_fields

if TYPE_CHECKING:
    from kairox.catalog import Catalog, CatalogEntry, InstallPlan, PreflightReport
    from kairox.plugins import PluginSet
    from kairox.runtime import ExtensionContext
    from kairox.web._backend import WebBackend

KINDS = {"mcp": "mcp_servers", "lsp": "lsp_servers", "dap": "dap_servers"}
_HOOK_CONTEXT = re.compile(r"(?:\n\n<hook-context>\n.*?\n</hook-context>)+\Z", re.DOTALL)
"""What hooks added to a prompt for the model: the conversation shows the prompt as the person typed it."""


def state_json(backend: "WebBackend") -> dict[str, Any]:
    resolved = backend.resolved
    held = [
        {"what": f"{p.key}: {p.reason}", "file": str(p.origin.file) if p.origin.file else None, "line": p.origin.line}
        for p in resolved.pending
    ]
    config = resolved.config
    session = backend.session
    return {
        "workspace": str(resolved.workspace),
        "trusted": resolved.trusted,
        "held_back": held,
        "model": {
            # until the check ran: whether a model is named at all
            "configured": backend.setup_problem is None
            if backend.model_checked
            else (backend.model or config.model) is not None,
            "name": config.model,
            "provider": config.model_provider,
            "problem": backend.setup_problem,
            "session": backend.session is not None,
        },
        "context": context_json(session.context_usage)
        if session is not None and session.context_usage is not None
        else None,
        "context_warning": event_fields(session.tools_warning)
        if session is not None and session.tools_warning is not None
        else None,
        "compacting": backend.compacting,
        "plan": [{"content": e.content, "status": str(e.status)} for e in session.plan.entries]
        if session is not None and session.plan is not None
        else [],
        "version": __version__,
        "problem": backend.start_problem,
    }


def server_json(backend: "WebBackend", kind: str, name: str) -> dict[str, Any] | None:
    """One server as the page shows it (the runtime's view); ``None`` when no such server is configured."""
    view = backend.server_views().get(kind, name)
    return view.to_json() if view is not None else None


def skills_json(context: "ExtensionContext") -> list[dict[str, Any]]:
    skills = []
    for entry in sorted(
        context.skills.entries(include_shadowed=True), key=lambda e: (str(e.skill.scope), e.skill.qualified_name)
    ):
        skill = entry.skill
        skills.append(
            {
                "name": skill.qualified_name,
                "description": skill.description or "",
                "scope": str(skill.scope),
                "path": str(skill.path),
                "enabled": entry.enabled,
                "offered": entry.offered,
                "hidden_reason": entry.hidden_reason,
                "shadowed_by": str(entry.shadowed_by.path) if entry.shadowed_by is not None else None,
            }
        )
    return skills


def _permissions(plugin: Any) -> list[str]:
    found = []
    for key, value in plugin.permissions.model_dump(mode="json", exclude_none=True).items():
        found.append(f"{key}: {', '.join(value) if isinstance(value, list) else value}")
    return found


def plugins_json(plugins: "PluginSet", resolved: ResolvedConfig) -> dict[str, Any]:
    listed = []
    entries = resolved.config.plugins.entries
    for plugin in plugins.plugins:
        compat = plugin.compatibility
        listed.append(
            {
                "key": plugin.name,
                "name": plugin.name,
                "version": plugin.version,
                "description": plugin.manifest.description,
                "enabled": plugin.enabled,
                "active": plugin.active,
                "disabled_reason": plugin.disabled_reason,
                "trusted": plugin.trust.vouched,
                "trust": str(plugin.trust),
                "origin": str(plugin.origin),
                "path": str(plugin.root),
                "permissions": _permissions(plugin),
                "compatibility": list(compat.reasons)
                if not compat.compatible
                else [f"{k} {v}" for k, v in compat.checked.items()],
                "compatible": compat.compatible,
                "contributions": [
                    {"kind": str(c.kind), "name": c.name, "enabled": c.enabled} for c in plugin.contributions()
                ],
                "path_override": entries[plugin.name].path if plugin.name in entries else None,
            }
        )
    markets = [
        {
            "name": name,
            "source": str(market.source),
            "plugins": sum(1 for p in plugins.plugins if p.marketplace == name),
        }
        for name, market in sorted(resolved.config.plugins.marketplaces.items())
    ]
    return {"plugins": listed, "marketplaces": markets}


# --- the conversation -------------------------------------------------------------------------------------------


def history_json(backend: "WebBackend") -> dict[str, Any]:
    """The session's conversation as the page shows it, from the messages the session holds (a resumed session's
    come from its transcript): prompts, answers, and each tool call with its result and, while the trace keeps
    them, the gate's decision and how long it ran. ``seq``: the last event it covers."""
    from kairox.agent import Role
    from kairox.web._hub import result_json

    hub, session = backend.hub, backend.session
    running = backend.turn_running
    data: dict[str, Any] = {"session_id": None, "items": [], "turn": hub.turn if running else None, "seq": hub.seq}
    if session is None:
        return data
    facts = hub.call_facts()
    wire = session.context.registry.from_wire_name
    items: list[dict[str, Any]] = []
    calls: dict[str, dict[str, Any]] = {}
    turns = {t.get("messages"): t["turn"] for t in session.checkpoints.turns()}  # the turn each prompt began
    for index, message in enumerate(session.messages):
        if message.role is Role.USER:
            text = _HOOK_CONTEXT.sub("", message.text)
            items.append({"kind": "user", "text": text, "rewind_turn": turns.get(index)})
        elif message.role is Role.ASSISTANT:
            if message.text:
                items.append({"kind": "assistant", "turn": None, "text": message.text, "done": True})
            for part in message.tool_calls:
                fact = facts.get(part.id, {})
                call = {
                    "call_id": part.id,
                    "tool": wire(part.name) or part.name,
                    "arguments": part.arguments,
                    "decision": fact.get("decision"),
                    "decision_reason": fact.get("decision_reason"),
                    "finished": fact.get("finished"),
                    "result": None,
                }
                calls[part.id] = call
                items.append({"kind": "tool", "turn": None, "call": call})
        else:
            for result in message.tool_results:
                if result.call_id in calls:
                    shown = result_json(result.call_id, result.text, result.is_error)
                    calls[result.call_id]["result"] = {k: shown[k] for k in ("text", "truncated", "chars", "is_error")}
    if running and hub.streamed:
        items.append({"kind": "assistant", "turn": hub.turn, "text": hub.streamed, "done": False})
    data["session_id"], data["items"] = session.session_id, items
    return data


def rewind_json(plan: Any) -> dict[str, Any]:
    """What a rewind would do (``GET /api/session/rewind``), as the page's dialog shows it."""
    return {
        "turn": plan.turn,
        "prompt": plan.prompt,
        "restore": [path for path, _ in plan.restore],
        "remove": list(plan.remove),
        "irreversible": list(plan.irreversible),
        "text": plan.text(),
    }


# --- the catalog ------------------------------------------------------------------------------------------------


def _memo_probe() -> Callable[[str], str | None]:
    from kairox.catalog import probe_version

    seen: dict[str, str | None] = {}

    def probe(program: str) -> str | None:
        if program not in seen:
            seen[program] = probe_version(program)
        return seen[program]

    return probe


def entry_json(
    entry: "CatalogEntry",
    resolved: ResolvedConfig,
    probe: Callable[[str], str | None] | None = None,
    *,
    detail: bool = False,
) -> dict[str, Any]:
    from kairox.catalog import CatalogFormatError, CatalogPlanError, plan_install, preflight

    plan: InstallPlan | None
    problem = None
    try:
        plan = plan_install(entry)
    except (CatalogPlanError, CatalogFormatError) as exc:
        plan, problem = None, str(exc)
    report: PreflightReport | None = preflight(plan, version_of=probe or _memo_probe()) if plan is not None else None
    data: dict[str, Any] = {
        "name": entry.id,
        "server": plan.name if plan is not None else entry.short_name,
        "title": entry.title or entry.short_name,
        "description": entry.description,
        "tags": list(entry.tags),
        "source": entry.source,
        "version": entry.version,
        "installed": (plan.name if plan is not None else entry.short_name) in resolved.config.mcp_servers,
        "requirements": [
            {"name": c.name, "present": c.ok, "detail": c.detail}
            for c in (report.checks if report else ())
            if c.kind != "variable"
        ],
        "variables": [
            {"name": v.name, "description": v.description or "", "required": v.required, "secret": v.secret}
            for v in (plan.variables if plan is not None else ())
        ],
        "installable": plan is not None,
        "problem": problem,
    }
    if detail:
        import tomlkit

        data["command"] = (
            list(plan.argv) if plan is not None and plan.argv else ([plan.command_line] if plan is not None else [])
        )
        data["config"] = tomlkit.dumps({"mcp_servers": {plan.name: plan.table}}).strip() if plan is not None else ""
        data["target_file"] = str(resolved.layer_file(Layer.USER))
        data["target_files"] = {
            str(layer): str(resolved.layer_file(layer)) for layer in (Layer.USER, Layer.PROJECT, Layer.LOCAL)
        }
    return data


def catalog_json(catalog: "Catalog", resolved: ResolvedConfig, query: str, tag: str) -> dict[str, Any]:
    import time

    entries = catalog.search(query) if query.strip() else catalog.listed()
    if tag:
        entries = [e for e in entries if tag in e.tags]
    probe = _memo_probe()
    now = time.time()
    sources = [
        {"name": s.name, "age_seconds": round(now - s.fetched_at, 1) if s.fetched_at else None, "error": s.error}
        for s in catalog.sources
    ]
    return {"entries": [entry_json(e, resolved, probe) for e in entries], "sources": sources}
