"""Running commands under bubblewrap (Y6), for ``shell.exec``, hook commands and plugin command tools.

``read_only``: the whole file system read-only. ``workspace_write``: the writable roots bound read-write, with every
protected path inside the workspace and the configured roots (``.git``, ``.kairox``, ``kairox.toml``, ``.mcp.json``,
``.claude``, plugin manifests, ``hooks.json`` ..., at any depth) and the Kairox home bound back read-only. Every
capability is dropped, so a command run as root cannot remount, chown or open raw sockets. The network is unshared
unless ``network_access``; under ``allowed_domains`` the sandbox gets its own proxy's socket (``egress``, in a
folder hidden from every sandbox) and a forwarder on its own loopback that speaks to it. Host Unix sockets are out
of reach in all cases (a socket is the authority of whatever listens on it, network or not): the usual socket
folders (``SOCKET_FOLDERS`` ...) are hidden, and every socket the kernel lists as bound to a path
(``/proc/net/unix``), wherever it lies, workspace included, is covered (``bound_sockets``), except the ones
``policy.allow_unix_sockets`` names (``allowed_sockets``): one of those in a hidden folder is bound back on top of
its tmpfs. ``danger_full_access``: no sandbox. When bwrap is missing or cannot start, callers fail closed with
``SandboxUnavailableError``.

Creating a protected file where none exists cannot be refused with bind mounts; trust pins (``kairox trust``) keep
such a file from taking effect, and ``shell.exec`` reports the ones a command created.

What ``fs.read`` deny and ask rules forbid is hidden in every mode that has a sandbox (``SandboxSettings.hidden``,
named by the policy and worked out by ``kairox.sandbox`` as each command starts): a folder is covered by an empty
read-only tmpfs, a file by ``/dev/null``, so ``cat``, ``cp``, an interpreter or a symlink made earlier all find
nothing there; so are the histories of the repositories the rules reach, when those may hold what the rules hide,
and the other names of the files they cover (worked out there too). When the mask could not list everything a rule
covers (too many files to search, another name of a hidden file outside the roots), the command is refused.
"""

import contextlib
import os
import re
import shutil
import stat
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path

from kairox._rpc._guarded import guarded_argv
from kairox.config import SandboxPolicy, kairox_home
from kairox.errors import SandboxUnavailableError
from kairox.sandbox._profile import HiddenPaths, SandboxSettings
from kairox.sandbox._protected import protected_inside, sockets_under

SOCKET_FOLDERS = (Path("/run"), Path("/var/run"), Path("/tmp/.X11-unix"), Path("/tmp/.ICE-unix"))
"""Hidden (an empty tmpfs), with ``$XDG_RUNTIME_DIR`` and the folders of ``$SSH_AUTH_SOCK`` and a ``unix://``
``$DOCKER_HOST``; with the network on, ``RESOLVER_FOLDERS`` stay visible and only their sockets are covered."""
RESOLVER_FOLDERS = (Path("/run"), Path("/var/run"))
"""Where name resolution reads its files (``/etc/resolv.conf`` often links to ``/run/systemd/resolve/...``), so
they are not hidden when the network is on."""
PROC_NET_UNIX = Path("/proc/net/unix")
"""The kernel's list of the Unix sockets of this network namespace; column 8 is the path a socket is bound to
(``@`` first for an abstract one)."""
_PATH_COLUMN = re.compile(rb" (/[^\n]*)")
"""The path of a line of ``/proc/net/unix``: the other columns hold no ``/``, an abstract path starts with ``@``."""
_FRESH_MOUNTS = (Path("/dev"), Path("/proc"))
"""Mounted anew inside the sandbox: no host socket there to cover."""
_INSTALL_HINT = (
    "install bubblewrap (Debian/Ubuntu: apt-get install bubblewrap; Fedora: dnf install bubblewrap), "
    'or opt out of the sandbox with policy.sandbox_policy = "danger_full_access"'
)
_HIDE_HINT = (
    "name what the rule covers more narrowly (fs.read(config/secrets/**) rather than fs.read(**/*.key)), or move "
    "large folders out of the workspace and the writable roots"
)
_probe_cache: dict[tuple[str, bool], str | None] = {}
_walk_cache: dict[tuple[str, tuple[Path, ...]], tuple[float, frozenset[Path]]] = {}
"""Walks of folders (for sockets, for protected paths) reused by server starts within ``reuse`` seconds."""
_walk_lock = threading.Lock()


