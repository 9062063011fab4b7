"""``kairox skills list | show | match | enable | disable | install | validate`` (S9)."""

import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from kairox.cli._common import ExitCode, JsonOption, err, fail, out, out_json, report_diagnostics, state
from kairox.cli._config_write import WriteYesOption, authorize_config_write, change_text

if TYPE_CHECKING:
    from kairox.config import ResolvedConfig
    from kairox.policy import ApprovalAnswer, ApprovalRequest
    from kairox.runtime import ExtensionContext
    from kairox.skills import SkillRegistry

skills_app = typer.Typer(help="List, match, enable, install and validate skills.", no_args_is_help=True)

ScopeOption = Annotated[str, typer.Option("--scope", help="user or workspace.")]


def _registry(
    ctx: typer.Context, *, plugin_failures: bool = False, mcp: bool = False
) -> tuple["ResolvedConfig", "SkillRegistry"]:
    """The skills of the workspace; with ``plugin_failures``, plugins that could not load are reported on stderr
    (their skills are missing from the list); with ``mcp``, the MCP servers are started for their skills too."""
    from kairox.errors import Severity
    from kairox.runtime import load_plugins, load_skills

    cli = state(ctx)
    resolved = cli.resolve()
    stage = load_plugins(resolved)
    if plugin_failures:
        report_diagnostics([d for d in stage.diagnostics if d.severity is Severity.ERROR])
    if mcp:
        from kairox.cli._runtime import with_context

        async def skills(context: "ExtensionContext") -> "SkillRegistry":
            return context.skills

        return resolved, with_context(cli, skills)
    return resolved, load_skills(resolved, stage.routing, events=cli.events())


def _short(text: str, limit: int = 80) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


@skills_app.command("list")
def list_skills(
    ctx: typer.Context,
    as_json: JsonOption = False,
    show_all: Annotated[
        bool, typer.Option("--all", help="Also list skills shadowed by another of the same name.")
    ] = False,
    mcp: Annotated[bool, typer.Option("--mcp", help="Start the MCP servers and list their skills too.")] = False,
) -> None:
    """Every skill by name, with its scope, state and description."""
    _, registry = _registry(ctx, plugin_failures=True, mcp=mcp)
    if as_json:
        out_json(registry.to_json(include_shadowed=show_all))
        return
    report_diagnostics(registry.diagnostics)
    entries = registry.entries(include_shadowed=show_all)
    if not entries:
        err("no skills found (add some under $KAIROX_HOME/skills or .kairox/skills)")
        return
    width = max(len(e.skill.qualified_name) for e in entries)
    for entry in entries:
        if entry.shadowed_by is not None:
            status = "shadowed"
        elif not entry.enabled:
            status = "disabled"
        elif entry.offered:
            status = "on"
        else:
            status = "hidden"
        out(
            f"{entry.skill.qualified_name:<{width}}  {entry.skill.scope:<9}"
            f"  {status:<8}  {_short(entry.skill.description)}"
        )
        if entry.hidden_reason and entry.enabled and entry.shadowed_by is None:
            out(f"{'':<{width}}  {'':<9}  {'':<8}  ({entry.hidden_reason})")


@skills_app.command("show")
def show(
    ctx: typer.Context, name: Annotated[str, typer.Argument(help="The skill's name.")], as_json: JsonOption = False
) -> None:
    """A skill's settings, arguments, bundled files and body."""
    from kairox.skills import SkillError, argument_schema, bundled_files, read_body

    _, registry = _registry(ctx)
    try:
        entry = registry.require(name)
    except SkillError as exc:
        fail(str(exc), ExitCode.NOT_FOUND)
    skill = entry.skill
    body = read_body(skill)
    files = bundled_files(skill)
    if as_json:
        out_json({**entry.to_json(), "arguments": argument_schema(skill.arguments), "files": files, "body": body})
        return
    out(f"{skill.qualified_name} ({skill.scope}, {skill.format}) {skill.path}")
    out(f"  {skill.description}")
    if entry.hidden_reason:
        out(f"  not offered to the model: {entry.hidden_reason}")
    for shadowed in entry.shadowed:
        out(f"  shadows {shadowed.path} ({shadowed.scope})")
    if skill.keywords:
        out(f"  keywords: {', '.join(skill.keywords)}")
    if skill.tools:
        out(f"  needs tools: {', '.join(skill.tools)}")
    if skill.model:
        out(f"  model: {skill.model}")
    for argument in skill.arguments:
        required = "required" if argument.required else f"default {argument.default!r}"
        out(f"  argument {argument.name} ({argument.type}, {required}): {argument.description}")
    if files:
        out(f"  bundles: {', '.join(files[:20])}" + (f" and {len(files) - 20} more" if len(files) > 20 else ""))
    out("")
    out(body)


