"""``kairox mcp catalog list | search | show | check | install | sources | refresh`` (M9, M11)."""

import sys
from typing import TYPE_CHECKING, Annotated, Any

import typer

from kairox.cli._common import CliState, ExitCode, JsonOption, err, fail, out, out_json, state

if TYPE_CHECKING:
    from collections.abc import Sequence

    from kairox.catalog import Catalog, CatalogEntry, InstallPlan, PreflightCheck
    from kairox.config import ResolvedConfig
    from kairox.policy import ApprovalAnswer, ApprovalRequest
    from kairox.runtime import InstallStep

catalog_app = typer.Typer(
    help="The MCP server catalog: browse, check and install servers from the built-in list and remote sources.",
    no_args_is_help=True,
)

SourceOption = Annotated[
    str | None, typer.Option("--source", help="Only entries of this source (builtin or a configured name).")
]
PackageOption = Annotated[
    str | None, typer.Option("--package", help="Which package to use: npm, pypi, oci, a package identifier, or remote.")
]
LauncherOption = Annotated[
    str | None,
    typer.Option(
        "--launcher",
        help="How a PyPI package runs: uvx, pipx, or path (its executable already on PATH); default: the first found.",
    ),
]
NameOption = Annotated[
    str | None, typer.Option("--name", help="Server name in [mcp_servers] (default: the last part of the id).")
]
EntryArgument = Annotated[
    str, typer.Argument(metavar="ID", help="Entry id, package name (@scope/name) or short name (filesystem).")
]


def _load(cli: CliState, *, refresh: bool = False) -> "tuple[ResolvedConfig, Catalog]":
    from kairox.catalog import SourceStatus, catalog_sources, load_catalog

    resolved = cli.resolve()
    sources, held = catalog_sources(resolved)
    remote = [s for s in sources if s.kind != "builtin"]
    if remote and (refresh or sys.stderr.isatty()):
        err(f"loading {len(remote)} catalog source(s)…")
    catalog = load_catalog(sources, refresh=refresh, held=held)
    for diagnostic in catalog.diagnostics:
        err(str(diagnostic))
    for source in catalog.sources:
        if source.status in (SourceStatus.STALE, SourceStatus.FAILED, SourceStatus.PENDING_TRUST):
            err(f"catalog source {source.name!r}: {source.summary()}")
    return resolved, catalog


def _entry(catalog: "Catalog", query: str) -> "CatalogEntry":
    found = catalog.find(query)
    if not found:
        close = catalog.suggestion(query)
        hint = f"; did you mean {close!r}?" if close else "; `kairox mcp catalog search WORDS` finds entries"
        fail(f"no catalog entry {query!r}{hint}", ExitCode.NOT_FOUND)
    if len(found) > 1:
        fail(
            f"{query!r} names {len(found)} entries ({', '.join(e.id for e in found)}); give the whole id",
            ExitCode.USAGE,
        )
    return found[0]


def _plan(entry: "CatalogEntry", package: str | None, name: str | None, launcher: str | None = None) -> "InstallPlan":
    from kairox.catalog import CatalogFormatError, CatalogPlanError, plan_install

    try:
        return plan_install(entry, package=package, name=name, launcher=launcher)
    except CatalogPlanError as exc:
        fail(str(exc), ExitCode.USAGE)
    except CatalogFormatError as exc:
        fail(
            f"catalog entry {entry.id} of source {entry.source!r} is malformed: {exc.where}: {exc.reason}",
            ExitCode.FAILURE,
        )


def _row(entry: "CatalogEntry") -> str:
    title = f"{entry.title}: " if entry.title else ""
    return f"{entry.id}  {entry.version}  [{entry.source}]  {title}{entry.description}"


def _listing(entries: "list[CatalogEntry]", catalog: "Catalog", as_json: bool, empty: str) -> None:
    if as_json:
        out_json({"entries": [e.to_json() for e in entries], "sources": [s.to_json() for s in catalog.sources]})
        return
    if not entries:
        out(empty)
        return
    for entry in entries:
        out(_row(entry))