def _walked(kind: str, folders: Sequence[Path], walk: "Callable[[], Iterable[Path]]", reuse: float) -> frozenset[Path]:
    """``walk()``, or what it found less than ``reuse`` seconds ago for the same folders: servers that start
    together (a session's start) share one walk of the temp folder and the workspace instead of one each."""
    if reuse <= 0:
        return frozenset(walk())
    key = (kind, tuple(folders))
    with _walk_lock:  # starts in threads (rules on reading) wait for the one walk instead of each making its own
        now = time.monotonic()
        found = _walk_cache.get(key)
        if found is None or now - found[0] > reuse:
            found = (now, frozenset(walk()))
            _walk_cache[key] = found
    return found[1]


def find_bwrap() -> str | None:
    return shutil.which("bwrap")


def writable_roots(settings: SandboxSettings, workspace: Path) -> list[Path]:
    """The folders bound read-write under ``workspace_write`` (that exist), shallowest first."""
    if settings.mode is not SandboxPolicy.WORKSPACE_WRITE:
        return []
    real = {os.path.realpath(r) for r in (workspace, *settings.writable_roots)}
    return sorted((Path(found) for found in real if os.path.exists(found)), key=lambda p: (len(p.parts), str(p)))


def protected_roots(settings: SandboxSettings, workspace: Path) -> list[Path]:
    """Where protected paths are kept read-only and new ones reported: the workspace and the configured roots.

    Not the shared temp folder itself: every process of the machine can write there anyway, so configuration
    found there is only as good as trust pins say (a workspace or root inside it is still protected whole).
    """
    if settings.mode is SandboxPolicy.READ_ONLY:
        return []
    temp = {Path(os.path.realpath(tempfile.gettempdir())), Path("/tmp")}
    roots = writable_roots(settings, workspace) or [Path(os.path.realpath(workspace))]
    return [r for r in roots if r not in temp]


def _within(path: Path, root: Path) -> bool:
    """``path`` is ``root`` or inside it (both absolute and normalised), by their text."""
    inner, outer = str(path), str(root)
    return inner == outer or inner.startswith(outer if outer.endswith("/") else outer + "/")


def egress_folder() -> Path:
    """Where this user's egress proxies listen (``kairox.sandbox``): hidden from every sandbox (another's socket may
    allow more), and made when first asked for, so one started before any proxy hides it too."""
    folder = Path(os.path.realpath(tempfile.gettempdir())) / f"kairox-egress-{os.getuid()}"
    with contextlib.suppress(OSError):
        folder.mkdir(mode=0o700)
    return folder


def socket_folders() -> list[Path]:
    """The folders hidden from sandboxed commands: the usual ones and those the environment points at."""
    found = [*SOCKET_FOLDERS, egress_folder()]
    if os.environ.get("XDG_RUNTIME_DIR"):
        found.append(Path(os.environ["XDG_RUNTIME_DIR"]))
    for name in ("SSH_AUTH_SOCK", "DOCKER_HOST"):
        value = os.environ.get(name, "").removeprefix("unix://")
        if value.startswith("/"):
            found.append(Path(value).parent)
    real = {Path(os.path.realpath(p)) for p in found if p.is_dir() and not p.is_symlink()}
    return sorted(real, key=lambda p: (len(p.parts), str(p)))


