"""``kairox config ...`` and ``kairox trust``."""

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from kairox.cli._common import ExitCode, JsonOption, err, fail, out, out_json, state
from kairox.cli._config_write import WriteYesOption, authorize_config_write, change_text, is_set

if TYPE_CHECKING:
    from kairox.config import ResolvedConfig
    from kairox.errors import ConfigProblem, Diagnostic

config_app = typer.Typer(help="Show, check and edit configuration.", no_args_is_help=True)

LayerOption = Annotated[str, typer.Option("--layer", help="Which file to edit: user, project or local.")]


@config_app.command("show")
def show(
    ctx: typer.Context,
    provenance: Annotated[bool, typer.Option("--provenance", help="Show where every value comes from.")] = False,
    as_json: JsonOption = False,
) -> None:
    """The effective configuration (secrets redacted)."""
    resolved = state(ctx).resolve(strict=False)
    data = resolved.to_json()
    for problem in resolved.problems:
        err(f"error: {problem}")
    if as_json:
        out_json(data)
    elif provenance:
        from kairox.config import provenance_lines

        for line in provenance_lines(resolved):
            out(line)
    else:
        import tomlkit

        out(tomlkit.dumps(_drop_none(data["config"])))
    if resolved.problems:
        raise typer.Exit(int(ExitCode.CONFIG))


