"""``kairox plugins list | inspect | enable | disable | install | update | uninstall | validate | marketplace``
(P8) and ``kairox hooks list | approve``."""

import sys
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from kairox.cli._common import ExitCode, JsonOption, err, fail, out, out_json, report_diagnostics, state

if TYPE_CHECKING:
    from kairox.config import ResolvedConfig
    from kairox.hooks import HookRegistry
    from kairox.plugins import InstallResult, Marketplaces, Plugin, PluginSet
    from kairox.policy import ApprovalAnswer, ApprovalRequest

plugins_app = typer.Typer(help="List, inspect, enable, install and validate plugins.", no_args_is_help=True)
marketplace_app = typer.Typer(help="Add and list plugin marketplaces.", no_args_is_help=True)
plugins_app.add_typer(marketplace_app, name="marketplace")
hooks_app = typer.Typer(help="List and approve hooks.", no_args_is_help=True)


# --- shared --------------------------------------------------------------------------------------------------


def _discover(ctx: typer.Context) -> tuple["ResolvedConfig", "PluginSet"]:
    from kairox.plugins import discover_from_resolved

    resolved = state(ctx).resolve()
    return resolved, discover_from_resolved(resolved)


def _config_file(resolved: "ResolvedConfig") -> Path:
    from kairox.config import Layer

    return resolved.layer_file(Layer.USER)


def _find(plugins: "PluginSet", name: str) -> "Plugin":
    from kairox._util._names import suggest

    plugin = plugins.get(name)
    if plugin is None:
        close = suggest(name, [p.name for p in plugins.plugins])
        hint = f"; did you mean {close!r}?" if close else "; `kairox plugins list` shows the plugins"
        fail(f"no plugin named {name!r}{hint}", ExitCode.NOT_FOUND)
    return plugin


def _state_word(plugin: "Plugin") -> str:
    if not plugin.compatibility.compatible:
        return "incompatible"
    return "enabled" if plugin.enabled else "disabled"


class _StderrProgress:
    """Progress on stderr: a bar redrawn in place on a terminal; elsewhere (a pipe, a log) one plain line per
    step, written when the step is done."""

    def __init__(self) -> None:
        self.tty = sys.stderr.isatty()
        self.finished: set[str] = set()

    def __call__(self, what: str, done: int, total: int) -> None:
        if self.tty:
            width = 24
            filled = width if total <= 0 else int(width * done / total)
            sys.stderr.write(
                f"\r{what} [{'#' * filled}{'.' * (width - filled)}] {done}/{total}" + ("\n" if done >= total else "")
            )
            sys.stderr.flush()
        elif done >= total and what not in self.finished:
            self.finished.add(what)
            err(f"{what}: done ({total} of {total})")


def _marketplaces(resolved: "ResolvedConfig", *, progress: bool = False) -> "Marketplaces":
    from kairox.plugins import Marketplaces

    sources = {name: m.source for name, m in resolved.config.plugins.marketplaces.items()}
    return Marketplaces(
        resolved.home, _config_file(resolved), sources, progress=_StderrProgress() if progress else None
    )


# --- plugins -------------------------------------------------------------------------------------------------


@plugins_app.command("list")
def list_plugins(ctx: typer.Context, as_json: JsonOption = False) -> None:
    """Every plugin found, enabled or not, with where it comes from and what it brings."""
    from kairox.plugins import PluginManifestView, diagnostic_json

    resolved, plugins = _discover(ctx)
    views = [PluginManifestView.of(p) for p in plugins.plugins]
    if as_json:
        out_json(
            {"plugins": [v.to_json() for v in views], "diagnostics": [diagnostic_json(d) for d in plugins.diagnostics]}
        )
        return
    from kairox.cli._notices import ShownWarnings, held_back_note

    shown, held = ShownWarnings(resolved.home).split(plugins.diagnostics)
    report_diagnostics(shown)
    if held:
        err(held_back_note(held))
    if not views:
        err("no plugins found (install one with `kairox plugins install NAME`, or add folders to [plugins] paths)")
        return
    width = max(len(v.name) for v in views)
    for plugin, view in zip(plugins.plugins, views, strict=True):
        counts = Counter(str(contribution.kind) for contribution in view.contributions)
        summary = ", ".join(f"{n} {k}" for k, n in counts.items()) or "nothing"
        out(
            f"{view.name:<{width}}  {view.version or '-':<10}  "
            f"{_state_word(plugin):<12}  {view.origin:<9}  {view.trust:<9}  {summary}"
        )
        if view.disabled_reason and not plugin.active:
            out(f"{'':<{width}}  ({view.disabled_reason})")


