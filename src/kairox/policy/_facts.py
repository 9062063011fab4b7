"""What rules are matched against: a tool's effective profile, and the facts of one call (its command, its
paths, its values), worked out from the arguments. The facts about files (symlinks, scripts a command runs) are
the host's answers (``PolicySettings.host``); nothing here opens a file."""

import itertools
import os
import re
import shlex
from collections.abc import Iterable, Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

from kairox.policy._rules import _THIRD_PARTY
from kairox.policy._scripts import look_into
from kairox.policy._settings import PolicySettings
from kairox.policy._shell import ShellCommand, split_command
from kairox.policy._values import every_string
from kairox.tools import Access, Confinement, PermissionProfile, ProgramArgs, ToolSource, ToolSpec, url_host

# --- paths named in the arguments of third-party tools (MCP servers, plugin commands), by argument name ----------
#
# A server's schema does not say which of its arguments are files, so Kairox looks for the names tools use for
# them (``path``, ``paths``, ``file``, ``filename``, ``repo_path``, ``directory``, ``source``/``destination`` ...)
# and for ``file:`` URIs in any string (``file:///abs``, ``file:/abs``, ``file://localhost/abs``, any case of
# ``file``, percent-encoded). It is best effort: a tool that calls its path ``q`` is not seen. What is found is
# held to the deny rules on paths and to the protected paths, as the built-in tools' paths are.
#
# The scan is bounded (64 paths, 64 entries of a list or an object, lists and objects nested 6 deep) and says when
# it stopped before something that may name a path, so the policy can ask instead of deciding on part of the call.

_NAMES = frozenset(
    """
    path paths file files filename filenames filepath filepaths dir dirs directory directories folder folders root
    roots cwd workdir workingdirectory source sources destination destinations src dest dst target targets output
    outputs input inputs location notebook repo repository
    """.split()
)
_SUFFIXES = tuple("path paths file files filename filenames dir dirs directory directories folder".split())
_URI_NAMES = frozenset({"uri", "uris", "url", "urls", "href"})
_MAX_DEPTH = 6
"""Lists and objects nested deeper than this are not read."""
_MAX_FOUND = 64
"""Paths taken from one call (each is resolved against the file system)."""
_MAX_ITEMS = 64
"""Entries read of the arguments, of a list or of an object."""
LIMITS = f"{_MAX_FOUND} paths, {_MAX_ITEMS} entries per list or object, nesting {_MAX_DEPTH} deep"
"""What one call may hold for the policy to read all of it, in words."""


def _normal(key: str) -> str:
    return key.lower().replace("_", "").replace("-", "")


_PLAIN, _PATH, _URI = 0, 1, 2


def _is_path_name(key: str) -> bool:
    name = _normal(key)
    return name in _NAMES or name.endswith(_SUFFIXES)


def _key_kind(key: str) -> int:
    """Whether a string under this name is a path (``_PATH``), a URI field (``_URI``) or anything else."""
    name = _normal(key)
    return _URI if name in _URI_NAMES else _PATH if _is_path_name(key) else _PLAIN


def _is_file_uri(text: str) -> bool:
    """``file:`` (any case) and then no space: ``file:/abs``, ``file:///abs``, ``FILE://localhost/abs``; a line of
    prose such as ``file: notes`` is not one."""
    return len(text) > 5 and text[:5].lower() == "file:" and not text[5].isspace()


def _file_uri(text: str, found: list[str]) -> None:
    """Adds the paths a ``file:`` URI may open to ``found``: its path, percent-decoded (``/etc/pa%73swd`` is
    ``/etc/passwd``), and for a host other than ``localhost`` (``file://etc/passwd``) also host and path read as
    one relative path, as a server that strips ``file://`` would open it."""
    parts = urlsplit(text)
    path = unquote(parts.path)
    if path.startswith("//"):  # `file:////etc/x`: the system reads the leading slashes as one
        path = "/" + path.lstrip("/")
    host = parts.netloc
    if path:
        found.append(path)
    if host and host.lower() != "localhost":
        found.append(unquote(host + parts.path))


