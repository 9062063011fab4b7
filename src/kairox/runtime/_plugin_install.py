"""Installing a plugin from a folder or a URL (P7): the gate's question before the checked copy is moved in.

A marketplace the user registered is their choice of where plugins come from; a folder or URL named on the
command line is not, so its plugin is loaded and shown (what it brings, what runs) and the write into Kairox's
plugin store goes through the gate like any tool's write: a deny rule refuses it, the store is Kairox's own
folder so the policy asks, and the front end's approver answers.
"""

from kairox._util._json import JsonObject
from kairox.config import ResolvedConfig
from kairox.events import EventSink, NullSink
from kairox.plugins import Confirm, InstallRequest, Plugin, PluginInstallDeniedError
from kairox.policy import Approver, Decision, PolicyEngine, Verdict
from kairox.registry import SessionApprovals, registry_settings
from kairox.tools import Access, PermissionProfile, ToolSource, ToolSpec, object_schema

PLUGIN_INSTALL_SPEC = ToolSpec(
    name="plugins.install",
    description="Install a plugin from a folder, a URL or a registered marketplace into Kairox's plugin store.",
    input_schema=object_schema(
        {
            "path": {"type": "string"},
            "plugin": {"type": "string"},
            "source": {"type": "string"},
            "marketplace": {"type": "string"},
            "brings": {"type": "string"},
        },
        ["path", "plugin"],
    ),
    source=ToolSource.BUILTIN,
    permission=PermissionProfile(access=Access.WRITE, path_args=("path",)),
)
"""How the gate sees an install: a write of the plugin's folder in ``$KAIROX_HOME/plugins`` (from a folder or URL)
or of the user's configuration that enables it (from a marketplace); both are protected, so the policy asks."""

_WORDS = {
    "skill": ("skill", "skills"),
    "command": ("command", "commands"),
    "agent": ("agent", "agents"),
    "tool": ("tool", "tools"),
    "hook": ("hook", "hooks"),
    "mcp_server": ("MCP server", "MCP servers"),
    "lsp_server": ("language server", "language servers"),
}


def plugin_brings(plugin: Plugin) -> str:
    """What a plugin contributes, in words, with the commands that would run: ``2 skills, 1 hook (runs
    `./check.sh`), 1 MCP server (runs `node server.js`)``."""
    counts: dict[str, list[str]] = {}
    for contribution in plugin.contributions():
        counts.setdefault(str(contribution.kind), []).append(contribution.detail or "")
    parts: list[str] = []
    for kind, details in counts.items():
        one, many = _WORDS.get(kind, (kind, kind + "s"))
        text = f"{len(details)} {one if len(details) == 1 else many}"
        runs = sorted({d for d in details if d})
        if kind in ("hook", "mcp_server", "lsp_server", "tool") and runs:
            text += " (runs " + ", ".join(f"`{d}`" for d in runs[:3]) + (", ..." if len(runs) > 3 else "") + ")"
        parts.append(text)
    return ", ".join(parts) or "nothing Kairox loads"


async def decide_plugin_install(
    engine: PolicyEngine, arguments: JsonObject, *, approver: Approver, events: EventSink
) -> Decision:
    """The gate's answer to one plugin install: the policy decides, an ``ask`` goes to ``approver``."""
    decision = engine.decide(PLUGIN_INSTALL_SPEC, arguments)
    if decision.verdict is Verdict.ASK:
        approvals = SessionApprovals(approver, persist_rule=None, emit=events.emit)
        decision = await approvals.resolve("plugin-install", PLUGIN_INSTALL_SPEC, arguments, decision, engine)
    return decision


def plugin_install_gate(resolved: ResolvedConfig, *, approver: Approver, events: EventSink | None = None) -> Confirm:
    """The ``confirm`` of ``Marketplaces.install_source``: the policy decides the write of the plugin's folder; an
    ``ask`` goes to ``approver``. A refusal raises :class:`PluginInstallDeniedError` with the reason."""
    engine = PolicyEngine(registry_settings(resolved).policy)
    sink = events or NullSink()

    async def confirm(request: InstallRequest) -> bool:
        plugin = request.plugin
        arguments: JsonObject = {
            "path": str(request.path),
            "plugin": f"{plugin.name} {plugin.version or ''}".strip(),
            "source": request.source,
            "brings": plugin_brings(plugin),
        }
        decision = await decide_plugin_install(engine, arguments, approver=approver, events=sink)
        if decision.verdict is not Verdict.ALLOW:
            raise PluginInstallDeniedError(
                f"plugin {plugin.name!r} from {request.source} was not installed: {decision.reason}",
                hint="run it at a terminal to answer the question, or pass --yes (a deny rule still wins)",
            )
        return True

    return confirm