@catalog_app.command("list")
def list_entries(ctx: typer.Context, source: SourceOption = None, as_json: JsonOption = False) -> None:
    """Every entry of every source (a later source overrides an earlier one by id); nothing is started."""
    _, catalog = _load(state(ctx))
    if source is not None and source not in {s.name for s in catalog.sources}:
        names = ", ".join(s.name for s in catalog.sources)
        fail(f"no catalog source {source!r}; the sources are {names}", ExitCode.NOT_FOUND)
    _listing(catalog.listed(source), catalog, as_json, "no entries")


@catalog_app.command("search")
def search(
    ctx: typer.Context,
    query: Annotated[
        str, typer.Argument(help="Words that must all occur in the id, title, description, tags or package name.")
    ],
    source: SourceOption = None,
    as_json: JsonOption = False,
) -> None:
    """Entries matching every word of QUERY."""
    _, catalog = _load(state(ctx))
    _listing(catalog.search(query, source=source), catalog, as_json, f"no entry matches {query!r}")


def _check_lines(checks: "Sequence[PreflightCheck]") -> list[str]:
    lines = []
    for check in checks:
        mark = "ok" if check.ok else ("MISSING" if check.blocking else "unset")
        lines.append(f"  [{mark}] {check.kind} {check.name}: {check.detail}")
        if not check.ok and check.fix:
            lines.append(f"         fix: {check.fix}")
    return lines


def _toml(plan: "InstallPlan") -> str:
    import tomlkit

    return tomlkit.dumps({"mcp_servers": {plan.name: plan.table}}).strip()


@catalog_app.command("show")
def show(
    ctx: typer.Context,
    entry_id: EntryArgument,
    package: PackageOption = None,
    launcher: LauncherOption = None,
    name: NameOption = None,
    as_json: JsonOption = False,
) -> None:
    """One entry: packages, requirements (present or missing), variables, the entry it would write, known tools."""
    from kairox.catalog import (
        CatalogCache,
        CatalogFormatError,
        CatalogPlanError,
        plan_install,
        preflight,
        requirements_text,
    )

    resolved, catalog = _load(state(ctx))
    entry = _entry(catalog, entry_id)
    try:
        offers = requirements_text(entry)
    except CatalogFormatError as exc:
        fail(
            f"catalog entry {entry.id} of source {entry.source!r} is malformed: {exc.where}: {exc.reason}",
            ExitCode.FAILURE,
        )
    plan: InstallPlan | None
    try:
        plan = plan_install(entry, package=package, name=name, launcher=launcher)
    except CatalogPlanError as exc:
        plan, problem = None, str(exc)
    report = preflight(plan) if plan is not None else None
    tools = CatalogCache(resolved.home).read_tools(entry.id, entry.version)
    if as_json:
        out_json(
            {
                "entry": entry.to_json(),
                "server_json": entry.raw,
                "overridden_sources": list(catalog.overridden.get(entry.id, ())),
                "requirements": offers,
                "plan": plan.to_json() if plan else None,
                "preflight": report.to_json() if report else None,
                "tools": tools,
            }
        )
        return
    out(f"{entry.id}  {entry.version}" + (f"  ({entry.title})" if entry.title else ""))
    out(f"  {entry.description}")
    shadowed = catalog.overridden.get(entry.id)
    out(f"  source: {entry.source}" + (f" (overrides {', '.join(shadowed)})" if shadowed else ""))
    for label, value in (("website", entry.website_url), ("repository", (entry.repository or {}).get("url"))):
        if value:
            out(f"  {label}: {value}")
    if entry.tags:
        out(f"  tags: {', '.join(entry.tags)}")
    out("  offers:")
    for row in offers:
        out(f"    {row}")
    if plan is None or report is None:
        out(f"  cannot be installed: {problem}")
        return
    out(f"  install uses {plan.choice}; requirements on this machine:")
    for line in _check_lines(report.checks):
        out("  " + line)
    out(f"  command: {plan.command_line}")
    out("  entry it would write:")
    out("\n".join("    " + line for line in _toml(plan).splitlines()))
    if tools is not None:
        out(f"  tools (from an earlier dry run): {len(tools)}")
        for tool in tools:
            first = str(tool.get("description") or "").strip().splitlines()[0] if tool.get("description") else ""
            out(f"    {tool.get('name')}  ~{tool.get('tokens')} tokens  {first}")
    else:
        out("  tools: not known yet (install runs the server once and lists them)")