def scan_path_arguments(arguments: Mapping[str, Any], found: list[str]) -> str | None:
    """Appends the paths ``arguments`` name to ``found`` (values of path-like keys, also in lists and nested objects,
    and every ``file://`` URI, the first 64); returns why the scan stopped
    before something that may name another, or None when it read all that could. (The caller's list, and no tuple
    back: this runs on every call of a third-party tool.)"""
    unseen: str | None = None
    items: Iterable[tuple[Any, Any]]
    if len(arguments) <= _MAX_ITEMS:
        items = arguments.items()
    else:
        items = itertools.islice(arguments.items(), _MAX_ITEMS)
        if any(_may_name_path(str(k), v) for k, v in itertools.islice(arguments.items(), _MAX_ITEMS, None)):
            unseen = f"the call has {len(arguments)} arguments and the policy reads the first {_MAX_ITEMS}"
    for name, value in items:
        if type(value) is str:  # the usual flat call: one pass, no recursion
            text = value.strip()
            if ":" in text and _is_file_uri(text):
                _file_uri(text, found)
            elif text and _key_kind(str(name)) == _PATH and "://" not in text:
                found.append(text)
        elif isinstance(value, list | dict | str):
            unseen = _walk(value, str(name), 1, found, str(name)) or unseen
        if len(found) > _MAX_FOUND:
            del found[_MAX_FOUND:]
            return f"the call names more than {_MAX_FOUND} paths and the policy reads the first {_MAX_FOUND}"
    return unseen


def _walk(value: Any, key: str | None, depth: int, found: list[str], top: str) -> str | None:
    """Adds the paths ``value`` (within argument ``top``) names to ``found``, one more than the limit at most;
    returns why part of it was not read, or None."""
    if isinstance(value, str):
        text = value.strip()
        if _is_file_uri(text):
            _file_uri(text, found)
        elif text and key is not None and _key_kind(key) == _PATH and "://" not in text:
            found.append(text)
        return None
    if not isinstance(value, list | dict):
        return None
    if depth > _MAX_DEPTH:
        entries = value.items() if isinstance(value, dict) else ((key, item) for item in value)
        if any(_may_name_path(None if k is None else str(k), v) for k, v in entries):
            return (
                f"argument {top!r} nests lists or objects more than "
                f"{_MAX_DEPTH} deep and the policy reads {_MAX_DEPTH} levels"
            )
        return None
    unseen: str | None = None
    if isinstance(value, list):
        for item in value[:_MAX_ITEMS]:
            unseen = _walk(item, key, depth + 1, found, top) or unseen
            if len(found) > _MAX_FOUND:
                return unseen
        if len(value) > _MAX_ITEMS and any(_may_name_path(key, item) for item in value[_MAX_ITEMS:]):
            unseen = (
                unseen
                or f"argument {top!r} holds a list of {len(value)} items and the policy reads the first {_MAX_ITEMS}"
            )
    elif isinstance(value, dict):
        for name, item in itertools.islice(value.items(), _MAX_ITEMS):
            unseen = _walk(item, str(name), depth + 1, found, top) or unseen
            if len(found) > _MAX_FOUND:
                return unseen
        if len(value) > _MAX_ITEMS and any(
            _may_name_path(str(k), v) for k, v in itertools.islice(value.items(), _MAX_ITEMS, None)
        ):
            unseen = (
                unseen
                or f"argument {top!r} holds an object of {len(value)} "
                f"entries and the policy reads the first {_MAX_ITEMS}"
            )
    return unseen


def _may_name_path(key: str | None, value: Any) -> bool:
    """Whether a value the scan did not read may name a path: text it would have taken, or more lists or objects."""
    if isinstance(value, str):
        text = value.strip()
        return _is_file_uri(text) or (bool(text) and key is not None and _key_kind(key) == _PATH and "://" not in text)
    return isinstance(value, list | dict) and bool(value)


# --- the facts of a call ------------------------------------------------------------------------------------------

_ACCESS_ORDER = (Access.READ, Access.WRITE, Access.EXECUTE, Access.EXTERNAL)
_SOURCE_FLOOR = {
    ToolSource.BUILTIN: Access.READ,
    ToolSource.SKILL: Access.READ,
    ToolSource.LSP: Access.READ,
    ToolSource.DAP: Access.EXECUTE,
    ToolSource.PLUGIN: Access.EXECUTE,
    ToolSource.MCP: Access.EXTERNAL,
}
"""The least authority a tool of each source is assumed to need, whatever it declares."""
_PROCESS_RELATIVE = re.compile(r"\s*(?:file://)?/+proc/+(?:self|thread-self|[0-9]+)(?:/|$)")
"""A path under ``/proc`` that names files by a process (its folder, its root, its open files)."""
_OS_SANDBOXED = frozenset({ToolSource.BUILTIN, ToolSource.PLUGIN, ToolSource.DAP})
"""Sources whose execute tools run their programs under Kairox's OS sandbox (``shell.exec``, plugin commands, the
debug adapter and its debuggee), unless a tool declares ``Confinement.NONE`` (``dap.attach``)."""


def runs_unsandboxed(spec: ToolSpec) -> bool:
    """Whether the tool works on programs that no OS sandbox of Kairox holds (a process ``dap.attach`` reaches)."""
    profile = effective_profile(spec)
    return profile.access is Access.EXECUTE and (
        spec.source not in _OS_SANDBOXED or profile.confinement is Confinement.NONE
    )


