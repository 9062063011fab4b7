"""Pre-flight: before anything is written or started, is what the chosen package needs on this machine?

Each problem comes with the exact fix: the package to install, the variable to export.
"""

import os
import re
import shutil
import subprocess
import sys
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass

from kairox.catalog._model import KAIROX_META, CatalogEntry
from kairox.catalog._plan import InstallPlan, Which

VersionProbe = Callable[[str], str | None]
"""Runs ``PROGRAM --version`` and returns what it printed, or None."""


@dataclass(frozen=True, kw_only=True, slots=True)
class Runtime:
    """A program a package needs, with the oldest version that works."""

    program: str
    minimum: tuple[int, ...] | None = None
    fix: str
    why: str


_NODE_FIX = "install Node.js 18 or newer: `apt-get install nodejs npm` (Debian/Ubuntu), `brew install node` (macOS), or https://nodejs.org"
_UV_FIX = "install uv: `pip install uv`, `curl -LsSf https://astral.sh/uv/install.sh | sh`, or `brew install uv`"
_PIPX_FIX = "install pipx: `pip install pipx` (or `apt-get install pipx`, `brew install pipx`)"
_DOCKER_FIX = "install Docker: `apt-get install docker.io` (Debian/Ubuntu) or https://docs.docker.com/get-docker/"
_PODMAN_FIX = "install Podman: `apt-get install podman` (Debian/Ubuntu) or https://podman.io"

RUNTIMES: dict[str, tuple[Runtime, ...]] = {
    "npx": (
        Runtime(program="node", minimum=(18,), fix=_NODE_FIX, why="npm packages run on Node.js"),
        Runtime(
            program="npx",
            fix=_NODE_FIX.replace("install Node.js 18 or newer", "install npm (it brings npx)"),
            why="runs the npm package",
        ),
    ),
    "uvx": (Runtime(program="uvx", minimum=None, fix=_UV_FIX, why="runs the PyPI package in its own environment"),),
    "pipx": (Runtime(program="pipx", minimum=None, fix=_PIPX_FIX, why="runs the PyPI package in its own environment"),),
    "docker": (Runtime(program="docker", fix=_DOCKER_FIX, why="runs the container image"),),
    "podman": (Runtime(program="podman", fix=_PODMAN_FIX, why="runs the container image"),),
}


@dataclass(frozen=True, kw_only=True, slots=True)
class PreflightCheck:
    """One requirement and whether this machine meets it."""

    kind: str
    """``runtime``, ``variable`` or ``platform``."""
    name: str
    ok: bool
    detail: str
    """What was found (``/usr/bin/node v20.20.2``) or what is missing."""
    fix: str | None = None
    blocking: bool = True
    """A failed blocking check stops an install; an unset optional variable does not."""

    def to_json(self) -> dict[str, object]:
        return asdict(self)


@dataclass(frozen=True, kw_only=True, slots=True)
class PreflightReport:
    entry: str
    choice: str
    checks: tuple[PreflightCheck, ...]

    @property
    def problems(self) -> tuple[PreflightCheck, ...]:
        return tuple(c for c in self.checks if not c.ok and c.blocking)

    @property
    def runtime_problems(self) -> tuple[PreflightCheck, ...]:
        return tuple(c for c in self.problems if c.kind in ("runtime", "platform"))

    @property
    def ok(self) -> bool:
        return not self.problems

    def to_json(self) -> dict[str, object]:
        return {"id": self.entry, "package": self.choice, "ok": self.ok, "checks": [c.to_json() for c in self.checks]}


def probe_version(program: str) -> str | None:
    """``program --version``'s first line (stdout or stderr), or None when it does not run in 10 s."""
    try:
        done = subprocess.run(
            [program, "--version"], capture_output=True, text=True, timeout=10, stdin=subprocess.DEVNULL
        )
    except (OSError, subprocess.SubprocessError):
        return None
    text = (done.stdout or done.stderr).strip()
    return text.splitlines()[0] if text else None


def _version_tuple(text: str) -> tuple[int, ...] | None:
    match = re.search(r"(\d+)\.(\d+)(?:\.(\d+))?", text)
    if match is None:
        return None
    return tuple(int(part) for part in match.groups() if part is not None)


def preflight(
    plan: InstallPlan,
    *,
    environ: Mapping[str, str] | None = None,
    which: Which | None = None,
    version_of: VersionProbe = probe_version,
    platform: str = sys.platform,
) -> PreflightReport:
    """Check runtimes (present, new enough), variables (required ones set) and platform limits for ``plan``."""
    env = os.environ if environ is None else environ
    find = which or (lambda program, path: shutil.which(program, path=path))
    checks: list[PreflightCheck] = []
    runner = plan.table.get("command")
    if plan.launcher is not None:
        checks.append(_launcher_check(plan, env, find))
    else:
        for runtime in RUNTIMES.get(str(runner), ()):
            checks.append(_runtime_check(runtime, env, find, version_of))
    checks.extend(_platform_checks(plan, platform))
    for variable in plan.variables:
        value = env.get(variable.name)
        where = f" ({variable.purpose})" if variable.purpose != "environment" else ""
        if value:
            checks.append(
                PreflightCheck(
                    kind="variable", name=variable.name, ok=True, detail=f"set{where}", blocking=variable.required
                )
            )
            continue
        about = f": {variable.description}" if variable.description else ""
        example = "..." if variable.secret else "VALUE"
        checks.append(
            PreflightCheck(
                kind="variable",
                name=variable.name,
                ok=False,
                detail=("required" if variable.required else "optional") + f"{where}, not set{about}",
                fix=f"export {variable.name}={example}",
                blocking=variable.required,
            )
        )
    return PreflightReport(entry=plan.entry.id, choice=plan.choice, checks=tuple(checks))


