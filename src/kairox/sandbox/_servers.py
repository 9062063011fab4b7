"""Server processes under the OS sandbox (Y6): every stdio MCP server, language server and debug adapter Kairox
starts runs in the bubblewrap sandbox ``shell.exec`` commands get, under the profile of its entry.

What a confined server sees: the whole file system read-only, the host's sockets hidden, what the rules on reading
forbid hidden, every capability dropped. What it may write: under ``workspace_write`` the workspace, the policy's
writable roots (the temp dir among them) and its entry's ``writable_roots``, with the protected paths (``.git``,
``kairox.toml``, ``.mcp.json`` ... at any depth) kept read-only; under ``read_only`` nothing of those. In both, its
own state folder (``$KAIROX_HOME/servers/NAME``), which is its ``HOME`` and holds its caches (XDG, npm, uv, pip,
Go): a cache an unconfined program also uses is never writable from inside, so a confined server cannot plant code
there for later. ``network = false`` unshares the network; ``"allowlist"`` leaves it the names of its list.

Where no sandbox can start, a server the user wrote starts unconfined (the status says so and ``doctor`` warns);
one from a project file or a plugin does not start, with the reason and the one line of the user's file that
accepts the risk.
"""

import asyncio
import dataclasses
import os
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kairox._util._domains import covered
from kairox.config import SandboxPolicy, join_key
from kairox.errors import SandboxUnavailableError
from kairox.sandbox._profile import SandboxSettings, ServerProfile, resolved_profile

if TYPE_CHECKING:
    from kairox.config import ResolvedConfig

_WHAT = {"mcp_servers": "MCP server", "lsp_servers": "language server", "dap_servers": "debug adapter"}
_STATE_ENV = {
    "XDG_CACHE_HOME": "cache",
    "XDG_CONFIG_HOME": "config",
    "XDG_DATA_HOME": "data",
    "XDG_STATE_HOME": "state",
    "npm_config_cache": "cache/npm",
    "UV_CACHE_DIR": "cache/uv",
    "PIP_CACHE_DIR": "cache/pip",
    "GOMODCACHE": "cache/go-mod",
    "GOCACHE": "cache/go-build",
}
"""Where a confined server's launchers keep what they download and build: inside its state folder."""
_HOST_TOOLS = {"PYTHONUSERBASE": ".local", "CARGO_HOME": ".cargo", "RUSTUP_HOME": ".rustup"}
"""Installed tools found through the real home (read-only inside): a server installed with ``pip --user`` or a
rustup proxy keeps working when ``HOME`` is the state folder."""
SHARED_CACHES = (".cache", ".npm", ".local", ".cargo", ".rustup", "go", ".config", ".npmrc", ".pip")
"""Folders of the real home that unconfined programs read code and packages from: kept read-only even when a
writable root holds them (a workspace that is the home folder)."""


_NO_SANDBOX = "policy.sandbox_policy = danger_full_access"
_NO_NETWORK = ("network is unreachable", "enetunreach", "name resolution", "getaddrinfo", "eai_again")
"""What a server's stderr says when the network it needs is not there."""
WALK_REUSE_SEC = 1.0
"""Servers starting within this long of each other share one walk of the temp folders (for host sockets) and of
the workspace (for protected paths): a session's start lists them once, not once per server. What a walk missed
is as out of reach as what appears after a server started (sockets are still checked one by one at the start)."""


class ServerSandboxError(SandboxUnavailableError):
    """A server that must run confined cannot: no sandbox here, or what it would need the rules forbid."""


@dataclass(frozen=True, kw_only=True, slots=True)
class ServerConfinement:
    """How one server is started: its profile, the policy's sandbox settings, and where its state lives."""

    profile: "ServerProfile"
    sandbox: SandboxSettings
    """The policy's settings (mode, writable roots, allowed sockets, what the rules on reading hide)."""
    home: Path
    """``$KAIROX_HOME``."""
    workspace: Path

    @property
    def state_dir(self) -> Path:
        """``$KAIROX_HOME/servers/NAME`` with its symlinks resolved: bwrap binds real paths (a home reached
        through a link would have it create the folder's parents under the read-only root)."""
        return Path(os.path.realpath(self.home / "servers" / self.profile.state_name))

    @property
    def what(self) -> str:
        return f"{_WHAT.get(self.profile.section, 'server')} `{self.profile.name}`"

    def settings(self) -> SandboxSettings | None:
        """The sandbox the server runs in; None when nothing confines it (``sandbox = "none"``, or the policy's
        ``danger_full_access``)."""
        if self.sandbox.mode is SandboxPolicy.DANGER_FULL_ACCESS or self.profile.sandbox == "none":
            return None
        # the narrower of the profile and the policy: a read_only policy holds its servers read-only too
        read_only = self.profile.sandbox == "read_only" or self.sandbox.mode is SandboxPolicy.READ_ONLY
        mode = SandboxPolicy.READ_ONLY if read_only else SandboxPolicy.WORKSPACE_WRITE
        roots = tuple(dict.fromkeys((*self.sandbox.writable_roots, *self.profile.writable_roots)))
        domains = self.profile.allowed_domains
        network = self.profile.network and domains is None
        return dataclasses.replace(
            self.sandbox, mode=mode, writable_roots=roots, network_access=network, allowed_domains=domains
        )

    def describe(self) -> dict[str, Any]:
        """The profile in effect, as data for status records (before the server starts)."""
        why = _NO_SANDBOX if self.sandbox.mode is SandboxPolicy.DANGER_FULL_ACCESS else 'sandbox = "none"'
        return confinement_record(self.settings(), self.state_dir, workspace=self.workspace, reason=why)


