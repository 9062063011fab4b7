"""What installing an entry means: the package (or remote) chosen, the exact command, the server entry written.

Secrets never become literal values: a secret environment variable is passed through from the host
(``env_vars``), a secret header or argument is a ``${VAR}`` reference expanded when the server starts.
"""

import os
import re
import shlex
import shutil
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass
from typing import Any

from kairox.catalog._model import CatalogArgument, CatalogEntry, CatalogInput, CatalogPackage, CatalogTransport

INSTALLABLE = ("npm", "pypi", "oci")
"""Registry types Kairox knows how to run."""
_RUNNERS = {"npm": ("npx",), "pypi": ("uvx",), "oci": ("docker", "podman")}
_TRANSPORTS = {"stdio": "stdio", "streamable-http": "streamable_http", "sse": "sse"}
PYPI_LAUNCHERS = ("uvx", "pipx", "path")
"""How a PyPI package runs, in the order tried: ``uvx PKG@VERSION``, ``pipx run --spec PKG==VERSION PKG``, or the
package's executable already on PATH (installed by the user; its version is theirs)."""
Which = Callable[[str, str | None], str | None]
"""``shutil.which(program, path)``."""
_BRACES = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")


class CatalogPlanError(ValueError):
    """The entry cannot be installed as asked (no runnable package, an unknown ``--package``)."""


@dataclass(frozen=True, kw_only=True, slots=True)
class PlanVariable:
    """A host variable the server needs or may use."""

    name: str
    required: bool
    secret: bool
    description: str | None = None
    purpose: str = "environment"
    """``environment``, ``header NAME``, ``argument``, ``url``: where the value goes."""


@dataclass(frozen=True, kw_only=True, slots=True)
class InstallPlan:
    entry: CatalogEntry
    name: str
    """The server name in ``[mcp_servers.NAME]``."""
    package: CatalogPackage | None
    remote: CatalogTransport | None
    table: dict[str, Any]
    """The ``[mcp_servers.NAME]`` table to write."""
    variables: tuple[PlanVariable, ...]
    launcher: str | None = None
    """For a PyPI package: ``uvx``, ``pipx`` or ``path`` (see ``PYPI_LAUNCHERS``); None otherwise."""
    launcher_chosen: bool = False
    """True when the caller named the launcher; False when the first found on PATH was taken (or none was)."""

    @property
    def argv(self) -> tuple[str, ...]:
        if self.table.get("command") is None:
            return ()
        return (self.table["command"], *self.table.get("args", ()))

    @property
    def command_line(self) -> str:
        """The exact command (untruncated), or the URL of a remote server."""
        if self.argv:
            return shlex.join(self.argv)
        return f"{self.table['type']} {self.table['url']}"

    @property
    def choice(self) -> str:
        return self.package.label if self.package is not None else f"remote:{self.remote.url if self.remote else ''}"

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.entry.id,
            "version": self.entry.version,
            "source": self.entry.source,
            "name": self.name,
            "package": self.choice,
            "command": list(self.argv) or None,
            "command_line": self.command_line,
            "launcher": self.launcher,
            "entry": self.table,
            "variables": [asdict(v) for v in self.variables],
        }


def env_name(text: str) -> str:
    """A variable name for a header, value hint or URL variable: ``X-Api-Key`` -> ``X_API_KEY``."""
    cleaned = re.sub(r"[^A-Za-z0-9]+", "_", text).strip("_").upper()
    return cleaned if cleaned and not cleaned[0].isdigit() else f"VAR_{cleaned}"


def choose(entry: CatalogEntry, wanted: str | None = None) -> CatalogPackage | CatalogTransport:
    """The package or remote to install: ``wanted`` is a registry type (``npm``), a package identifier or
    label, or ``remote``; by default the first package Kairox can run, else the first remote."""
    if wanted:
        for package in entry.packages:
            if wanted in (package.registry_type, package.identifier, package.label):
                return package
        if wanted in ("remote", *(r.type for r in entry.remotes)) and entry.remotes:
            return entry.remotes[0]
        offered = (
            ", ".join([p.registry_type for p in entry.packages] + (["remote"] if entry.remotes else [])) or "nothing"
        )
        raise CatalogPlanError(f"{entry.id} offers no package {wanted!r}; it offers {offered}")
    for package in entry.packages:
        if package.registry_type in INSTALLABLE:
            return package
    if entry.remotes:
        return entry.remotes[0]
    kinds = ", ".join(sorted({p.registry_type for p in entry.packages})) or "no packages"
    raise CatalogPlanError(
        f"{entry.id} offers {kinds}; Kairox can install npm, pypi and oci packages and remote servers"
    )