def bound_sockets(table: Path | None = None, *, skip: Sequence[Path] = ()) -> list[Path]:
    """The Unix sockets bound to a path in this network namespace that are there now (real paths, sorted).

    Reads only the path column of ``table`` (``/proc/net/unix``); abstract and unnamed sockets, relative paths,
    paths in the folders of ``skip`` and paths that are gone or no longer a socket are left out. An unreadable
    table gives an empty list.
    """
    try:
        data = (table or PROC_NET_UNIX).read_bytes()
    except OSError:
        return []
    # a socket has one line per connection as well: each path once. The path is the one given to bind, which may
    # lead through a symlink: a socket is skipped by where it really lies (a link in a hidden folder to a folder
    # that is not hidden leaves the socket in sight), each folder resolved once, no call per skipped socket
    skipped = tuple(f"{os.path.realpath(folder)}/" for folder in skip)
    folders: dict[str, str] = {}
    found: set[str] = set()
    for raw in set(_PATH_COLUMN.findall(data)):
        parent, base = os.path.split(os.fsdecode(raw))
        if parent not in folders:  # sockets share few folders: resolve each once
            folders[parent] = os.path.realpath(parent)
        real = os.path.join(folders[parent], base)
        if real.startswith(skipped):
            continue
        try:
            if not stat.S_ISSOCK(os.lstat(real).st_mode):
                continue
        except OSError:  # gone, or in a folder this user cannot enter (nor can its commands)
            continue
        found.add(real)
    return sorted(Path(p) for p in found)


def _socket_masks(
    roots: Sequence[Path],
    workspace: Path,
    *,
    network_access: bool = False,
    allowed: Sequence[Path] = (),
    reuse: float = 0.0,
) -> tuple[list[str], list[str], list[Path]]:
    """bwrap arguments hiding host sockets: (before the roots are bound, after the roots and what is bound back
    read-only inside them), and the sockets to cover after those (``_cover_sockets``, as late as possible).

    The sockets of ``allowed`` (``policy.allow_unix_sockets``) are not covered, and one in a hidden folder is
    bound back on top of it."""
    before: list[str] = []
    after: list[str] = []
    masked: list[Path] = []
    walked = {Path(os.path.realpath(tempfile.gettempdir())), Path("/tmp")}
    resolver = {Path(os.path.realpath(p)) for p in RESOLVER_FOLDERS}
    for folder in socket_folders():
        if network_access and folder in resolver:
            walked.add(folder)  # its sockets are covered one by one instead
            continue
        inside_root = any(_within(folder, r) for r in roots)
        if (
            any(_within(folder, m) for m in masked)
            or _within(folder, workspace)
            or (inside_root and _within(workspace, folder))
        ):
            continue
        masked.append(folder)
        # outside every root: hidden first, so a root inside it is bound again on top; inside one: hidden after
        (after if inside_root else before).extend(["--tmpfs", str(folder)])
    let_through = set(allowed_sockets(allowed))
    for sock in sorted(let_through):
        if _hidden_socket(sock, masked, roots):
            # -try: one removed meanwhile is skipped (a missing source makes no mount point)
            after += ["--ro-bind-try", str(sock), str(sock)]
    # the kernel's list has every socket of this network namespace; a walk of the folders most used for sockets
    # also finds those bound in another one (a container's)
    out_of_sight = [*_FRESH_MOUNTS, *(m for m in masked if not any(r != m and _within(r, m) for r in roots))]
    folders = sorted(walked)
    under = _walked("sockets", folders, lambda: set().union(*(sockets_under(folder) for folder in folders)), reuse)
    sockets = set(bound_sockets(skip=out_of_sight)) | under
    # the workspace too: a socket there was bound by a process running outside the sandbox
    covered = [sock for sock in sorted(sockets - let_through) if not _hidden_socket(sock, masked, roots)]
    return before, after, covered


def allowed_sockets(paths: Sequence[Path]) -> list[Path]:
    """The host sockets of ``paths`` (``policy.allow_unix_sockets``) that are sockets now, by their real paths: a
    path that is missing or something else (a folder, a file) lets nothing through."""
    found: list[Path] = []
    for path in paths:
        real = os.path.realpath(path)
        try:
            if stat.S_ISSOCK(os.lstat(real).st_mode):
                found.append(Path(real))
        except OSError:
            continue
    return sorted(set(found))


def _cover_sockets(sockets: Sequence[Path]) -> list[str]:
    """bwrap arguments covering ``sockets`` with ``/dev/null``, for those that are still there.

    bwrap makes a missing mount point: one removed since the listing would leave an empty file in a writable root
    on the host, and fail the command on the read-only root. So each is checked again as the last step before
    the command starts; one gone meanwhile has nothing to reach, like a socket bound after the command started.
    One that cannot be checked (no permission) stays covered."""
    args: list[str] = []
    for sock in sockets:
        try:
            if not stat.S_ISSOCK(os.lstat(sock).st_mode):
                continue
        except (FileNotFoundError, NotADirectoryError):
            continue
        except OSError:
            pass
        args += ["--ro-bind-try", "/dev/null", str(sock)]
    return args