def confinement_record(
    settings: SandboxSettings | None, state: Path | None, *, workspace: Path | None = None, reason: str | None = None
) -> dict[str, Any]:
    """A confinement as status records show it (``describe_confinement`` words it); unconfined for ``reason``
    when ``settings`` is None."""
    if settings is None:
        return {"confined": False, "sandbox": "none", "network": True, "writable_roots": [], "state_dir": None,
                "reason": reason}  # fmt: skip
    read_only = settings.mode is SandboxPolicy.READ_ONLY
    roots = [] if read_only else [str(r) for r in (*([workspace] if workspace else []), *settings.writable_roots)]
    own = [] if state is None else [str(state)]
    network = settings.network_access if settings.allowed_domains is None else "allowlist"
    return {"confined": True, "sandbox": str(settings.mode), "network": network,
            "writable_roots": [*dict.fromkeys(roots), *own], "state_dir": own[0] if own else None,
            "reason": None}  # fmt: skip


def entry_confinement(
    resolved: "ResolvedConfig", section: str, name: str, entry: Any, sandbox: SandboxSettings
) -> ServerConfinement:
    """The confinement of server ``name`` of ``section`` (``lsp_servers``, ``dap_servers``) as the resolved
    configuration has it: its profile held to the layer that wrote the entry (a plugin's counts as a project's)."""
    key = join_key((section, name))
    origin = resolved.origin(key)
    layer = str(origin.layer) if origin is not None else "default"
    profile = resolved_profile(
        resolved,
        section,
        name,
        entry,
        layer=layer,
        where=origin.where() if origin is not None else None,
        base_dir=resolved.base_dir(key),
    )
    return ServerConfinement(profile=profile, sandbox=sandbox, home=resolved.home, workspace=resolved.workspace)


@dataclass(frozen=True, kw_only=True, slots=True)
class ConfinedCommand:
    """What to start: the command line (bwrap first when confined) and its environment."""

    argv: list[str]
    env: dict[str, str]
    confinement: dict[str, Any] = field(default_factory=dict)
    """What the status record shows: ``ServerConfinement.describe``, with ``reason`` when it runs unconfined."""
    warning: str | None = None
    """Set when a server the user wrote runs unconfined because no sandbox exists here (``doctor`` warns)."""

    @property
    def confined(self) -> bool:
        return bool(self.confinement.get("confined"))


def state_environment(
    env: Mapping[str, str],
    state: Path,
    *,
    given: Collection[str] = (),
    real_home: str | None = None,
    move_home: bool = True,
) -> dict[str, str]:
    """``env`` with ``HOME`` (unless not ``move_home``) and the launchers' cache folders inside ``state``; names in
    ``given`` (set by the entry itself) are left as they are."""
    result = dict(env)
    home = real_home or os.path.expanduser("~")
    for name, folder in _HOST_TOOLS.items():
        if name not in given and name not in result and os.path.isdir(os.path.join(home, folder)):
            result[name] = os.path.join(home, folder)
    npmrc = os.path.join(home, ".npmrc")
    if "NPM_CONFIG_USERCONFIG" not in given and os.path.isfile(npmrc):
        result.setdefault("NPM_CONFIG_USERCONFIG", npmrc)  # registries and their auth, read-only inside
    if move_home and "HOME" not in given:
        result["HOME"] = str(state)
    configured = npm_cache_configured(home) is not None
    for name, folder in _STATE_ENV.items():
        if name in given or (name == "npm_config_cache" and configured):
            continue  # the npm cache the user named (bound writable by confine_server): npm answers from it
        result[name] = str(state / folder)
    return result


