"""Turning skills and plugins (or one contribution of a plugin) on and off,
and loading a plugin from another folder: what every front end lists and the
writes it makes, through the config writer ``kairox skills enable`` and ``kairox plugins disable`` use.

A write into a project file (the project or local layer) of an untrusted workspace is a change the user makes to a
file the workspace's owner controls; :func:`authorize_config_write` asks the front end's approver about it first,
as the gate asks about any write it cannot allow by itself.
"""

from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

from kairox.config import Layer, ResolvedConfig, join_key, write_own
from kairox.errors import KairoxError
from kairox.policy import ApprovalRequest, Approver

if TYPE_CHECKING:
    from kairox.runtime._context import ExtensionContext

CONFIG_WRITE_TOOL = "config.write"
"""The tool name an approval request about a configuration write carries."""
WRITABLE_LAYERS = (Layer.USER, Layer.PROJECT, Layer.LOCAL)
REDIRECTED_HINT = (
    "write to the user layer if the change is meant for every workspace, or replace the link with a file of its own"
)


class ConfigWriteDeniedError(KairoxError):
    """The person (or the lack of one) did not allow a write into a project file of an untrusted workspace."""

    def __init__(self, file: Path, reason: str | None, *, change: str | None = None, hint: str | None = None) -> None:
        super().__init__(
            f"{file} is unchanged{f' ({change})' if change else ''}: {reason or 'denied'}",
            hint=hint or "trust the workspace (`kairox trust`) or write to the user layer instead",
        )
        self.file = file
        self.change = change


@dataclass(frozen=True, kw_only=True, slots=True)
class ToggleRow:
    """One thing that can be turned on or off, as every front end lists it."""

    key: str
    """What the toggle takes: a skill's qualified name, a plugin's name, ``plugin/kind:name`` for a contribution."""
    label: str
    enabled: bool
    state: str
    """What the row's state means (``offered``, ``hidden: shadowed by ...``)."""
    detail: str


async def authorize_config_write(resolved: ResolvedConfig, file: Path, change: str, *, approver: Approver) -> None:
    """Return when ``file`` may be written; raise :class:`ConfigWriteDeniedError` when the answer was no.

    A write to the user layer needs no question (the user's own file). A write to the project or local file (or
    any other file) of an untrusted workspace asks (:meth:`ResolvedConfig.untrusted_file` says which): the file
    is the workspace's, and nothing in it applies before trust anyway. Every front end passes its own approver:
    the GUI's dialog, a terminal prompt, or, with nobody to ask, one that refuses, so the write fails closed.

    A write that names a file of the workspace but that a link sends into the user's (or system) file is refused
    without a question, trusted or not (:meth:`ResolvedConfig.redirected_write`): a yes would make a change
    meant for one workspace hold in all of them. A question about a linked file names the link's target."""
    redirected = resolved.redirected_write(file)
    if redirected is not None:
        raise ConfigWriteDeniedError(file, redirected, change=change, hint=REDIRECTED_HINT)
    what = resolved.untrusted_file(file)
    if what is None:
        return
    target = resolved.linked_to(file)
    lands = f" (a link to {target})" if target is not None else ""
    request = ApprovalRequest(
        tool=CONFIG_WRITE_TOOL,
        arguments={"path": str(file), "change": change},
        reason=(
            f"{file} is {what} of a workspace you have not trusted{lands}; the change waits for `kairox trust` to apply"
        ),
        source="untrusted_workspace",
    )
    answer = await approver.request_approval(request)
    if not answer.approved:
        raise ConfigWriteDeniedError(file, answer.reason, change=change)


def skill_rows(context: "ExtensionContext") -> list[ToggleRow]:
    """Every skill by scope (the shadowed duplicates too, each saying what wins over it)."""
    rows = []
    for entry in sorted(
        context.skills.entries(include_shadowed=True), key=lambda e: (str(e.skill.scope), e.skill.qualified_name)
    ):
        skill = entry.skill
        detail = [f"{skill.qualified_name} [{skill.scope}]", str(skill.path), "", skill.description or ""]
        if entry.shadowed:
            detail += ["", "shadows:"] + [f"  [{s.scope}] {s.path}" for s in entry.shadowed]
        if entry.shadowed_by is not None:
            detail += ["", f"shadowed by [{entry.shadowed_by.scope}] {entry.shadowed_by.path}"]
        rows.append(
            ToggleRow(
                key=skill.qualified_name,
                label=f"[{skill.scope}] {skill.qualified_name}",
                enabled=entry.enabled,
                state="offered" if entry.offered else f"hidden: {entry.hidden_reason}",
                detail="\n".join(detail),
            )
        )
    return rows


def _layer_file(context: "ExtensionContext", layer: Layer) -> Path:
    if layer not in WRITABLE_LAYERS:
        raise KairoxError(
            f"Kairox writes only the user, project and local layers, not {layer}", hint="choose user, project or local"
        )
    return context.resolved.layer_file(layer)


