"""The policy's settings: everything it decides from, as plain data (Y1-Y4, Y7)."""

from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from kairox.config import ApprovalPolicy, PolicyConfig, SandboxPolicy
from kairox.policy._host import HostFacts, host_files
from kairox.policy._paths import resolve_path
from kairox.policy._rules import RuleLike


@dataclass(frozen=True, kw_only=True, slots=True)
class PolicySettings:
    """Everything the engine decides from, as plain data."""

    workspace: Path
    home: Path = field(default_factory=Path.home)
    approval: ApprovalPolicy = ApprovalPolicy.ON_REQUEST
    sandbox: SandboxPolicy = SandboxPolicy.WORKSPACE_WRITE
    writable_roots: tuple[Path, ...] = ()
    """Resolved roots; ``from_config`` puts the workspace, the configured roots and the temp dir here."""
    network_access: bool = False
    allowed_sockets: tuple[Path, ...] = ()
    """Resolved ``policy.allow_unix_sockets``: host sockets sandboxed commands may connect to."""
    rules: tuple[RuleLike, ...] = ()
    own_dirs: tuple[Path, ...] = ()
    """Resolved folders of Kairox's own state (``$KAIROX_HOME``: the user's kairox.toml, the trust store, hook
    approvals): a write there is asked about like a protected path, wherever the folder lies."""
    host: HostFacts = field(default_factory=host_files, compare=False, repr=False)
    """Where the facts about files come from (symlinks, scripts, read masks): the caller's view of the machine."""

    @classmethod
    def from_config(
        cls,
        policy: PolicyConfig,
        *,
        workspace: Path,
        rules: Iterable[RuleLike] = (),
        home: Path | None = None,
        roots_base: Path | None = None,
        sockets_base: Path | None = None,
        temp_dir: Path | None = None,
        own_dirs: Iterable[Path] = (),
        host: HostFacts | None = None,
    ) -> "PolicySettings":
        """Settings from ``[policy]``; relative ``writable_roots`` are resolved against ``roots_base``, relative
        ``allow_unix_sockets`` against ``sockets_base`` (both default to the workspace)."""
        home = home or Path.home()
        host = host or host_files()
        workspace = resolve_path(str(workspace), base=host.working_dir(), home=home, host=host)
        base = roots_base or workspace
        roots = [workspace]
        roots += [resolve_path(r, base=base, home=home, host=host) for r in policy.writable_roots]
        roots.append(resolve_path(str(temp_dir or host.temp_dir()), base=base, home=home, host=host))
        return cls(
            workspace=workspace,
            home=home,
            approval=policy.approval_policy,
            sandbox=policy.sandbox_policy,
            writable_roots=tuple(dict.fromkeys(roots)),
            network_access=policy.network_access,
            allowed_sockets=tuple(
                dict.fromkeys(
                    resolve_path(s, base=sockets_base or workspace, home=home, host=host)
                    for s in policy.allow_unix_sockets
                )
            ),
            rules=tuple(rules),
            own_dirs=tuple(resolve_path(str(d), base=base, home=home, host=host) for d in own_dirs),
            host=host,
        )

    def resolved(self, value: str, *, base: Path | None = None) -> Path:
        """``value`` as the rules see it: relative to ``base`` (the workspace), ``~`` expanded, symlinks followed."""
        return resolve_path(value, base=base or self.workspace, home=self.home, host=self.host)
