"""The profiles confined processes run under (Y6, C6, Y14): ``SandboxSettings`` for the commands a tool runs
(``shell.exec``, plugin command tools, hooks, debuggees), and ``ServerProfile`` for each server process, from its
entry's ``sandbox``, ``network``, ``allowed_domains`` and ``writable_roots``, held to who wrote them.

A server the user wrote (user, system file, ``-c``) gets its profile as written. A server from a project file
(``kairox.toml``, ``.mcp.json``) or a plugin cannot unconfine itself: ``sandbox = "none"`` there is read as
``workspace_write``, and a writable root outside the workspace is dropped, each with a diagnostic naming the file
and key. The user lifts that for one server with ``policy.unconfined_servers`` in their own file, or for one run
with ``-c mcp_servers.NAME.sandbox="none"``. Under the session's ``sandbox.network = "allowlist"`` such a server
reaches at most the session's names.
"""

import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kairox._util._domains import covered
from kairox.config import SandboxPolicy, join_key
from kairox.errors import Diagnostic

if TYPE_CHECKING:
    from kairox.config import ResolvedConfig

USER_LAYERS = frozenset({"default", "system", "user", "env", "cli"})
"""Where a server's entry counts as the user's own: its profile is taken as written."""
_KINDS = {"mcp_servers": "mcp_server", "lsp_servers": "lsp_server", "dap_servers": "dap_server"}


@dataclass(frozen=True, kw_only=True, slots=True)
class SandboxSettings:
    """How commands run by a tool are confined."""

    mode: SandboxPolicy = SandboxPolicy.WORKSPACE_WRITE
    writable_roots: tuple[Path, ...] = ()
    """Resolved writable roots (workspace, configured roots, temp)."""
    network_access: bool = False
    allowed_domains: tuple[str, ...] | None = None
    """``network = "allowlist"`` (``network_access`` false): the names reachable through the proxy ``egress``."""
    egress: "Callable[[tuple[str, ...]], tuple[Path, tuple[str, ...]]] | None" = None
    """The session's egress proxy (``kairox.sandbox``): for a list, its socket and the forwarder (``--`` last)."""
    allowed_sockets: tuple[Path, ...] = ()
    """Resolved host Unix sockets that stay reachable (``policy.allow_unix_sockets``); every other one is covered."""
    hidden: "Callable[[], HiddenPaths] | None" = None
    """What the rules on reading (``fs.read`` deny and ask rules) hide from a command, worked out as each command
    starts (so files made since are covered); None when no such rule exists (nothing to work out)."""


@dataclass(frozen=True, kw_only=True, slots=True)
class HiddenPaths:
    """Resolved files and folders a sandboxed command must not see: each is covered by an empty read-only one."""

    files: tuple[Path, ...] = ()
    folders: tuple[Path, ...] = ()
    problem: str | None = None
    """Why the list may be incomplete (the search of the roots went past its limit, another name of a hidden file
    lies outside them): the command is refused."""
    hint: str | None = None
    """What to do about ``problem``."""
    notes: tuple[str, ...] = ()
    """What was hidden besides what the rules name (a repository's history, other names of a hidden file) and why:
    told with a command's result when it fails."""


@dataclass(frozen=True, kw_only=True, slots=True)
class ServerProfile:
    """What one server may do once started: the profile in effect, after what its source may not set was clamped."""

    section: str
    """``mcp_servers``, ``lsp_servers`` or ``dap_servers``."""
    name: str
    sandbox: str
    """``workspace_write``, ``read_only`` or ``none``."""
    network: bool
    writable_roots: tuple[Path, ...]
    """Resolved folders it may write besides the workspace, the temp dir and its state folder."""
    allowed_domains: tuple[str, ...] | None = None
    """The names it may reach through the session's proxy (``network = "allowlist"``); None: ``network`` says."""
    user_owned: bool
    """Written by the user (user, system, CLI layers): where no sandbox exists it starts unconfined, with a warning;
    a project or plugin server then does not start."""
    source: str
    """The layer or file kind it came from: ``user``, ``project``, ``.mcp.json``, ``plugin:<name>`` ..."""
    scope: str | None = None
    """For a server the user did not write: what ties its state folder to one workspace and source."""
    diagnostics: tuple[Diagnostic, ...] = ()
    """What was clamped, each naming the file and key."""

    @property
    def key(self) -> str:
        return join_key((self.section, self.name))

    @property
    def state_name(self) -> str:
        """The folder name of its state under ``$KAIROX_HOME/servers``: the name for the user's MCP servers, the
        section for the others (``lsp.NAME``), and a project's or plugin's server is kept apart from a user's of
        the same name."""
        prefix = "" if self.section == "mcp_servers" else self.section.removesuffix("_servers") + "."
        safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in self.name).lstrip(".") or "_"
        return f"{prefix}{safe}" if self.scope is None else f"{prefix}{safe}@{_slug(self.scope)}"

    def unconfined_hint(self, home: Path) -> str:
        """The one line in the user's file that accepts running this server without a sandbox."""
        return (
            f'add "{self.key}" to policy.unconfined_servers in {home / "kairox.toml"} (it then runs without a sandbox)'
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "sandbox": self.sandbox,
            "network": self.network if self.allowed_domains is None else "allowlist",
            **({} if self.allowed_domains is None else {"allowed_domains": list(self.allowed_domains)}),
            "writable_roots": [str(p) for p in self.writable_roots],
            "user_owned": self.user_owned,
            "source": self.source,
        }