def plan_install(
    entry: CatalogEntry,
    *,
    name: str | None = None,
    package: str | None = None,
    launcher: str | None = None,
    environ: Mapping[str, str] | None = None,
    which: Which | None = None,
) -> InstallPlan:
    """The server entry installing ``entry`` writes, with the exact command and the variables it uses. A PyPI
    package runs through ``launcher`` (``uvx``, ``pipx``, ``path``), by default the first of them found on
    ``environ``'s PATH (uvx when none is: pre-flight then says how to get one)."""
    chosen = choose(entry, package)
    server = name or entry.short_name
    if not re.fullmatch(r"[A-Za-z0-9_-]+", server):
        raise CatalogPlanError(
            f"server name {server!r} may hold only letters, digits, '_' and '-' (it becomes part of tool names)"
        )
    if launcher is not None and launcher not in PYPI_LAUNCHERS:
        raise CatalogPlanError(f"unknown launcher {launcher!r}; use {', '.join(PYPI_LAUNCHERS)}")
    variables: dict[str, PlanVariable] = {}
    if isinstance(chosen, CatalogTransport):
        table = _remote_table(chosen, variables)
        return InstallPlan(
            entry=entry, name=server, package=None, remote=chosen, table=table, variables=tuple(variables.values())
        )
    if chosen.registry_type not in INSTALLABLE:
        raise CatalogPlanError(
            f"{chosen.label}: Kairox cannot run {chosen.registry_type} packages; "
            f"choose another with --package ({', '.join(p.registry_type for p in entry.packages)})"
        )
    if not chosen.version:
        raise CatalogPlanError(f"{chosen.label} has no exact version, so the entry could not be pinned")
    if launcher is not None and chosen.registry_type != "pypi":
        raise CatalogPlanError(f"--launcher is for PyPI packages; {chosen.label} is an {chosen.registry_type} package")
    picked: tuple[str, str | None] | None = None
    if chosen.registry_type == "pypi":
        picked = _pypi_launcher(chosen, launcher, environ, which)
    table = _package_table(chosen, variables, picked)
    return InstallPlan(
        entry=entry,
        name=server,
        package=chosen,
        remote=None,
        table=table,
        variables=tuple(variables.values()),
        launcher=picked[0] if picked else None,
        launcher_chosen=launcher is not None,
    )


def _pypi_launcher(
    package: CatalogPackage, wanted: str | None, environ: Mapping[str, str] | None, which: Which | None
) -> tuple[str, str | None]:
    """``(launcher, the program found)``: ``wanted``, or the first of ``PYPI_LAUNCHERS`` on PATH; uvx when none is.
    Runtime arguments are uvx's own, so a package that has them runs through uvx only."""
    if package.runtime_arguments:
        if wanted not in (None, "uvx"):
            raise CatalogPlanError(
                f"{package.label} passes arguments to uvx itself (runtimeArguments), so it runs through uvx only"
            )
        return "uvx", None
    env = os.environ if environ is None else environ
    find = which or (lambda program, path: shutil.which(program, path=path))
    search = env.get("PATH", os.defpath)
    programs = {"uvx": "uvx", "pipx": "pipx", "path": package.identifier}
    for option in (wanted,) if wanted else PYPI_LAUNCHERS:
        found = find(programs[option], search)
        if found is not None:
            return option, found
    return wanted or "uvx", None


def _note(variables: dict[str, PlanVariable], variable: PlanVariable) -> None:
    known = variables.get(variable.name)
    if known is None or (variable.required and not known.required):
        variables[variable.name] = variable


def _substitute(
    text: str,
    inputs: Mapping[str, CatalogInput],
    variables: dict[str, PlanVariable],
    purpose: str,
    *,
    parent: CatalogInput | None = None,
) -> str:
    """``text`` with each ``{var}`` as its input's value or default, or as a ``${VAR}`` reference (noted in
    ``variables``) for a secret or an input without one; ``parent``: the input ``text`` is the value of."""

    def reference(match: re.Match[str]) -> str:
        key = match.group(1)
        sub = inputs.get(key)
        if sub is not None and not sub.is_secret and (sub.value or sub.default):
            return sub.value or sub.default or ""
        var = env_name(key)
        _note(
            variables,
            PlanVariable(
                name=var,
                required=sub.is_required if sub else True,
                secret=(sub.is_secret if sub else False) or (parent is not None and parent.is_secret),
                description=(sub.description if sub else None) or (parent.description if parent else None),
                purpose=purpose,
            ),
        )
        return "${" + var + "}"

    return _BRACES.sub(reference, text)