def starts_sandboxed(spec: ToolSpec) -> bool:
    """Whether each call starts its programs under the OS sandbox of the call's settings (``shell.exec``,
    ``dap.launch``), so that running it again outside the sandbox (``on_failure``) is a different call; not a tool
    that works on a program started earlier (``dap.continue``)."""
    profile = effective_profile(spec)
    return (
        not runs_unsandboxed(spec) and profile.access is Access.EXECUTE and profile.confinement is Confinement.SANDBOX
    )


def effective_profile(spec: ToolSpec) -> PermissionProfile:
    """The profile the policy holds a tool to: its source's floor, narrowed by what it declares.

    A declaration or annotation can only add caution. An MCP tool is a write with open-world effects unless it
    says ``readOnlyHint: true`` and the user trusts that server's annotations (``trust_annotations``); then it
    is a read, open-world unless it says ``openWorldHint: false``.
    """
    declared = spec.permission
    floor = _SOURCE_FLOOR[spec.source]
    access = max(declared.access, floor, key=_ACCESS_ORDER.index)
    notes = spec.annotations
    destructive = declared.destructive or notes.destructive_hint is True
    open_world = declared.open_world or notes.open_world_hint is True
    if spec.source is ToolSource.MCP:
        trusted_read = mcp_read_only(spec)
        destructive = destructive or not trusted_read
        open_world = open_world or not trusted_read or notes.open_world_hint is not False
    return replace(declared, access=access, destructive=destructive, open_world=open_world)


def mcp_read_only(spec: ToolSpec) -> bool:
    """An MCP tool that only reads: it says so (``readOnlyHint: true``) and the user trusts its server's hints."""
    return spec.source is ToolSource.MCP and spec.annotations_trusted and spec.annotations.read_only_hint is True


class CallFacts:
    """What rules are matched against, worked out once per call; the string values only when a rule asks."""

    __slots__ = ("_every", "arguments", "command", "named", "paths", "scan_unseen", "skill", "unseen")

    def __init__(
        self,
        *,
        command: ShellCommand | None,
        paths: tuple[Path, ...],
        arguments: Mapping[str, Any],
        skill: str | None,
        named: tuple[Path, ...] = (),
        unseen: str | None = None,
        scan_unseen: bool = False,
    ) -> None:
        self.command = command
        self.paths = paths
        """Every path of the call: the declared path arguments' and ``named``."""
        self.named = named
        """The paths found by argument names in a third-party tool's call (``path``, ``file``, ``file://`` URIs ...),
        besides the arguments it declares as paths."""
        self.unseen = unseen
        """Why part of the arguments was not read for paths (past
        the scan's limits), or None: ``paths`` may miss some."""
        self.scan_unseen = scan_unseen
        """``unseen`` comes from the scan by names (else from a declared path argument that holds no text)."""
        self.arguments = arguments
        self.skill = skill
        self._every: tuple[str, ...] | None = None

    def url_host(self, spec: ToolSpec) -> str | None:
        """The host the call's URL reaches, for a tool that names its URL argument (``url_argument``)."""
        argument = spec.meta.get("url_argument")
        return url_host(self.arguments.get(argument)) if argument else None

    @property
    def every_value(self) -> tuple[str, ...]:
        """Every string the call holds, also inside lists and objects and the keys of those (a skill's name first),
        for deny and ask rules with a specifier: a value must not get past them by being nested or being a key.
        (Allow rules on values vouch only when every value matches: see ``kairox.policy._values``.)"""
        if self._every is None:
            self._every = (*([] if self.skill is None else [self.skill]), *every_string(self.arguments))
        return self._every


