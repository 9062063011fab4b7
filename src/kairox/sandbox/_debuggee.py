"""Where a launched debug session runs: its program and folder held to the workspace and to the rules on reading,
and the OS sandbox its adapter (and so the debuggee, which the adapter starts) runs under, the one ``shell.exec``
commands get.

The adapter and the debuggee talk over loopback sockets; with the network unshared they are those of the
sandbox's own network namespace, which bubblewrap brings up, so debugging works and nothing outside is reached.
"""

import asyncio
import dataclasses
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from kairox._util import JsonObject
from kairox._util._domains import covered
from kairox.config import SandboxPolicy
from kairox.dap._errors import DapSessionError
from kairox.tools import (
    SHARED_CACHES,
    SandboxSettings,
    ServerConfinement,
    check_sandbox,
    prepare_state,
    protected_inside,
    protected_roots,
    sandboxed_argv_async,
)


def adapter_settings(sandbox: SandboxSettings, confinement: ServerConfinement | None) -> SandboxSettings:
    """The call's sandbox narrowed by the adapter's profile: ``read_only`` holds the debuggee read-only too, and
    ``network = false`` unshares the network even where the policy allows it, and its ``allowed_domains`` only
    narrow the call's. ``sandbox = "none"`` lifts nothing
    here: the debuggee is a program the model chose, so it runs as ``shell.exec`` would run it."""
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
    does), or when what the rules on reading forbid cannot all be hidden.
    """
    if sandbox.mode is SandboxPolicy.DANGER_FULL_ACCESS:
        return []
    settings = adapter_settings(sandbox, confinement)
    bwrap = await asyncio.to_thread(check_sandbox, settings)
    own: list[Path] = []
    if confinement is not None:
        await asyncio.to_thread(prepare_state, confinement.state_dir)
        own.append(confinement.state_dir)
    real_home = os.path.expanduser("~")
    kept = [Path(os.path.realpath(os.path.join(real_home, name))) for name in SHARED_CACHES]
    # the adapter starts in the debuggee's folder: the sandbox refuses one the rules on reading hide, with the reason
    return await sandboxed_argv_async(
        [], settings, workspace, cwd=cwd, bwrap=bwrap, own=own, kept=[p for p in kept if os.path.lexists(p)]
    )


@dataclass(frozen=True, kw_only=True, slots=True)
class ConfigurationWatch:
    """The protected paths (project configuration) under the writable roots when a debuggee started: what it
    creates there cannot be refused by the sandbox, so it is found afterwards and reported, as ``shell.exec`` does
    (trust pins keep it inert)."""

    roots: tuple[Path, ...] = ()
    before: frozenset[Path] = frozenset()

    async def created(self) -> list[Path]:
        if not self.roots:
            return []
        return sorted(await asyncio.to_thread(protected_inside, self.roots) - self.before)


async def watch_configuration(
    sandbox: SandboxSettings, workspace: Path, confinement: ServerConfinement | None
) -> ConfigurationWatch:
    """What a launched program may create configuration in, and what is there now."""
    settings = adapter_settings(sandbox, confinement)
    if settings.mode is SandboxPolicy.DANGER_FULL_ACCESS:
        return ConfigurationWatch()
    roots = tuple(protected_roots(settings, workspace))
    return ConfigurationWatch(roots=roots, before=frozenset(await asyncio.to_thread(protected_inside, roots)))


def created_note(created: list[Path]) -> str:
    return (
        "[the program created project configuration: "
        + ", ".join(map(str, created))
        + "; Kairox does not act on it until the user reviews it with `kairox trust`]"
    )


def adapter_confinement(
    confined: bool, confinement: ServerConfinement | None, call: SandboxSettings | None
) -> JsonObject:
    """The adapter's confinement for status records: the call's sandbox narrowed by its profile."""
    if not confined or call is None:
        return {"confined": False, "sandbox": "none", "network": True, "writable_roots": [], "state_dir": None,
                "reason": "policy.sandbox_policy = danger_full_access" if call is not None else None}  # fmt: skip
    settings = adapter_settings(call, confinement)
    roots: list[str] = [] if settings.mode is SandboxPolicy.READ_ONLY else [str(r) for r in settings.writable_roots]
    state = str(confinement.state_dir) if confinement is not None else None
    network = settings.network_access if settings.allowed_domains is None else "allowlist"
    return {"confined": True, "sandbox": str(settings.mode), "network": network,
            "writable_roots": [*roots, *([state] if state else [])], "state_dir": state, "reason": None}  # fmt: skip