def npm_cache_configured(home: str | None = None) -> Path | None:
    """The npm cache the user's ``~/.npmrc`` names (``cache=``), when it is a folder: the user chose to share that
    cache (a prepared, often offline one), so confined servers use it as npm would, writable; every other
    launcher cache is the server's own."""
    home = home or os.path.expanduser("~")
    try:
        with open(os.path.join(home, ".npmrc"), encoding="utf-8") as handle:
            lines = handle.read().splitlines()
    except (OSError, UnicodeDecodeError):
        return None
    for line in lines:
        name, sep, value = line.partition("=")
        if sep and name.strip() == "cache" and value.strip():
            folder = Path(os.path.realpath(os.path.join(home, os.path.expanduser(value.strip()))))
            return folder if folder.is_dir() else None
    return None


def shared_caches(real_home: str) -> list[Path]:
    """Where each of ``SHARED_CACHES`` really is, if it is anywhere (one kernel walk each: this runs at every start)."""
    found = (os.path.realpath(os.path.join(real_home, name)) for name in SHARED_CACHES)
    return [Path(path) for path in found if os.path.exists(path)]


def prepare_state(state: Path) -> None:
    state.mkdir(parents=True, exist_ok=True, mode=0o700)
    for folder in ("cache", "config", "data", "state"):
        (state / folder).mkdir(exist_ok=True)


async def confine_server(
    argv: Sequence[str],
    env: Mapping[str, str],
    *,
    cwd: Path,
    confinement: ServerConfinement | None,
    given_env: Collection[str] = (),
) -> ConfinedCommand:
    """``argv`` ready to start as the server's profile says.

    Raises ``ServerSandboxError`` when a server from a project file or a plugin cannot run confined (no sandbox
    here, or its folder is one the rules on reading hide): it does not start."""
    if confinement is None:
        return ConfinedCommand(
            argv=list(argv), env=dict(env), confinement={"confined": False, "sandbox": "none", "reason": "not managed"}
        )
    # loaded when a server starts: a host that starts one MCP server without a sandbox never needs it
    from kairox.sandbox._bwrap import check_sandbox, sandboxed_argv

    described = confinement.describe()
    settings = confinement.settings()
    if settings is None:
        return ConfinedCommand(argv=list(argv), env=dict(env), confinement=described)
    profile = confinement.profile
    try:
        bwrap = await asyncio.to_thread(check_sandbox, settings)  # in a thread: the first one in a process runs bwrap
    except SandboxUnavailableError as exc:
        if profile.user_owned:
            why = f"no sandbox here ({exc.message}): it runs unconfined"
            return ConfinedCommand(
                argv=list(argv),
                env=dict(env),
                confinement={**described, "confined": False, "reason": why},
                warning=f"{confinement.what} {why}",
            )
        raise ServerSandboxError(
            f"{confinement.what} ({profile.source}) was not started: servers from project files and plugins run only "
            f"in the sandbox, and {exc.message}",
            hint=f"{exc.hint}; or accept the risk: {profile.unconfined_hint(confinement.home)}",
        ) from exc
    state = confinement.state_dir
    try:
        prepare_state(state)
    except OSError as exc:
        raise ServerSandboxError(
            f"{confinement.what}: cannot create its state folder {state}: {exc.strerror or exc}",
            hint="check that $KAIROX_HOME is writable",
        ) from exc
    real_home = os.path.expanduser("~")
    kept = shared_caches(real_home)
    shared_npm = npm_cache_configured(real_home)
    own = [state, *([shared_npm] if shared_npm is not None else [])]
    try:
        wrapped = await asyncio.to_thread(
            sandboxed_argv,
            argv,
            settings,
            confinement.workspace,
            cwd=cwd,
            bwrap=bwrap,
            own=own,
            kept=kept,
            reuse=WALK_REUSE_SEC,
        )
    except SandboxUnavailableError as exc:
        raise ServerSandboxError(f"{confinement.what} was not started: {exc.message}", hint=exc.hint) from exc
    return ConfinedCommand(
        argv=wrapped,
        env=state_environment(env, state, given=given_env, real_home=real_home),
        confinement=described,
    )


def describe_confinement(confinement: Mapping[str, Any] | None) -> str:
    """One line for people: ``confined: workspace_write, network on, writes /ws, /tmp`` or why it is not."""
    if not confinement:
        return "remote: not a local process"
    if not confinement.get("confined"):
        return f"unconfined: {confinement.get('reason') or 'no sandbox'}"
    roots = ", ".join(confinement.get("writable_roots") or [])
    network = {"allowlist": "network by allowlist", True: "network on"}.get(confinement.get("network"), "network off")
    return f"confined: {confinement.get('sandbox')}, {network}, writes {roots}"