@plugins_app.command("inspect")
def inspect(
    ctx: typer.Context, name: Annotated[str, typer.Argument(help="The plugin's name.")], as_json: JsonOption = False
) -> None:
    """A plugin's manifest, permissions, compatibility and every contribution."""
    from kairox.plugins import PluginManifestView, diagnostic_json

    _, plugins = _discover(ctx)
    view = PluginManifestView.of(_find(plugins, name))
    if as_json:
        data = view.to_json()
        data["contributions"] = [c.to_json() for c in view.contributions]
        data["diagnostics"] = [diagnostic_json(d) for d in view.diagnostics]
        out_json(data)
        return
    out(f"{view.name} {view.version or ''}".rstrip())
    if view.description:
        out(f"  {view.description}")
    out(f"  path:        {view.path}")
    out(f"  manifest:    {view.manifest or '(none: ' + view.manifest_format + ')'}")
    for other in view.other_manifests:
        out(f"  also:        {other}")
    out(f"  origin:      {view.origin}" + (f" ({view.marketplace})" if view.marketplace else ""))
    out(f"  trust:       {view.trust}")
    out(
        f"  state:       {'active' if view.active else 'inactive'}"
        + (f" ({view.disabled_reason})" if view.disabled_reason else "")
    )
    verdict = view.compatibility
    out(f"  compatible:  {'yes' if verdict.compatible else 'no: ' + '; '.join(verdict.reasons)}")
    if view.permissions:
        out(f"  permissions: {view.permissions}")
    for contribution in view.contributions:
        mark = "on " if contribution.enabled else "off"
        out(f"  [{mark}] {contribution.key}" + (f"  {contribution.detail}" if contribution.detail else ""))
    report_diagnostics(view.diagnostics)


@plugins_app.command("enable")
def enable(ctx: typer.Context, name: Annotated[str, typer.Argument(help="The plugin's name.")]) -> None:
    """Enable a plugin (in the user layer)."""
    from kairox.plugins import set_plugin_enabled

    resolved, plugins = _discover(ctx)
    plugin = _find(plugins, name)
    set_plugin_enabled(_config_file(resolved), plugin.name, True)
    err(f"enabled plugin {plugin.name}")
    if not plugin.compatibility.compatible:
        err(f"warning: it stays inactive: incompatible: {'; '.join(plugin.compatibility.reasons)}")


@plugins_app.command("disable")
def disable(
    ctx: typer.Context,
    name: Annotated[str, typer.Argument(help="The plugin's name.")],
    contribution: Annotated[
        str | None, typer.Option("--contribution", help="Disable only this KIND:NAME (e.g. skill:pdf).")
    ] = None,
) -> None:
    """Disable a plugin, or one of its contributions."""
    from kairox._util._names import suggest
    from kairox.plugins import PluginSettingsError, parse_contribution, set_contribution_enabled, set_plugin_enabled

    resolved, plugins = _discover(ctx)
    plugin = _find(plugins, name)
    if contribution is None:
        set_plugin_enabled(_config_file(resolved), plugin.name, False)
        err(f"disabled plugin {plugin.name}")
        return
    try:
        kind, item = parse_contribution(contribution)
    except PluginSettingsError as exc:
        fail(str(exc), ExitCode.USAGE)
    keys = [c.key for c in plugin.contributions()]
    key = f"{kind}:{item}"
    if key not in keys:
        close = suggest(key, keys)
        fail(
            f"plugin {plugin.name} has no contribution {key!r}" + (f"; did you mean {close!r}?" if close else ""),
            ExitCode.NOT_FOUND,
        )
    changed = set_contribution_enabled(_config_file(resolved), plugin.name, key, False)
    err(f"disabled {key} of plugin {plugin.name}" if changed else f"{key} of plugin {plugin.name} was already disabled")