def _fill(item: CatalogInput, fallback: str, variables: dict[str, PlanVariable], purpose: str) -> str | None:
    """The text an input contributes: its value with ``{var}`` as ``${VAR}``, its default, a ``${VAR}`` reference
    for a secret or required value without one, or None (left out)."""

    if item.value is not None:
        return _substitute(item.value, item.variables, variables, purpose, parent=item)
    if item.is_required and (item.is_secret or item.default is None):
        var = env_name(fallback)
        _note(
            variables,
            PlanVariable(name=var, required=True, secret=item.is_secret, description=item.description, purpose=purpose),
        )
        return "${" + var + "}"
    if item.is_secret:  # optional: left out, but listed so `show` can say how to add it
        _note(
            variables,
            PlanVariable(
                name=env_name(fallback), required=False, secret=True, description=item.description, purpose=purpose
            ),
        )
        return None
    return item.default


def _arguments(items: tuple[CatalogArgument, ...], variables: dict[str, PlanVariable]) -> list[str]:
    argv: list[str] = []
    for argument in items:
        if argument.type == "named":
            assert argument.name is not None
            hint = argument.value_hint or argument.name
            value = _fill(argument.input, hint, variables, "argument")
            if value is None:
                continue
            argv += [argument.name, value] if value != "" else [argument.name]
        else:
            value = _fill(argument.input, argument.value_hint or "argument", variables, "argument")
            if value is not None:
                argv.append(value)
    return argv


def _package_table(
    package: CatalogPackage, variables: dict[str, PlanVariable], launcher: tuple[str, str | None] | None = None
) -> dict[str, Any]:
    kind = package.registry_type
    runners = _RUNNERS[kind]
    runner = package.runtime_hint if package.runtime_hint in runners else runners[0]
    runtime = _arguments(package.runtime_arguments, variables)
    args = _arguments(package.package_arguments, variables)
    env: dict[str, str] = {}
    passthrough: list[str] = []
    for item in package.environment_variables:
        assert item.name is not None
        if item.value is not None and not item.is_secret:
            env[item.name] = _fill(item, item.name, variables, "environment") or ""
        else:
            # the host's value is passed when the server starts: nothing of it is written down
            passthrough.append(item.name)
            _note(
                variables,
                PlanVariable(
                    name=item.name, required=item.is_required, secret=item.is_secret, description=item.description
                ),
            )
    version = package.version
    if kind == "npm":
        lead = [] if {"-y", "--yes"} & set(runtime) else ["-y"]
        command_args = [*lead, *runtime, f"{package.identifier}@{version}", *args]
    elif kind == "pypi" and launcher is not None and launcher[0] == "pipx":
        runner, command_args = "pipx", ["run", "--spec", f"{package.identifier}=={version}", package.identifier, *args]
    elif kind == "pypi" and launcher is not None and launcher[0] == "path":
        # the executable found on PATH, by its full path: a server started later (from a desktop, a service) may
        # have another PATH
        runner, command_args = launcher[1] or package.identifier, args
    elif kind == "pypi":
        runner, command_args = "uvx", [*runtime, f"{package.identifier}@{version}", *args]
    else:
        forwarded = [part for name in [*env, *passthrough] for part in ("-e", name)]
        base = [] if "run" in runtime else ["run", "-i", "--rm"]
        command_args = [*base, *runtime, *forwarded, f"{package.identifier}:{version}", *args]
    table: dict[str, Any] = {"type": "stdio", "command": runner, "args": command_args}
    if env:
        table["env"] = env
    if passthrough:
        table["env_vars"] = passthrough
    transport = package.transport
    if transport.type != "stdio":
        # a package serving HTTP itself: Kairox cannot start and reach it as one entry yet
        raise CatalogPlanError(
            f"{package.label} serves {transport.type} on {transport.url}; start it yourself and add it with "
            "`kairox mcp add NAME --transport http --url URL`"
        )
    return table


def _remote_table(remote: CatalogTransport, variables: dict[str, PlanVariable]) -> dict[str, Any]:
    assert remote.url is not None

    table: dict[str, Any] = {
        "type": _TRANSPORTS[remote.type],
        "url": _substitute(remote.url, remote.variables, variables, "url"),
    }
    headers: dict[str, str] = {}
    for header in remote.headers:
        assert header.name is not None
        value = _fill(header, header.name, variables, f"header {header.name}")
        if value is not None:
            headers[header.name] = value
    if headers:
        table["headers"] = headers
    return table