def refusal_hint(stderr: str, confinement: dict[str, Any], key: str) -> str | None:
    """What to change when a confined server failed on something its profile refuses, read from its stderr: a
    write refused by the read-only file system, or the network unreachable. None when the stderr says neither."""
    if not confinement.get("confined"):
        return None
    text = stderr.lower()
    if "read-only file system" in text or "erofs" in text:
        path = _quoted_path(stderr)
        where = f" ({path})" if path else ""
        return (
            f"the sandbox refused a write{where}: the server may write "
            f"only {', '.join(confinement.get('writable_roots') or [])}; "
            f"add the folder to {key}.writable_roots in your user file (or -c '{key}.writable_roots=[\"FOLDER\"]')"
        )
    if not confinement.get("network") and any(words in text for words in _NO_NETWORK):
        return f"the sandbox has no network for this server ({key}.network = false); set {key}.network = true"
    return None


def sandbox_refusal(stderr: str) -> str | None:
    """bwrap's own message when it refused to set a confined process up (``bwrap: Can't create file at PATH: ...``),
    from the start of the process's stderr; None when bwrap started it."""
    first = stderr.lstrip().split("\n", 1)[0].strip()
    return first if first.startswith("bwrap: ") else None


def _quoted_path(text: str) -> str | None:
    import re

    found = re.search(r"'(/[^']+)'", text) or re.search(r'"(/[^"]+)"', text) or re.search(r" (/\S+)", text)
    return found.group(1) if found else None


# --- debug adapters -----------------------------------------------------------------------------------------------
# A launched debuggee runs under the adapter that starts it, in the sandbox ``shell.exec`` commands get. The adapter
# and the debuggee talk over loopback: with the network unshared, the sandbox's own, which bubblewrap brings up.


def adapter_settings(sandbox: SandboxSettings, confinement: ServerConfinement | None) -> SandboxSettings:
    """The call's sandbox narrowed by the adapter's profile: ``read_only`` holds the debuggee read-only too, and
    ``network = false`` unshares the network even where the policy allows it, and its ``allowed_domains`` only
    narrow the call's. ``sandbox = "none"`` lifts nothing here: the debuggee is a program the model chose, so it
    runs as ``shell.exec`` would run it."""
    if confinement is None or sandbox.mode is SandboxPolicy.DANGER_FULL_ACCESS:
        return sandbox
    profile = confinement.profile
    mode = SandboxPolicy.READ_ONLY if profile.sandbox == "read_only" else sandbox.mode
    roots = tuple(dict.fromkeys((*sandbox.writable_roots, *profile.writable_roots)))
    domains, own = (sandbox.allowed_domains if profile.network else None), profile.allowed_domains
    if own is not None and (sandbox.network_access or domains is not None):
        domains = tuple(d for d in own if sandbox.network_access or covered(d, domains or ()))
    network = sandbox.network_access and profile.network and own is None
    return dataclasses.replace(
        sandbox, mode=mode, writable_roots=roots, network_access=network, allowed_domains=domains
    )


async def adapter_sandbox(
    sandbox: SandboxSettings, *, workspace: Path, cwd: Path, confinement: ServerConfinement | None = None
) -> list[str]:
    """bwrap and its arguments (up to ``--``, and the egress forwarder under an allowlist) for an adapter whose
    debuggee runs in ``cwd``, as ``shell.exec`` would run a command there (narrowed by the adapter's profile, its
    own state folder writable); empty under ``danger_full_access``.

    Raises ``SandboxUnavailableError`` where bwrap is missing or cannot start (fail closed, as ``shell.exec``
    does), or when what the rules on reading forbid cannot all be hidden (the adapter's folder among it).
    """
    from kairox.sandbox._bwrap import check_sandbox, sandboxed_argv

    if sandbox.mode is SandboxPolicy.DANGER_FULL_ACCESS:
        return []
    settings = adapter_settings(sandbox, confinement)
    bwrap = await asyncio.to_thread(check_sandbox, settings)
    own = [] if confinement is None else [confinement.state_dir]
    for state in own:
        await asyncio.to_thread(prepare_state, state)
    kept = shared_caches(os.path.expanduser("~"))
    return await asyncio.to_thread(sandboxed_argv, [], settings, workspace, cwd=cwd, bwrap=bwrap, own=own, kept=kept)


def adapter_confinement(
    confined: bool, confinement: ServerConfinement | None, call: SandboxSettings | None
) -> dict[str, Any]:
    """The adapter's confinement for status records: the call's sandbox narrowed by its profile."""
    if not confined or call is None:
        return confinement_record(None, None, reason=_NO_SANDBOX if call is not None else None)
    state = confinement.state_dir if confinement is not None else None
    return confinement_record(adapter_settings(call, confinement), state)