def _slug(text: str) -> str:
    import hashlib

    return hashlib.sha256(text.encode()).hexdigest()[:10]


def server_profile(
    section: str,
    name: str,
    entry: Any,
    *,
    layer: str,
    where: str | None,
    base_dir: Path,
    workspace: Path,
    home: Path,
    unconfined: frozenset[str] = frozenset(),
    overrides: Mapping[str, Any] | None = None,
    session_domains: Sequence[str] | None = None,
) -> ServerProfile:
    """The profile of server ``name`` of ``section`` whose entry came from ``layer`` (``where``: its file:line).

    ``unconfined``: the keys ``policy.unconfined_servers`` lists (the user's own layers only); ``overrides``: the
    profile keys ``-c`` set over this entry. ``workspace`` is where the source of a project or plugin server is
    tied to (its state folder is its own per workspace). ``session_domains``: ``sandbox.allowed_domains`` when
    ``sandbox.network = "allowlist"``."""
    user_owned = layer in USER_LAYERS
    key = join_key((section, name))
    kind = _KINDS.get(section, "server")
    sandbox = str(getattr(entry, "sandbox", None) or "workspace_write")
    network = getattr(entry, "network", None)
    if network is None:
        network = "allowlist" if session_domains is not None else True
    own = getattr(entry, "allowed_domains", None)
    domains = list(own if own is not None else session_domains or ())
    roots_text = list(getattr(entry, "writable_roots", []) or [])
    notes: list[Diagnostic] = []

    def clamped(reason: str, hint: str) -> None:  # what a project file or plugin may not set, said where it is
        notes.append(Diagnostic(kind=kind, name=name, source=where, reason=reason, hint=hint))

    workspace = Path(os.path.realpath(workspace))
    if not user_owned and sandbox == "none":
        why = "a project file or plugin cannot unconfine its own server; it runs under workspace_write"
        clamped(f'{key}.sandbox = "none" is ignored: {why}', f"to run it unconfined, {_hint(key, home)}")
        sandbox = "workspace_write"
    roots: list[Path] = []
    for text in roots_text:
        path = Path(os.path.realpath(base_dir / os.path.expanduser(str(text))))
        if not user_owned and path != workspace and workspace not in path.parents:
            why = "(a project file or plugin may not widen what its server writes)"
            hint = f"set -c '{key}.writable_roots=[\"{path}\"]' or write the server's entry in {home / 'kairox.toml'}"
            clamped(f"{key}.writable_roots names {path}, outside the workspace: ignored {why}", hint)
            continue
        roots.append(path)
    if not user_owned and session_domains is not None and network is not False:
        # a project's or plugin's server reaches at most the session's names
        wider = [d for d in domains if not covered(d, session_domains)] if network == "allowlist" else ["any host"]
        why = f"{key} may not reach {', '.join(wider)}: only your own sandbox.allowed_domains may widen the network"
        if wider:
            clamped(f"{why}; ignored", f"add the names to sandbox.allowed_domains in {home / 'kairox.toml'}")
        domains = [d for d in domains if covered(d, session_domains)] if network == "allowlist" else [*session_domains]
        network = "allowlist"
    given = dict(overrides or {})
    if "sandbox" in given:
        sandbox = str(given["sandbox"])
    if "network" in given:
        network = given["network"]
    if "writable_roots" in given:
        roots = [Path(os.path.realpath(Path.cwd() / os.path.expanduser(str(t)))) for t in given["writable_roots"]]
    if key in unconfined:
        sandbox = "none"
    return ServerProfile(
        section=section,
        name=name,
        sandbox=sandbox,
        network=network is not False,
        allowed_domains=tuple(dict.fromkeys(domains)) if network == "allowlist" else None,
        writable_roots=tuple(dict.fromkeys(roots)),
        user_owned=user_owned or key in unconfined or given.get("sandbox") == "none",
        source=layer,
        scope=None if user_owned else f"{layer}@{workspace}",
        diagnostics=tuple(notes),
    )


def _hint(key: str, home: Path) -> str:
    return (
        f'add "{key}" to policy.unconfined_servers in {home / "kairox.toml"}, or run once with -c {key}.sandbox="none"'
    )


def resolved_profile(
    resolved: "ResolvedConfig", section: str, name: str, entry: Any, *, layer: str, where: str | None, base_dir: Path
) -> ServerProfile:
    """The profile of server ``name`` of ``section`` as the resolved configuration has it: the user's
    ``policy.unconfined_servers``, the ``-c`` overrides of its keys and the session's allowlist."""
    config = resolved.config
    return server_profile(
        section,
        name,
        entry,
        layer=layer,
        where=where,
        base_dir=base_dir,
        workspace=resolved.workspace,
        home=resolved.home,
        unconfined=frozenset(config.policy.unconfined_servers),
        overrides=resolved.server_overrides.get(join_key((section, name))),
        session_domains=config.sandbox.allowed_domains if config.sandbox.network == "allowlist" else None,
    )