@skills_app.command("match")
def match(
    ctx: typer.Context,
    prompt: Annotated[str, typer.Argument(help="The user prompt to match.")],
    limit: Annotated[int, typer.Option("--limit", "-n", help="At most this many skills.")] = 5,
    show_all: Annotated[bool, typer.Option("--all", help="Also match skills the model is not offered.")] = False,
    as_json: JsonOption = False,
) -> None:
    """Which skills fit a prompt, best first, and why."""
    _, registry = _registry(ctx)
    matches = registry.match(prompt, limit=limit, include_hidden=show_all)
    if as_json:
        out_json({"prompt": prompt, "matches": [m.to_json() for m in matches]})
        return
    if not matches:
        err("no skill matched the prompt")
        return
    for rank, found in enumerate(matches, start=1):
        out(f"{rank}. {found.explain()}")


def _set_enabled(ctx: typer.Context, name: str, enabled: bool, scope_text: str, *, yes: bool) -> None:
    from kairox.skills import EnableScope, SkillError, enabled_file, enabled_key, persist_enabled, registry_from_config

    try:
        scope = EnableScope(scope_text)
    except ValueError:
        fail(f"--scope must be user or workspace, not {scope_text!r}", ExitCode.USAGE)
    cli = state(ctx)
    resolved = cli.resolve()
    registry = registry_from_config(resolved)
    qualified = name
    try:
        qualified = registry.require(name).skill.qualified_name
    except SkillError as exc:
        if ":" not in name:  # plugin skills are only known once plugins load; their names are taken as given
            fail(str(exc), ExitCode.NOT_FOUND)
    authorize_config_write(
        resolved, enabled_file(resolved, scope), change_text(enabled_key(qualified), enabled), yes=yes
    )
    file = persist_enabled(resolved, qualified, enabled, scope)
    word = "enabled" if enabled else "disabled"
    err(f"{word} {qualified} in {file}")
    after = cli.resolve()
    effective = after.config.skills.entries.get(qualified)
    if effective is not None and effective.enabled is not enabled:
        origin = after.origin(enabled_key(qualified))
        where = f"{origin.file}" if origin is not None and origin.file else "a higher layer"
        err(f"warning: {where} still sets it to {str(effective.enabled).lower()}, which wins over {file}")


@skills_app.command("enable")
def enable(
    ctx: typer.Context,
    name: Annotated[str, typer.Argument(help="The skill's name.")],
    scope: ScopeOption = "user",
    yes: WriteYesOption = False,
) -> None:
    """Turn a skill on (persisted in the user file, or the workspace's
    local file: asked first when the workspace is untrusted)."""
    _set_enabled(ctx, name, True, scope, yes=yes)


@skills_app.command("disable")
def disable(
    ctx: typer.Context,
    name: Annotated[str, typer.Argument(help="The skill's name.")],
    scope: ScopeOption = "user",
    yes: WriteYesOption = False,
) -> None:
    """Turn a skill off: it stays listed but is not offered to the model."""
    _set_enabled(ctx, name, False, scope, yes=yes)