@catalog_app.command("check")
def check(
    ctx: typer.Context,
    entry_id: EntryArgument,
    package: PackageOption = None,
    launcher: LauncherOption = None,
    as_json: JsonOption = False,
) -> None:
    """Pre-flight: are the runtimes there and new enough, are the required variables set, does the platform fit?"""
    from kairox.catalog import preflight

    _, catalog = _load(state(ctx))
    plan = _plan(_entry(catalog, entry_id), package, None, launcher)
    report = preflight(plan)
    if as_json:
        out_json({**report.to_json(), "command": plan.command_line})
    else:
        out(f"{plan.entry.id} ({plan.choice}): {'ready to install' if report.ok else 'not ready'}")
        for line in _check_lines(report.checks):
            out(line)
        out(f"  command: {plan.command_line}")
    if not report.ok:
        raise typer.Exit(int(ExitCode.FAILURE))


class _NamedInstallApprover:
    """``install ID --yes`` names the write exactly: that is the user's approval of it, and of nothing else."""

    async def request_approval(self, request: "ApprovalRequest") -> "ApprovalAnswer":
        from kairox.policy import ApprovalAnswer, ApprovalScope
        from kairox.runtime import INSTALL_SPEC

        if request.tool == INSTALL_SPEC.name:
            return ApprovalAnswer(
                approved=True, scope=ApprovalScope.ONCE, reason="approved by --yes of kairox mcp catalog install"
            )
        return ApprovalAnswer.deny("only the install named on the command line is approved")


@catalog_app.command("install")
def install(
    ctx: typer.Context,
    entry_id: EntryArgument,
    layer: Annotated[str, typer.Option("--layer", help="user, project or local.")] = "user",
    name: NameOption = None,
    package: PackageOption = None,
    launcher: LauncherOption = None,
    yes: Annotated[
        bool, typer.Option("--yes", "-y", help="Approve the write the gate asks about (deny rules still deny).")
    ] = False,
    require_ready: Annotated[
        bool, typer.Option("--require-ready", help="Write nothing when the dry run fails (default: write it disabled).")
    ] = False,
    no_prefetch: Annotated[
        bool, typer.Option("--no-prefetch", help="Do not fetch the package before the dry run.")
    ] = False,
    as_json: JsonOption = False,
) -> None:
    """Check, ask, fetch, dry-run, write: the server entry pinned
    to the exact version, secrets as ${VAR} or env_vars."""
    import anyio

    from kairox.catalog import preflight
    from kairox.cli._approver import command_line_approver
    from kairox.config import Layer
    from kairox.runtime import InstallOptions, InstallOutcome, install_catalog_entry

    if layer not in (Layer.USER, Layer.PROJECT, Layer.LOCAL):
        fail(f"unknown layer {layer!r}; use user, project or local", ExitCode.USAGE)
    chosen = Layer(layer)
    cli = state(ctx)
    resolved, catalog = _load(cli)
    plan = _plan(_entry(catalog, entry_id), package, name, launcher)
    report = preflight(plan)
    file = resolved.layer_file(chosen)
    err(f"installing {plan.entry.id} {plan.entry.version} ({plan.choice}) as [mcp_servers.{plan.name}] in {file}")
    err(f"command: {plan.command_line}")
    options = InstallOptions(layer=chosen, require_ready=require_ready, prefetch=not no_prefetch)
    approver = (
        _NamedInstallApprover()
        if yes
        else command_line_approver(False, hint="run the install again with --yes to approve the write")
    )

    ticking = sys.stderr.isatty()

    def tick(seconds: float) -> None:
        sys.stderr.write(f"\r  … {seconds:.0f} s")
        sys.stderr.flush()

    def progress(step: "InstallStep") -> None:
        # a pre-flight check as `catalog check` shows it; every other step as the operation words it
        lines = _check_lines([step.check]) if step.check is not None else [step.message]
        for line in lines:
            err(("\r" if ticking else "") + line)

    async def run() -> Any:
        return await install_catalog_entry(
            resolved,
            plan,
            approver=approver,
            options=options,
            events=cli.events(),
            progress=progress,
            tick=tick if ticking else None,
            report=report,
        )

    result = anyio.run(run)
    if as_json:
        out_json(result.to_json())
    else:
        _print_install(result)
    codes = {
        InstallOutcome.INSTALLED: ExitCode.OK,
        InstallOutcome.DENIED: ExitCode.DENIED,
        InstallOutcome.EXISTS: ExitCode.USAGE,
    }
    code = codes.get(result.outcome, ExitCode.FAILURE)
    if code is not ExitCode.OK:
        if not as_json:
            err(f"kairox: {result.outcome}: {result.reason}")
        raise typer.Exit(int(code))