def _is_source(spec: str) -> bool:
    """A folder, a git URL or an archive URL, rather than ``NAME[@MARKETPLACE]`` (names hold no ``/`` or ``:``)."""
    return "/" in spec or ":" in spec or spec.startswith((".", "~")) or Path(spec).is_dir()


class _NamedPluginInstallApprover:
    """``plugins install SOURCE --yes`` names the install on the command line: that approves writing this plugin's
    folder into Kairox's own plugin store, once. Anything else asked goes to ``--yes``'s usual answer, within what
    an answer from no person may approve (``unattended_refusal``)."""

    def __init__(self, store: Path) -> None:
        self.store = store

    async def request_approval(self, request: "ApprovalRequest") -> "ApprovalAnswer":
        from kairox.cli._approver import YesApprover
        from kairox.policy import ApprovalAnswer, ApprovalScope
        from kairox.runtime import PLUGIN_INSTALL_SPEC

        path = Path(str(request.arguments.get("path", "")))
        if request.tool == PLUGIN_INSTALL_SPEC.name and path.is_relative_to(self.store) and path != self.store:
            err(
                f"approved by --yes: install {request.arguments.get('plugin')}"
                f" ({request.arguments.get('brings')}) into {path}"
            )
            return ApprovalAnswer(
                approved=True, scope=ApprovalScope.ONCE, reason="approved by --yes of kairox plugins install"
            )
        return await YesApprover().request_approval(request)


@plugins_app.command("install")
def install(
    ctx: typer.Context,
    spec: Annotated[
        str,
        typer.Argument(
            help=(
                "NAME or NAME@MARKETPLACE; or a plugin folder, a git "
                "URL, or a .zip/.tar.gz URL (optionally #sub/folder)."
            )
        ),
    ],
    yes: Annotated[
        bool,
        typer.Option(
            "--yes",
            "-y",
            help=(
                "Answer the install's question with yes (a deny rule still "
                "denies; hooks still wait for `kairox hooks approve`)."
            ),
        ),
    ] = False,
) -> None:
    """Install a plugin from a configured marketplace, a folder or a git URL; incompatible plugins install disabled.

    The plugin is loaded and checked first, wherever it comes from, then the gate asks before it is written (at a
    terminal you answer; elsewhere pass --yes)."""
    from kairox.plugins import MarketplaceError, PluginInstallDeniedError

    resolved = state(ctx).resolve()
    markets = _marketplaces(resolved, progress=True)
    try:
        result = _install(ctx, markets, spec, yes=yes)
    except PluginInstallDeniedError as exc:
        fail(str(exc), ExitCode.DENIED)
    except MarketplaceError as exc:
        fail(str(exc))
    report_diagnostics(result.diagnostics)
    record = result.record
    origin = record.marketplace or record.source
    out(f"installed {record.name} {record.version} from {origin} into {record.path}")
    if not result.enabled:
        err(f"warning: installed disabled: {record.disabled_reason}")
    hooks = [h for h in result.plugin.hooks if h.trust != "local"]
    if hooks and result.enabled:
        err(
            f"note: its {len(hooks)} hook(s) run only once approved: `kairox "
            "hooks list` shows them, `kairox hooks approve NAME` approves one"
        )