@skills_app.command("install")
def install(
    ctx: typer.Context,
    source: Annotated[
        str, typer.Argument(help="A skill folder, a git URL, or a .zip/.tar.gz URL (optionally #sub/folder).")
    ],
    scope: ScopeOption = "user",
    name: Annotated[str | None, typer.Option("--name", help="Which skill, when the source holds several.")] = None,
    force: Annotated[bool, typer.Option("--force", help="Replace a skill already installed there.")] = False,
    yes: Annotated[
        bool,
        typer.Option(
            "--yes",
            "-y",
            help=(
                "Approve the install's write into the skills store if the policy asks "
                "(a deny rule still wins; --yes approves nothing else)."
            ),
        ),
    ] = False,
    as_json: JsonOption = False,
) -> None:
    """Validate a skill and install it into $KAIROX_HOME/skills (user) or .kairox/skills (workspace)."""
    import anyio

    from kairox.skills import (
        SkillInstallDeniedError,
        SkillInstallError,
        install_skill,
        user_skills_dir,
        workspace_skills_dir,
    )

    if scope not in ("user", "workspace"):
        fail(f"--scope must be user or workspace, not {scope!r}", ExitCode.USAGE)
    cli = state(ctx)
    resolved = cli.resolve()
    dest = user_skills_dir(resolved.home) if scope == "user" else workspace_skills_dir(resolved.workspace)
    authorize = _write_gate(resolved, pre_approved=yes, store=dest)
    try:
        installed = anyio.run(
            lambda: install_skill(
                source,
                dest_root=dest,
                authorize=authorize,
                name=name,
                replace=force,
                scope=scope,
                progress=err,
                events=cli.events(),
            )
        )
    except SkillInstallDeniedError as exc:
        fail(str(exc), ExitCode.DENIED)
    except SkillInstallError as exc:
        report_diagnostics(exc.diagnostics)
        fail(str(exc), ExitCode.FAILURE)
    report_diagnostics(installed.diagnostics)
    if as_json:
        out_json(
            {
                "name": installed.name,
                "path": str(installed.path),
                "source": installed.source,
                "kind": str(installed.kind),
                "scope": scope,
            }
        )
    else:
        out(f"{installed.name} -> {installed.path}")


class _TerminalApprover:
    """Asks the person at the terminal; without one (or without ``--yes``) the answer is no.

    ``skills install SOURCE --yes`` names the install on the command line: that approves writing this skill's
    folder into the skills store it goes to (``store``), once. Anything else the gate asks goes to ``--yes``'s
    usual answer, within what an answer from no person may approve (``unattended_refusal``), as for
    ``kairox plugins install --yes``."""

    def __init__(self, *, pre_approved: bool, store: Path) -> None:
        self.pre_approved = pre_approved
        self.store = store

    async def request_approval(self, request: "ApprovalRequest") -> "ApprovalAnswer":
        from kairox.cli._approver import YesApprover
        from kairox.policy import ApprovalAnswer, NonInteractiveApprover

        path = Path(str(request.arguments.get("path", "")))
        if self.pre_approved:
            if request.tool == "fs.write" and path.parent == self.store:
                err(f"approved by --yes: install the skill at {path} ({request.reason})")
                return ApprovalAnswer(approved=True, reason="approved by --yes of kairox skills install")
            return await YesApprover().request_approval(request)
        if sys.stdin.isatty() and sys.stderr.isatty():
            approved = typer.confirm(f"Install a skill at {path}? ({request.reason})", default=False, err=True)
            return ApprovalAnswer(approved=approved) if approved else ApprovalAnswer.deny("not approved at the prompt")
        return await NonInteractiveApprover().request_approval(request)


def _write_gate(resolved: "ResolvedConfig", *, pre_approved: bool, store: Path) -> Callable[[Path], Awaitable[bool]]:
    """``authorize(path)`` for installs into ``store``: the policy engine decides as for an ``fs.write`` of that
    path."""
    from kairox.registry import registry_settings
    from kairox.skills import policy_authorizer

    approver = _TerminalApprover(pre_approved=pre_approved, store=store)
    return policy_authorizer(
        registry_settings(resolved).policy, approver=approver, notify=lambda m: err(f"kairox: {m}")
    )


@skills_app.command("validate")
def validate(
    path: Annotated[Path, typer.Argument(help="A skill file, a skill folder, or a tree holding skills.")],
    as_json: JsonOption = False,
    max_depth: Annotated[int, typer.Option("--max-depth", help="How deep to search a tree.")] = 16,
    verbose: Annotated[bool, typer.Option("--verbose", "-v", help="Also print info diagnostics.")] = False,
) -> None:
    """Load every skill under PATH and report each file that does not load, with its line and reason."""
    from kairox.skills import validate_path

    report = validate_path(path, max_depth=max_depth)
    if as_json:
        out_json(report.to_json())
    else:
        report_diagnostics(report.diagnostics, verbose=verbose)
        counts = report.to_json()["counts"]
        passed_over = (
            f"; {counts['passed_over']} in other dot-folders not read (--verbose names them)"
            if counts["passed_over"]
            else ""
        )
        out(
            f"{counts['loaded']} skill(s) loaded from {counts['files']} file(s); {counts['skipped']} skipped; "
            f"{counts['errors']} error(s), {counts['warnings']} warning(s){passed_over}"
        )
    if not report.ok:
        raise typer.Exit(int(ExitCode.FAILURE))
