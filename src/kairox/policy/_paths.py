"""Paths as the file system sees them: resolved before any rule is matched, and globbed safely.

``fs.read(~/.ssh/**)`` must also catch ``/home/me/.ssh/id_rsa``, ``../../.ssh/id_rsa`` and a symlink into
``~/.ssh``, so both the argument and the rule's literal prefix are resolved (``~``, ``..``, symlinks).
"""

from collections.abc import Iterable
from pathlib import Path

from kairox._util._pathglob import PathPattern, is_within, split_literal
from kairox.policy._host import HostFacts, host_files
from kairox.sandbox import PROTECTED_DIRS, PROTECTED_FILES, SHELL_RC_FILES

# writes under PROTECTED_DIRS (the repository, the hosts' project folders, plugin manifests) and to PROTECTED_FILES
# (project configuration, a plugin's hooks.json and .lsp.json) are always asked about: the sandbox keeps them
# read-only, and a write there changes what later sessions of a trusted workspace may do
_PROTECTED_WHAT = {
    "kairox.toml": "this workspace's project configuration",
    ".mcp.json": "a project's MCP server list",
    "hooks.json": "a plugin's hook list",
    ".lsp.json": "a plugin's language server list",
}
"""What each protected file is, for the approval's reason (the user's own file is named apart, as such)."""


def resolve_path(value: str, *, base: Path, home: Path, host: HostFacts | None = None) -> Path:
    """``~`` and ``~name`` expanded, relative to ``base``, ``..`` folded and symlinks followed (as far as they exist):
    ``os.path.realpath``, by the kernel's own walk when the file exists. The following of links is the host's
    answer (``host``: the caller's; by default ``kairox.sandbox``'s view of this machine)."""
    host = host or host_files()
    text = value.strip()
    if text == "~" or text.startswith("~/"):
        text = str(home) + text[1:]
    elif text.startswith("~"):
        # `~name/...`: the tools expand it to that user's home, so the rules must see the same place
        text = host.expand_user(text)
    if not text.startswith("/"):
        text = str(base).rstrip("/") + "/" + text  # strings until the end: realpath folds what Path would have
    return Path(host.real_path(text))


def protected_reason(
    path: Path, *, home: Path, own_dirs: Iterable[Path] = (), workspace: Path | None = None
) -> str | None:
    """Why a write to ``path`` always needs a person's approval, or None. ``own_dirs``: Kairox's own folders
    (``$KAIROX_HOME``), protected whole. The reason names what the file is to the user: their own configuration,
    the ``workspace``'s project configuration, or a configuration file elsewhere."""
    for own in own_dirs:
        if is_within(path, own):
            if path.parent == own and path.name == "kairox.toml":  # the user layer's file, named as such
                return (
                    f"{path} is your user configuration (it applies to every "
                    "workspace), which is always asked about before a write"
                )
            return (
                f"{path} is inside {own}, Kairox's own configuration and "
                "trust store, which is always asked about before a write"
            )
    for part in path.parts[:-1] if path.name not in PROTECTED_DIRS else path.parts:
        if part in PROTECTED_DIRS:
            return f"{path} is inside a {part} folder, which is always asked about before a write"
    if path.name in PROTECTED_FILES:
        what = _PROTECTED_WHAT.get(path.name, "configuration")
        if path.name == "kairox.toml" and (workspace is None or not is_within(path, workspace)):
            what = "a Kairox configuration file outside this workspace"
        return f"{path} is {what} (it can widen what later sessions may do), which is always asked about before a write"
    if path.name in SHELL_RC_FILES:
        return f"{path} is a shell start-up file, which is always asked about before a write"
    if is_within(path, home / ".config" / "fish"):
        return f"{path} is a shell start-up file, which is always asked about before a write"
    return None


def parse_pattern(text: str, *, base: Path, home: Path, host: HostFacts | None = None) -> PathPattern:
    """The pattern a rule's path part means: a name glob (``*.env``) as it is, anything else anchored at its
    literal folders, resolved (``~``, relative to ``base``, symlinks followed)."""
    text = text.strip()
    if "/" not in text and not text.startswith("~"):
        return PathPattern(glob=text, anywhere=True)
    literal, rest = split_literal(text)
    anchored = resolve_path(literal or ".", base=base, home=home, host=host)
    glob = str(anchored) if not rest else str(anchored).rstrip("/") + "/" + rest
    return PathPattern(glob=glob, anywhere=False)


def writable_reason(path: Path, roots: Iterable[Path]) -> str | None:
    """Why a write to ``path`` is outside the writable roots, or None when it is inside one."""
    roots = tuple(roots)
    if any(is_within(path, root) for root in roots):
        return None
    listed = ", ".join(str(r) for r in roots) or "(none)"
    return f"{path} is outside the writable roots ({listed})"