def skill_file(context: "ExtensionContext", layer: Layer = Layer.USER) -> Path:
    """The file a skill toggle of ``layer`` writes."""
    return _layer_file(context, layer)


def toggle_skill(context: "ExtensionContext", name: str, enabled: bool, *, layer: Layer = Layer.USER) -> Path:
    """``[skills.entries."<name>"] enabled`` in the ``layer`` file; the running session offers or hides it now."""
    from kairox.skills import write_enabled

    known = {e.skill.qualified_name for e in context.skills.entries(include_shadowed=True)}
    if name not in known:
        raise KairoxError(f"no skill named {name!r}", hint="`kairox skills list` names them")
    file = skill_file(context, layer)
    write_enabled(file, name, enabled)
    context.skills.set_enabled(name, enabled)
    return file


def plugin_rows(context: "ExtensionContext") -> list[ToggleRow]:
    """Each plugin, then each of its contributions (``plugin/kind:name``)."""
    rows = []
    for plugin in context.plugins.plugins:
        compat = (
            "compatible"
            if plugin.compatibility.compatible
            else "incompatible: " + "; ".join(plugin.compatibility.reasons)
        )
        detail = (
            f"{plugin.name} {plugin.manifest.version or ''}\n{plugin.root}\n"
            f"origin {plugin.origin}, trust {plugin.trust}\n{compat}"
        )
        rows.append(
            ToggleRow(
                key=plugin.name,
                label=plugin.name,
                enabled=plugin.enabled,
                state="active"
                if plugin.enabled and plugin.compatibility.compatible
                else plugin.disabled_reason or ("disabled" if not plugin.enabled else "inactive"),
                detail=detail,
            )
        )
        for item in plugin.contributions():
            rows.append(
                ToggleRow(
                    key=f"{plugin.name}/{item.key}",
                    label=f"  {item.key}",
                    enabled=item.enabled,
                    state="on" if item.enabled else "off",
                    detail="\n".join(
                        x for x in (f"{item.key} of plugin {plugin.name}", item.path or "", item.detail or "") if x
                    ),
                )
            )
    return rows


def toggle_plugin(context: "ExtensionContext", key: str, enabled: bool, *, layer: Layer = Layer.USER) -> Path:
    """A plugin (``name``) or one contribution (``name/kind:item``) on or off in the ``layer`` file; it applies
    from the next session (a plugin's contributions are routed when the context is built)."""
    from kairox.plugins import set_contribution_enabled, set_plugin_enabled

    plugin, _, contribution = key.partition("/")
    if plugin not in {p.name for p in context.plugins.plugins}:
        raise KairoxError(f"no plugin named {plugin!r}", hint="`kairox plugins list` names them")
    file = _layer_file(context, layer)

    def write() -> None:
        if contribution:
            set_contribution_enabled(file, plugin, contribution, enabled)
        else:
            set_plugin_enabled(file, plugin, enabled)

    write_own(context.resolved, file, join_key(("plugins", "entries", plugin)), write)
    return file


def set_plugin_folder(context: "ExtensionContext", name: str, path: str | None, *, layer: Layer = Layer.USER) -> Path:
    """Load plugin ``name`` from another folder (``[plugins.entries.NAME] path``), or from its own again with
    ``None``; it applies from the next session."""
    from kairox.plugins import set_plugin_path

    if name not in {p.name for p in context.plugins.plugins}:
        raise KairoxError(f"no plugin named {name!r}", hint="`kairox plugins list` names them")
    if path is not None and not Path(path).expanduser().is_dir():
        raise KairoxError(f"{path} is not a folder", hint="give the folder that holds the plugin's manifest")
    file = _layer_file(context, layer)
    write_own(context.resolved, file, join_key(("plugins", "entries", name)), lambda: set_plugin_path(file, name, path))
    return file


def agent_rows(context: "ExtensionContext") -> list[ToggleRow]:
    """Every agent a ``task`` call can start, with where it comes from and what it shadows."""
    return [
        ToggleRow(
            key=a.name,
            label=f"[{a.source}] {a.name}",
            enabled=a.enabled,
            state="offered" if a.enabled else "off",
            detail="\n".join([f"{a.name} [{a.source}]", str(a.path or ""), "", a.description]),
        )
        for a in context.agents.agents.values()
    ]


def toggle_agent(context: "ExtensionContext", name: str, enabled: bool, *, layer: Layer = Layer.USER) -> Path:
    """``[agent.subagents."<name>"] enabled`` in the ``layer`` file; the running session offers or hides it now."""
    from kairox.config import set_value

    agent = context.agents.get(name)
    if agent is None:
        raise KairoxError(f"no agent named {name!r}", hint="`kairox agents list` names them")
    file = _layer_file(context, layer)
    key = ("agent", "subagents", name)
    write_own(context.resolved, file, join_key(key), lambda: set_value(file, join_key((*key, "enabled")), enabled))
    context.agents.agents[name] = replace(agent, enabled=enabled)
    return file