def _runtime_check(runtime: Runtime, env: Mapping[str, str], find: Which, version_of: VersionProbe) -> PreflightCheck:
    def check(detail: str, *, ok: bool = False) -> PreflightCheck:
        return PreflightCheck(
            kind="runtime", name=runtime.program, ok=ok, detail=detail, fix=None if ok else runtime.fix
        )

    path = find(runtime.program, env.get("PATH", os.defpath))
    if path is None:
        return check(f"{runtime.program} is not on PATH ({runtime.why})")
    if runtime.minimum is None:
        return check(path, ok=True)
    found = _version_tuple(version_of(path) or "")
    wanted = ".".join(map(str, runtime.minimum))
    if found is None:
        return check(f"{path} did not say its version (`{runtime.program} --version`); {wanted} or newer is needed")
    shown = ".".join(map(str, found))
    if found < runtime.minimum:
        return check(f"{path} is {shown}; {wanted} or newer is needed")
    return check(f"{path} {shown} (>= {wanted})", ok=True)


def _launcher_check(plan: InstallPlan, env: Mapping[str, str], find: Which) -> PreflightCheck:
    """Which launcher runs the PyPI package (uvx, pipx, or its executable already on PATH), or, when none is
    there, every way to get one."""
    assert plan.package is not None
    ident, version = plan.package.identifier, plan.package.version
    pinned = f"{ident}=={version}"
    program = str(plan.table.get("command"))
    found = find(program, env.get("PATH", os.defpath))
    chosen = " (chosen with --launcher)" if plan.launcher_chosen else ""
    if found is not None:
        if plan.launcher == "uvx":
            detail = f"{found}: uvx runs {ident}@{version} in its own environment{chosen}"
        elif plan.launcher == "pipx":
            also = "" if plan.launcher_chosen else "; uvx is not on PATH (`pip install uv` to use it instead)"
            detail = f"{found}: pipx runs {pinned} in its own environment{chosen}{also}"
        else:
            also = "" if plan.launcher_chosen else "; neither uvx nor pipx is on PATH"
            detail = (
                f"{found}: {ident} is already on PATH and runs as installed "
                f"(its version is not checked against {version}){chosen}{also}"
            )
        return PreflightCheck(kind="runtime", name=plan.launcher or program, ok=True, detail=detail)
    server_fix = f"`pip install {pinned}` (or `pipx install {pinned}`) puts {ident} itself on PATH"
    if plan.launcher_chosen:
        fixes = {"uvx": _UV_FIX, "pipx": _PIPX_FIX, "path": server_fix}
        return PreflightCheck(
            kind="runtime",
            name=plan.launcher or program,
            ok=False,
            detail=f"{program} is not on PATH (chosen with --launcher {plan.launcher})",
            fix=fixes.get(plan.launcher or "", _UV_FIX),
        )
    return PreflightCheck(
        kind="runtime",
        name="uvx",
        ok=False,
        detail=(
            f"none of uvx, pipx or {ident} is on PATH (a PyPI package "
            "runs through uvx or pipx, or as its installed executable)"
        ),
        fix=f"`pip install uv` (then uvx runs it), or `pip install pipx`, or {server_fix}",
    )


def _platform_checks(plan: InstallPlan, platform: str) -> list[PreflightCheck]:
    checks: list[PreflightCheck] = []
    ours = plan.entry.meta.get(KAIROX_META)
    platforms = ours.get("platforms") if isinstance(ours, dict) else None
    if isinstance(platforms, list) and platforms and platform not in platforms:
        checks.append(
            PreflightCheck(
                kind="platform",
                name=platform,
                ok=False,
                detail=f"{plan.entry.id} runs on {', '.join(map(str, platforms))}, not {platform}",
                fix="install it on a supported system, or choose another entry",
            )
        )
    if plan.table.get("command") in ("docker", "podman") and platform != "linux":
        checks.append(
            PreflightCheck(
                kind="platform",
                name=platform,
                ok=True,
                blocking=False,
                detail="containers run in a Linux VM here (Docker Desktop or podman machine must be running)",
            )
        )
    return checks


def requirements_text(entry: CatalogEntry) -> list[str]:
    """The runtimes each package of ``entry`` needs, for listings: ``npm: node >= 18, npx``."""
    rows = []
    for package in entry.packages:
        runner = {"npm": "npx", "pypi": "uvx", "oci": "docker"}.get(package.registry_type)
        needs = [
            f"{r.program} >= {'.'.join(map(str, r.minimum))}" if r.minimum else r.program
            for r in RUNTIMES.get(runner or "", ())
        ]
        if package.registry_type == "pypi" and not package.runtime_arguments:
            needs = [f"uvx, pipx, or {package.identifier} on PATH"]
        rows.append(f"{package.label}: {', '.join(needs) or 'not installable by Kairox'}")
    for remote in entry.remotes:
        rows.append(f"remote {remote.type} {remote.url}: nothing to install")
    return rows