def _drop_none(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _drop_none(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_drop_none(v) for v in value]
    return value


@config_app.command("get")
def get(
    ctx: typer.Context,
    key: Annotated[str, typer.Argument(help="Dotted key, e.g. policy.approval_policy.")],
    as_json: JsonOption = False,
) -> None:
    """One value and where it comes from."""
    from kairox.config import lookup_value, value_text

    resolved = state(ctx).resolve(strict=False)
    data = resolved.to_json()
    try:
        value = lookup_value(data["config"], key)
    except (KeyError, ValueError):
        fail(f"no key {key!r} in the configuration", ExitCode.NOT_FOUND)
    origin = resolved.origin(key)
    if as_json:
        out_json(
            {
                "key": key,
                "value": value,
                "provenance": origin.to_json() if origin else None,
                "pending_trust": resolved.is_pending(key),
            }
        )
    else:
        out(value if isinstance(value, str) else value_text(value))
        if origin is not None:
            err(f"# from {origin.layer}: {origin.where()}")


def _layer_file(ctx: typer.Context, layer: str) -> "tuple[ResolvedConfig, Path]":
    from kairox.config import Layer

    if layer not in (Layer.USER, Layer.PROJECT, Layer.LOCAL):
        fail(f"--layer must be one of user, project, local, not {layer!r}", ExitCode.USAGE)
    resolved = state(ctx).resolve(strict=False)
    return resolved, resolved.layer_file(Layer(layer))


def _check_file(file: Path, before: str | None) -> None:
    """Validate the edited file alone; restore it and fail when the edit broke it."""
    import tomllib

    from pydantic import ValidationError

    from kairox.config import KairoxConfig

    try:
        KairoxConfig.model_validate(tomllib.loads(file.read_text(encoding="utf-8")))
    except ValidationError as exc:
        from kairox.config import Layer
        from kairox.config._merge import LayerData
        from kairox.config._validate import problems_from_validation

        if before is None:
            file.unlink()
        else:
            file.write_text(before, encoding="utf-8")
        for problem in problems_from_validation(exc, LayerData(layer=Layer.USER, raw={}, file=file)):
            err(f"error: {problem}")
        fail(f"{file} was left unchanged", ExitCode.CONFIG)


@config_app.command("set")
def set_(
    ctx: typer.Context,
    key: Annotated[str, typer.Argument(help="Dotted key.")],
    value: Annotated[str, typer.Argument(help='Value, parsed as TOML (true, 3, ["a"]), else taken as a string.')],
    layer: LayerOption = "user",
    yes: WriteYesOption = False,
) -> None:
    """Set a key in one layer's file, keeping its comments and order. In an untrusted workspace a project or
    local file is written only when you say so (a y/N question at a terminal, or --yes)."""
    from kairox.config import parse_cli_value, set_value, write_own
    from kairox.errors import ConfigError

    resolved, file = _layer_file(ctx, layer)
    parsed = parse_cli_value(value)
    try:
        change = change_text(key, parsed)
    except ValueError as exc:
        fail(str(exc), ExitCode.CONFIG)
    authorize_config_write(resolved, file, change, yes=yes)
    before = file.read_text(encoding="utf-8") if file.exists() else None
    try:
        write_own(resolved, file, key, lambda: set_value(file, key, parsed))
    except (ConfigError, ValueError) as exc:
        fail(str(exc), ExitCode.CONFIG)
    _check_file(file, before)
    err(f"set {key} in {file}")


@config_app.command("unset")
def unset(
    ctx: typer.Context,
    key: Annotated[str, typer.Argument(help="Dotted key.")],
    layer: LayerOption = "user",
    yes: WriteYesOption = False,
) -> None:
    """Remove a key from one layer's file (asked first like `config set` in an untrusted workspace)."""
    from kairox.config import unset_value, write_own
    from kairox.errors import ConfigError

    resolved, file = _layer_file(ctx, layer)
    try:
        present = is_set(file, key)
    except ValueError as exc:
        fail(str(exc), ExitCode.CONFIG)
    if not present:
        fail(f"{key} is not set in {file}", ExitCode.NOT_FOUND)
    authorize_config_write(resolved, file, f"remove {key}", yes=yes)
    try:
        removed = write_own(resolved, file, key, lambda: unset_value(file, key))
    except (ConfigError, ValueError) as exc:
        fail(str(exc), ExitCode.CONFIG)
    if not removed:
        fail(f"{key} is not set in {file}", ExitCode.NOT_FOUND)
    err(f"removed {key} from {file}")


def _rule_problems(resolved: "ResolvedConfig") -> "list[ConfigProblem]":
    """Rules whose pattern the policy cannot read (the engine ignores them, so a deny rule would hold for nothing)."""
    from kairox.errors import ConfigProblem
    from kairox.policy import parse_rule

    problems = []
    for rule in resolved.rules:
        try:
            parse_rule(rule)
        except ValueError as exc:
            problems.append(
                ConfigProblem(
                    file=str(rule.file or rule.where()),
                    line=rule.line,
                    key=f"policy.rules.{rule.action}",
                    message=str(exc),
                    hint="fix the rule; it is ignored until then",
                    layer=str(rule.layer),
                )
            )
    return problems


def _mcp_json_problems(resolved: "ResolvedConfig") -> "tuple[list[ConfigProblem], list[Diagnostic]]":
    """The workspace ``.mcp.json`` is configuration too: its errors as problems, its notes as diagnostics."""
    from kairox.config import MCP_JSON, workspace_mcp_servers
    from kairox.errors import ConfigProblem, Severity

    problems: list[ConfigProblem] = []
    notes: list[Diagnostic] = []
    for diagnostic in workspace_mcp_servers(resolved.workspace).diagnostics:
        if diagnostic.severity is not Severity.ERROR:
            notes.append(diagnostic)
            continue
        key = "" if diagnostic.name == MCP_JSON else f"mcpServers.{diagnostic.name}"
        file = diagnostic.source or str(resolved.workspace / MCP_JSON)
        problems.append(
            ConfigProblem(
                file=file,
                line=diagnostic.line,
                key=key,
                message=diagnostic.reason,
                hint=diagnostic.hint,
                layer=MCP_JSON,
            )
        )
    return problems, notes


@config_app.command("validate")
def validate(ctx: typer.Context, as_json: JsonOption = False) -> None:
    """Check every file Kairox reads as configuration (each kairox.toml layer and the workspace .mcp.json);
    list every problem with file:line, key and a hint. Exit 3 when there are any."""
    import dataclasses

    resolved = state(ctx).resolve(strict=False)
    mcp_problems, mcp_notes = _mcp_json_problems(resolved)
    problems = [*resolved.problems, *mcp_problems, *_rule_problems(resolved)]
    if as_json:
        out_json(
            {"problems": [dataclasses.asdict(p) for p in problems], "layers": [i.to_json() for i in resolved.layers]}
        )
    else:
        for problem in problems:
            out(f"{problem}")
        for diagnostic in (*resolved.diagnostics, *mcp_notes):
            err(str(diagnostic))
        if not problems:
            out("configuration is valid")
    if problems:
        raise typer.Exit(int(ExitCode.CONFIG))


@config_app.command("paths")
def paths(ctx: typer.Context, as_json: JsonOption = False) -> None:
    """Each layer: its file, whether it exists, and whether it was loaded."""
    resolved = state(ctx).resolve(strict=False)
    layers = [info.to_json() for info in resolved.layers]
    if as_json:
        out_json({"workspace": str(resolved.workspace), "trusted": resolved.trusted, "layers": layers})
        return
    for info in layers:
        out(f"{info['name']:8} {info['status']:10} {info['file'] or info['detail'] or '-'}")


@config_app.command("reference")
def reference(as_json: JsonOption = False) -> None:
    """Every key of kairox.toml with its type, default and layer rules (markdown; a list of keys with --json)."""
    from kairox.config._reference import config_reference, config_reference_data

    if as_json:
        out_json({"keys": config_reference_data()})
        return
    out(config_reference())


def trust(
    ctx: typer.Context,
    path: Annotated[Path | None, typer.Argument(help="Workspace to trust (default: the current workspace).")] = None,
    revoke: Annotated[bool, typer.Option("--revoke", help="Forget the workspace instead.")] = False,
    list_: Annotated[bool, typer.Option("--list", help="List trusted workspaces.")] = False,
    as_json: JsonOption = False,
) -> None:
    """Trust a workspace: its project files may then widen the policy, start servers, enable plugins, run hooks.

    Prints every project value it allows (servers, hooks, plugins, wider policy) and what changed since the
    last time; each is recorded with a fingerprint, so what is added or changed later waits for trust again.
    """
    from kairox.config import TrustStore, find_workspace, kairox_home
    from kairox.errors import TrustError

    store = TrustStore(kairox_home())
    try:
        if list_:
            folders = [str(folder) for folder in store.list()]
            if as_json:
                out_json({"trusted_workspaces": folders})
            else:
                for folder_text in folders:
                    out(folder_text)
            return
        cli = state(ctx)
        folder = (path or cli.workspace or find_workspace(Path.cwd())).resolve()
        if revoke:
            changed = store.revoke(folder)
            err(f"{folder}: {'no longer trusted' if changed else 'was not trusted'}")
            if as_json:
                out_json({"workspace": str(folder), "trusted": False, "changed": changed})
            return
        from kairox.config import trust_workspace

        review = trust_workspace(folder, cli_overrides=cli.overrides, profile=cli.profile)
    except TrustError as exc:
        fail(str(exc))
    err(f"{folder}: {'trusted' if review.first else 'trusted again'}")
    listed: dict[str, list[Any]] = {
        "allowed": [{"what": p.what, "where": p.where(folder)} for p in review.allowed],
        "new": [] if review.first else [{"what": p.what, "where": p.where(folder)} for p in review.new],
        "modified": [{"what": p.what, "where": p.where(folder)} for p in review.changed],
        "removed": list(review.removed),
    }
    if as_json:
        changed = review.first or bool(listed["new"] or listed["modified"] or listed["removed"])
        out_json({"workspace": str(folder), "trusted": True, "changed": changed, **listed})
        return
    for item in listed["allowed"]:
        out(f"allows {item['what']} ({item['where']})")
    for label, key in (("new", "new"), ("changed", "modified")):
        for item in listed[key]:
            out(f"{label} since the last trust: {item['what']} ({item['where']})")
    for pin_id in review.removed:
        out(f"no longer set: {pin_id}")
    if not review.allowed:
        out("allows nothing beyond what an untrusted workspace may do (no servers, hooks, plugins or wider policy)")


def register(app: typer.Typer) -> None:
    app.add_typer(config_app, name="config")
    app.command("trust")(trust)