def _hidden_socket(sock: Path, masked: Sequence[Path], roots: Sequence[Path]) -> bool:
    """Whether ``sock`` is out of sight already: in a folder mounted anew, or in a hidden folder and not in a
    root bound again on top of it."""
    if any(_within(sock, m) for m in _FRESH_MOUNTS):
        return True
    return any(
        _within(sock, m) and not any(_within(sock, r) and r != m and _within(r, m) for r in roots) for m in masked
    )


def read_masks(hidden: HiddenPaths) -> list[str]:
    """bwrap arguments covering what the rules on reading hide; raises ``SandboxUnavailableError`` when the list
    may be incomplete (fail closed: the command does not run)."""
    if hidden.problem is not None:
        raise SandboxUnavailableError(
            f"the sandbox cannot hide everything the rules on reading forbid: {hidden.problem}",
            hint=hidden.hint or _HIDE_HINT,
        )
    args: list[str] = []
    folders: list[Path] = []
    for folder in sorted(set(hidden.folders), key=lambda p: (len(p.parts), str(p))):
        if not any(_within(folder, done) for done in folders):
            folders.append(folder)
            args += ["--tmpfs", str(folder), "--remount-ro", str(folder)]
    for file in sorted(set(hidden.files)):
        if not any(_within(file, done) for done in folders):
            # -try: a file removed meanwhile is not there to read anyway
            args += ["--ro-bind-try", "/dev/null", str(file)]
    return args


def sandboxed_argv(
    argv: Sequence[str],
    settings: SandboxSettings,
    workspace: Path,
    *,
    cwd: Path | None = None,
    bwrap: str | None = None,
    notes: list[str] | None = None,
    own: Sequence[Path] = (),
    kept: Sequence[Path] = (),
    reuse: float = 0.0,
) -> list[str]:
    """``argv`` wrapped in a bwrap invocation for ``settings``; under ``danger_full_access``, in the guard.

    Does not check that bwrap works; call ``check_sandbox`` first (once) to fail closed. Raises
    ``SandboxUnavailableError`` when what the rules on reading forbid cannot all be hidden. ``notes`` receives
    what to tell the caller if the command fails (``HiddenPaths.notes``). ``own``: folders of the process's own
    (a server's state folder), writable in every mode, the Kairox home around them included; ``kept``: folders
    kept read-only wherever they lie (caches unconfined programs share, when a writable root holds them);
    ``reuse``: seconds a walk of the temp folders and the roots may be reused (server starts; 0: walk afresh).
    """
    if settings.mode is SandboxPolicy.DANGER_FULL_ACCESS:
        # no bwrap --die-with-parent out here: the guard takes the command's group down with the host
        return guarded_argv(argv)
    workspace = Path(os.path.realpath(workspace))
    roots = writable_roots(settings, workspace)
    args = [bwrap or find_bwrap() or "bwrap", "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"]
    before, after, sockets = _socket_masks(
        roots, workspace, network_access=settings.network_access, allowed=settings.allowed_sockets, reuse=reuse
    )
    args += before
    for root in roots:
        args += ["--bind", str(root), str(root)]
    # bound after the roots so they stay read-only inside them
    # (-try: a path another process removes meanwhile is skipped rather than failing the command)
    guarded = protected_roots(settings, workspace)
    for path in sorted(_walked("protected", guarded, lambda: protected_inside(guarded), reuse)):
        args += ["--ro-bind-try", str(path), str(path)]
    home = Path(os.path.realpath(kairox_home()))
    if any(_within(home, root) for root in roots):
        home.mkdir(parents=True, exist_ok=True)  # an absent home would be created by the command, trust store and all
        args += ["--ro-bind", str(home), str(home)]
    for folder in (os.path.realpath(f) for f in kept):
        if any(_within(Path(folder), root) for root in roots):
            args += ["--ro-bind-try", folder, folder]
    # after the home: a state folder lies inside it; resolved, as bwrap cannot bind through a link
    for folder in (os.path.realpath(f) for f in own):
        args += ["--bind", folder, folder]
    args += after  # after what is bound back: a socket in .git (git's fsmonitor) would show again
    reading: list[str] = []
    if settings.hidden is not None:
        hidden = settings.hidden()
        where = cwd or workspace
        around = next((f for f in hidden.folders if _within(where, f)), None)
        if around is not None:  # bwrap would fail to enter it: say why
            raise SandboxUnavailableError(
                f"the rules on reading hide {around}, so a command cannot run in {where}",
                hint="run it in another folder, or narrow the fs.read rule so that it leaves this one out",
            )
        reading = read_masks(hidden)
        if notes is not None:
            notes += hidden.notes
    # checked again after the rules on reading were worked out (which may search folders for a while)
    args += _cover_sockets(sockets)
    args += reading  # last, so nothing bound above shows a hidden path again
    launcher: tuple[str, ...] = ()
    if settings.allowed_domains is not None and settings.egress is not None and not settings.network_access:
        proxy, launcher = settings.egress(settings.allowed_domains)  # no proxy: no network at all
        args += ["--ro-bind", str(proxy), str(proxy)]
    if not settings.network_access:
        args.append("--unshare-net")
    # root inside the sandbox is powerless: no capability survives (and bwrap sets no_new_privs)
    args += ["--cap-drop", "ALL", "--unshare-pid", "--die-with-parent", "--new-session"]
    args += ["--chdir", str(cwd or workspace)]
    args.append("--")
    args += [*launcher, *argv]
    return args