def call_facts(
    settings: PolicySettings, spec: ToolSpec, arguments: Mapping[str, Any], *, look_into_scripts: bool
) -> CallFacts:
    """The facts of one call. ``look_into_scripts``: a deny or ask rule on the tool's commands is in force, so the
    scripts and programs its command starts are read (through the host) and their commands added."""
    profile = spec.permission
    command = None
    if profile.command_arg is not None:
        line = command_line(settings, spec, arguments)
        if line is not None:
            command = split_command(line)
            if look_into_scripts:  # only then are the scripts and programs it starts looked into
                command = _looked_into(settings, command, spec, arguments)
    paths: list[Path] = []
    unseen: str | None = None
    for name in profile.path_args:
        value = arguments.get(name)
        items = value if isinstance(value, list) else [value]
        for item in items:
            if isinstance(item, str):
                if item.strip():
                    paths.append(settings.resolved(item))
            elif item is not None:  # a schema that lets more than text through: the tool may still read a path in it
                unseen = f"argument {name!r} holds a {type(item).__name__} where the policy reads a path"
    named: list[Path] = []
    scan_unseen = False
    if spec.source in _THIRD_PARTY:
        # also when it declares path arguments: a plugin's manifest may name `input` and leave out `output_file`
        declared = profile.path_args
        rest = {k: v for k, v in arguments.items() if k not in declared} if declared else arguments
        found: list[str] = []
        scanned = scan_path_arguments(rest, found)
        if scanned is not None and unseen is None:
            unseen, scan_unseen = scanned, True
        elsewhere = next((item for item in found if _PROCESS_RELATIVE.match(item)), None)
        if elsewhere is not None and unseen is None:
            # /proc/self/cwd/... means the folders of the process that opens it: the tool's server, not Kairox
            unseen = (
                f"{elsewhere!r} names a file by the process that opens it "
                f"(/proc/self, /proc/PID), which Kairox cannot see for {spec.name}"
            )
        named = [settings.resolved(item) for item in found]
    skill = spec.origin if spec.source is ToolSource.SKILL and spec.origin else None
    return CallFacts(
        command=command,
        paths=(*paths, *named),
        arguments=arguments,
        skill=skill,
        named=tuple(named),
        unseen=unseen,
        scan_unseen=scan_unseen,
    )


def _looked_into(
    settings: PolicySettings, command: ShellCommand, spec: ToolSpec, arguments: Mapping[str, Any]
) -> ShellCommand:
    cwd = None if spec.permission.cwd_arg is None else arguments.get(spec.permission.cwd_arg)
    folder = settings.workspace
    if isinstance(cwd, str) and cwd.strip():
        folder = settings.resolved(cwd)
    return look_into(
        command,
        cwd=folder,
        roots=settings.writable_roots,
        host=settings.host,
        entered=int(folder != settings.workspace),
    )


def in_folder(settings: PolicySettings, command: str, cwd: object) -> str:
    """The command as the rules see it: run in a folder other than the workspace root, it is ``cd DIR && ...``
    (``make test`` there runs that folder's Makefile), so a rule for the command alone does not cover it."""
    if not isinstance(cwd, str) or not cwd.strip():
        return command
    if settings.resolved(cwd) == settings.workspace:
        return command
    return f"cd {shlex.quote(cwd)} && {command}"


def command_line(settings: PolicySettings, spec: ToolSpec, arguments: Mapping[str, Any]) -> str | None:
    """The command line a call runs, as a person should see it and the rules see it (see
    ``PolicyEngine.command_line``)."""
    profile = spec.permission
    value = None if profile.command_arg is None else arguments.get(profile.command_arg)
    if not isinstance(value, str) and profile.program is not None:
        value = program_line(profile.program, arguments)
    if not isinstance(value, str):
        return None
    return in_folder(settings, value, None if profile.cwd_arg is None else arguments.get(profile.cwd_arg))


def program_line(names: ProgramArgs, arguments: Mapping[str, Any], *, interpreter: str | None = None) -> str | None:
    """``[NAME=VALUE ...] PROGRAM ARG ...`` of a call that names a program, quoted for a shell; None without one.
    With ``interpreter``: ``[NAME=VALUE ...] INTERPRETER PROGRAM ARG ...``."""
    program = arguments.get(names.program)
    if not isinstance(program, str):
        return None
    args = arguments.get(names.args) if names.args else None
    env = arguments.get(names.env) if names.env else None
    # `env NAME=VALUE`: shlex quotes a variable word whole ('A=b
    # c'), which a shell reads as an assignment only after env
    words = ["env", *(f"{k}={v}" for k, v in env.items())] if isinstance(env, dict) and env else []
    words += [interpreter, program] if interpreter else [program]
    words += [str(a) for a in args] if isinstance(args, list) else []
    return shlex.join(words)


_INTERPRETERS = {
    ".py": ("python", "python3"),
    ".js": ("node",),
    ".mjs": ("node",),
    ".cjs": ("node",),
    ".sh": ("sh", "bash"),
}
"""What runs a program file of each kind, as rules name it (a debug adapter starts the debuggee through it)."""


def program_lines(names: ProgramArgs, arguments: Mapping[str, Any]) -> list[str]:
    """The command lines a program-naming call runs, for the shell.exec rules: as written, and through the
    interpreter of the program's kind."""
    line = program_line(names, arguments)
    if line is None:
        return []
    program = str(arguments.get(names.program))
    kinds = _INTERPRETERS.get(os.path.splitext(program)[1].lower(), ())
    return [line, *(program_line(names, arguments, interpreter=name) or line for name in kinds)]