def _install(ctx: typer.Context, markets: "Marketplaces", spec: str, *, yes: bool) -> "InstallResult":
    """One question for every source: a folder, a URL or a registered marketplace's plugin is loaded and checked,
    then the gate asks (at a terminal you answer; elsewhere --yes names this install)."""
    import anyio

    from kairox.cli._approver import command_line_approver
    from kairox.runtime import plugin_install_gate

    cli = state(ctx)
    resolved = cli.resolve()
    approver = (
        _NamedPluginInstallApprover(resolved.home / "plugins")
        if yes
        else command_line_approver(False, hint="run it again with --yes to approve the install")
    )
    confirm = plugin_install_gate(resolved, approver=approver, events=cli.events())
    if _is_source(spec):
        return anyio.run(lambda: markets.install_source(spec, confirm=confirm))
    name, _, market = spec.partition("@")
    return markets.install(name, market or None, confirm=lambda request: anyio.run(confirm, request))


@plugins_app.command("update")
def update(
    ctx: typer.Context,
    name: Annotated[str | None, typer.Argument(help="One plugin; all installed ones when left out.")] = None,
) -> None:
    """Fetch the marketplaces again and reinstall plugins whose version changed; settings are kept."""
    from kairox.plugins import MarketplaceError

    resolved = state(ctx).resolve()
    try:
        results = _marketplaces(resolved, progress=True).update(name)
    except MarketplaceError as exc:
        fail(str(exc))
    for result in results:
        record = result.record
        if result.changed:
            out(f"updated {record.name} {result.previous_version} -> {record.version}")
        else:
            out(f"{record.name} {record.version} is up to date")


@plugins_app.command("uninstall")
def uninstall(
    ctx: typer.Context,
    name: Annotated[str, typer.Argument(help="The plugin's name.")],
    yes: Annotated[bool, typer.Option("--yes", "-y", help="Uninstall without asking.")] = False,
) -> None:
    """Remove an installed plugin's files and its settings (at a terminal you are asked first; elsewhere pass
    --yes, as for install)."""
    from kairox.plugins import MarketplaceError

    resolved = state(ctx).resolve()
    if not yes and not (sys.stdin.isatty() and typer.confirm(f"Uninstall plugin {name}?", default=False, err=True)):
        fail(f"{name} was not uninstalled" + ("" if sys.stdin.isatty() else ": pass --yes"), ExitCode.DENIED)
    try:
        record = _marketplaces(resolved).uninstall(name)
    except MarketplaceError as exc:
        fail(str(exc), ExitCode.NOT_FOUND)
    out(f"uninstalled {record.name} {record.version}")


@plugins_app.command("validate")
def validate(
    ctx: typer.Context,
    path: Annotated[Path, typer.Argument(help="A plugin folder, or a tree holding plugins and marketplaces.")],
    as_json: JsonOption = False,
) -> None:
    """Load every plugin under PATH and report each problem with its file. Exit 1 when there are errors."""
    from kairox.errors import Severity
    from kairox.plugins import PluginManifestView, diagnostic_json, validate_tree

    checked = validate_tree(path)
    errors = [d for d in checked.diagnostics if d.severity is Severity.ERROR]
    if as_json:
        out_json(
            {
                "plugins": [PluginManifestView.of(p).to_json() for p in checked.plugins],
                "diagnostics": [diagnostic_json(d) for d in checked.diagnostics],
            }
        )
    else:
        for plugin in checked.plugins:
            view = PluginManifestView.of(plugin)
            out(f"{view.name} ({view.manifest or view.manifest_format})")
            for other in view.other_manifests:
                out(f"  also: {other}")
            for contribution in view.contributions:
                out(f"  {contribution.key}")
        report_diagnostics(checked.diagnostics, verbose=True)
        err(f"{len(checked.plugins)} plugin(s), {len(checked.diagnostics)} diagnostic(s), {len(errors)} error(s)")
    if errors:
        raise typer.Exit(int(ExitCode.FAILURE))


@marketplace_app.command("add")
def marketplace_add(
    ctx: typer.Context,
    source: Annotated[str, typer.Argument(help="A folder holding .claude-plugin/marketplace.json, or a git URL.")],
) -> None:
    """Register a marketplace (in the user layer)."""
    from kairox.plugins import MarketplaceError

    resolved = state(ctx).resolve()
    try:
        market, problems = _marketplaces(resolved, progress=True).add(source)
    except MarketplaceError as exc:
        fail(str(exc))
    report_diagnostics(problems)
    out(f"added marketplace {market.name} ({len(market.entries)} plugins)")