SETUP_ATTEMPTS = 3
"""How many times a sandboxed command is started when bwrap stops before it because a path it was to cover is gone."""


def vanished_before_start(
    argv: Sequence[str], code: int | None, stdout: bytes | bytearray, stderr: bytes | bytearray
) -> bool:
    """Whether bwrap stopped before starting the command because a path it was to cover with ``/dev/null`` was gone
    by the time it mounted over it (a host socket removed, or a hidden file deleted, after they were listed; bwrap
    then fails to make the mount point where the file system is read-only). Such a run did nothing, so building the
    command line again (that path is no longer listed) and starting it once more is safe.

    Read from what the run printed: bwrap's own message names the path, and the path must be gone now. A command
    that prints the same words itself only runs again, under the decision it already had."""
    if code != 1 or stdout.strip() or not argv or os.path.basename(argv[0]) != "bwrap":
        return False
    first = stderr.split(b"\n", 1)[0].decode("utf-8", errors="replace")
    if not first.startswith("bwrap: "):
        return False
    covered = {
        argv[i + 2] for i in range(1, len(argv) - 2) if argv[i] == "--ro-bind-try" and argv[i + 1] == "/dev/null"
    }
    return any(f" {path}:" in first or first.endswith(f" {path}") for path in covered if not os.path.lexists(path))


def check_sandbox(settings: SandboxSettings, *, bwrap: str | None = None) -> str | None:
    """The bwrap executable to use for ``settings`` (None when no sandbox is wanted).

    Raises ``SandboxUnavailableError`` when bwrap is missing or cannot create the sandbox here (for example
    inside a container without user namespaces). The probe runs once per process and network setting.
    """
    if settings.mode is SandboxPolicy.DANGER_FULL_ACCESS:
        return None
    path = bwrap or find_bwrap()
    if path is None:
        raise SandboxUnavailableError(
            f"the {settings.mode} sandbox needs bubblewrap (bwrap), which is not installed", hint=_INSTALL_HINT
        )
    key = (path, settings.network_access)
    if key not in _probe_cache:
        probe = [path, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--cap-drop", "ALL", "--unshare-pid"]
        if not settings.network_access:
            probe.append("--unshare-net")
        probe += ["--", "true"]
        try:
            done = subprocess.run(probe, capture_output=True, text=True, timeout=20, check=False)
            _probe_cache[key] = (
                None if done.returncode == 0 else (done.stderr.strip() or f"exit code {done.returncode}")
            )
        except (OSError, subprocess.TimeoutExpired) as exc:
            _probe_cache[key] = str(exc)
    problem = _probe_cache[key]
    if problem is not None:
        raise SandboxUnavailableError(
            f"bubblewrap ({path}) cannot create the {settings.mode} sandbox: {problem}", hint=_INSTALL_HINT
        )
    return path