def _print_install(result: Any) -> None:
    dry = result.dry_run
    if dry is not None and dry.ready:
        out(f"dry run: ready in {dry.duration_sec} s, {len(dry.tools)} tools, ~{dry.tokens} tokens of tool definitions")
        for tool in dry.tools:
            summary = (tool.description or "").strip().splitlines()
            out(f"  {tool.name}  ~{tool.tokens} tokens  {summary[0] if summary else ''}")
    elif dry is not None:
        err(f"dry run failed: {dry.error}")
        if dry.stderr_tail.strip():
            err("  stderr:\n" + "\n".join("    " + row for row in dry.stderr_tail.rstrip().splitlines()[-10:]))
    if result.written:
        state_ = "enabled" if result.outcome == "installed" else "disabled"
        out(f"wrote [mcp_servers.{result.plan.name}] ({state_}) to {result.file}")
    else:
        out(f"nothing written to {result.file}")
    for note in result.notes:
        err(f"note: {note}")


def _sources(cli: CliState, refresh: bool, as_json: bool) -> "Catalog":
    _, catalog = _load(cli, refresh=refresh)
    if as_json:
        out_json({"sources": [s.to_json() for s in catalog.sources], "entries": len(catalog.entries)})
        return catalog
    for source in catalog.sources:
        where = f"  ({source.where})" if source.where else ""
        url = f" {source.url}" if source.url else ""
        hidden = f", {source.hidden} hidden (not active)" if source.hidden else ""
        out(f"{source.name}  {source.kind}{url}: {source.entries} entries{hidden}; {source.summary()}{where}")
    return catalog


@catalog_app.command("sources")
def sources(ctx: typer.Context, as_json: JsonOption = False) -> None:
    """Each catalog source: kind, URL, entries, cache age and status (fetched only when its cache is stale)."""
    _sources(state(ctx), False, as_json)


@catalog_app.command("refresh")
def refresh(ctx: typer.Context, as_json: JsonOption = False) -> None:
    """Fetch every remote source now (conditional requests: an unchanged source is not downloaded again)."""
    from kairox.catalog import SourceStatus

    catalog = _sources(state(ctx), True, as_json)
    if any(s.status in (SourceStatus.STALE, SourceStatus.FAILED) for s in catalog.sources):
        raise typer.Exit(int(ExitCode.FAILURE))