@marketplace_app.command("list")
def marketplace_list(ctx: typer.Context, as_json: JsonOption = False) -> None:
    """The configured marketplaces and how many plugins each lists."""
    from kairox.plugins import MarketplaceError

    resolved = state(ctx).resolve()
    markets = _marketplaces(resolved)
    rows: list[dict[str, Any]] = []
    for name, source in sorted(markets.sources.items()):
        try:
            market, problems = markets.load(name)
            rows.append({"name": name, "source": source, "plugins": [e.name for e in market.entries], "error": None})
            report_diagnostics(problems)
        except MarketplaceError as exc:
            rows.append({"name": name, "source": source, "plugins": [], "error": str(exc)})
    if as_json:
        out_json({"marketplaces": rows})
        return
    if not rows:
        err("no marketplaces (add one with `kairox plugins marketplace add PATH|URL`)")
    for row in rows:
        tail = f"error: {row['error']}" if row["error"] else f"{len(row['plugins'])} plugins"
        out(f"{row['name']}  {row['source']}  {tail}")


# --- hooks ---------------------------------------------------------------------------------------------------


def _hooks(ctx: typer.Context) -> "HookRegistry":
    from kairox.hooks import HookApprovalStore, HookRegistry
    from kairox.plugins import discover_from_resolved, route_plugins

    resolved = state(ctx).resolve()
    plugins = discover_from_resolved(resolved)
    routing = route_plugins(plugins.plugins)
    registry = HookRegistry.from_config(
        resolved.config.hooks, routing.hooks, workspace=resolved.workspace, approvals=HookApprovalStore(resolved.home)
    )
    registry.diagnostics += [d for d in plugins.diagnostics if d.kind == "hook"]
    return registry


@hooks_app.command("list")
def list_hooks(ctx: typer.Context, as_json: JsonOption = False) -> None:
    """Every hook of [hooks] and of the active plugins, with its event, matcher and approval state."""
    from kairox.plugins import diagnostic_json

    registry = _hooks(ctx)
    rows = []
    for hook in registry.hooks:
        data = hook.to_json()
        data["approved"] = (
            None if not hook.needs_approval else bool(registry.approvals and registry.approvals.is_approved(hook))
        )
        rows.append(data)
    # hooks an untrusted project declares do not run; say so rather than "no hooks"
    pending = [
        item.to_json() for item in state(ctx).resolve().pending if item.key == "hooks" or item.key.startswith("hooks.")
    ]
    if as_json:
        out_json({"hooks": rows, "pending": pending, "diagnostics": [diagnostic_json(d) for d in registry.diagnostics]})
        return
    report_diagnostics(registry.diagnostics)
    for item in pending:
        where = f"{item['file']}:{item['line']}" if item.get("line") else str(item.get("file"))
        err(f"pending: {item['key']} ({where}) waits for `kairox trust`")
    if not rows and not pending:
        err("no hooks (add [[hooks.pre_tool_use]] tables to kairox.toml, or enable a plugin with hooks)")
    for row in rows:
        approval = "" if row["approved"] is None else ("  approved" if row["approved"] else "  needs approval")
        out(f"{row['name']}  {row['event']}  {row['matcher'] or '*'}  {row['command']}{approval}")


@hooks_app.command("approve")
def approve_hook(
    ctx: typer.Context, name: Annotated[str, typer.Argument(help="The hook's name, as `kairox hooks list` shows it.")]
) -> None:
    """Approve a plugin hook as it is now; a change to its command or scripts asks again."""
    registry = _hooks(ctx)
    hook = next((h for h in registry.hooks if h.name == name), None)
    if hook is None:
        fail(f"no hook named {name!r}; `kairox hooks list` shows them", ExitCode.NOT_FOUND)
    assert registry.approvals is not None
    registry.approvals.approve(hook)
    err(f"approved hook {name}: {hook.command}")
