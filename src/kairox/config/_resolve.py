"""``resolve_config``: every layer read, validated, merged with provenance, and held to workspace trust."""

import dataclasses
import functools
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from kairox._util._decode import DecodeProblem, decode_toml
from kairox.config._keys import join_key, key_positions, split_key
from kairox.config._layers import (
    Layer,
    LayerInfo,
    LayerStatus,
    find_workspace,
    kairox_home,
    local_config_path,
    project_config_path,
    system_config_path,
)
from kairox.config._mcp_json import MCP_JSON
from kairox.config._merge import KeyOrigin, LayerData, Merged, merge
from kairox.config._models import KairoxConfig
from kairox.config._parse_cache import PARSE_CACHE, ConfigParseCache, ParsedFile
from kairox.config._pins import PinnedValue, read_mcp_json_entries, reads_files
from kairox.config._trust import TrustReview, TrustStore
from kairox.config._trust_gate import PROJECT_LAYERS, PendingTrust, TrustGate, base_folder
from kairox.config._validate import problems_from_validation
from kairox.errors import ConfigProblem, Diagnostic
from kairox.events import ConfigLoaded, EventSink

ENV_KEYS: dict[str, str] = {
    "KAIROX_MODEL": "model",
    "KAIROX_MODEL_PROVIDER": "model_provider",
    "KAIROX_PROFILE": "profile",
    "KAIROX_APPROVAL_POLICY": "policy.approval_policy",
    "KAIROX_SANDBOX_POLICY": "policy.sandbox_policy",
    "KAIROX_NETWORK_ACCESS": "policy.network_access",
}
"""Environment variables read as configuration. ``KAIROX_CONFIG__A__B=v`` sets any key ``a.b``."""
ENV_GENERIC_PREFIX = "KAIROX_CONFIG__"

_FILE_LAYERS = (Layer.SYSTEM, Layer.USER, Layer.PROJECT, Layer.LOCAL)
_PROFILE_KEYS = frozenset({"profile", "profiles"})


@dataclass(frozen=True, kw_only=True, slots=True)
class PolicyRule:
    """One permission rule and the place it was written."""

    action: str
    """``allow``, ``ask`` or ``deny``."""
    pattern: str
    layer: Layer
    file: Path | None = None
    line: int | None = None
    source: str | None = None

    def where(self) -> str:
        if self.file is not None:
            return f"{self.file}:{self.line}" if self.line else str(self.file)
        return self.source or str(self.layer)


def parse_cli_value(text: str) -> Any:
    """``-c key=value``: the value as TOML when it parses, else the text itself."""
    try:
        return decode_toml(f"v = {text}")["v"]
    except DecodeProblem:
        return text


def _nest(key: str, value: Any) -> dict[str, Any]:
    parts = split_key(key)
    root: dict[str, Any] = {}
    node = root
    for part in parts[:-1]:
        node = node.setdefault(part, {})
    node[parts[-1]] = value
    return root


def _deep_update(target: dict[str, Any], extra: dict[str, Any]) -> None:
    for name, value in extra.items():
        if isinstance(value, dict) and isinstance(target.get(name), dict):
            _deep_update(target[name], value)
        else:
            target[name] = value


@dataclass(kw_only=True)
class ResolvedConfig:
    """The effective configuration with provenance, trust state and every problem found."""

    config: KairoxConfig
    workspace: Path
    home: Path
    trusted: bool
    profile: str | None
    layers: tuple[LayerInfo, ...]
    provenance: dict[str, KeyOrigin]
    rules: tuple[PolicyRule, ...]
    pending: tuple[PendingTrust, ...] = ()
    problems: tuple[ConfigProblem, ...] = ()
    diagnostics: tuple[Diagnostic, ...] = ()
    pinnable: tuple[PinnedValue, ...] = ()
    """Every project value trust covers, fingerprinted: what ``kairox trust`` records."""
    server_overrides: dict[str, dict[str, Any]] = field(default_factory=dict)
    """Profile keys ``-c`` set over a server entry, by the entry's key (``mcp_servers.x`` -> ``{"sandbox": "none"}``):
    they apply to the entry in effect, wherever it was written (``.mcp.json`` and plugins included)."""
    _files: dict[Layer, Path] = field(default_factory=dict)

    @property
    def pending_trust(self) -> frozenset[str]:
        """Keys whose value in effect comes from an untrusted project layer and must not be used yet."""
        return frozenset(p.key for p in self.pending if not p.replaces_trusted)

    def is_pending(self, key: str) -> bool:
        """Whether ``key`` (or the entry or table holding it) waits for ``kairox trust``."""
        return any(key == p or key.startswith(p + ".") for p in self.pending_trust)

    def origin(self, key: str) -> KeyOrigin | None:
        """Where ``key`` (or the nearest table or entry holding it) got its value."""
        probe = key
        while probe:
            if probe in self.provenance:
                return self.provenance[probe]
            probe = probe.rpartition(".")[0]
        return None

    def from_project(self, key: str) -> bool:
        """Whether the value in effect for ``key`` was written in
        a project file (project, local, or a profile there)."""
        origin = self.origin(key)
        project_files = {self._files.get(Layer.PROJECT), self._files.get(Layer.LOCAL)}
        return origin is not None and (
            origin.layer in PROJECT_LAYERS or (origin.file is not None and origin.file in project_files)
        )

    def base_dir(self, key: str) -> Path:
        """The folder of the file that set ``key``: relative paths in that value are relative to it."""
        return base_folder(self.origin(key), self.workspace)

    def layer_file(self, layer: Layer) -> Path:
        """The file ``kairox config set --layer`` edits for ``layer``."""
        if layer not in self._files:
            raise ValueError(f"layer {layer} has no file")
        return self._files[layer]

    def layer_of(self, file: Path) -> Layer | None:
        """The layer whose file ``file`` is (also when spelled another way: a symlink, ``..``), or None.

        The layer whose own path ``file`` spells comes first: a project file that is a link to the user's file is
        the project file when named as such, though both are one file. Another spelling of a file two layers
        share counts as the project's (or local's): the workspace made them one."""
        spelled = os.path.abspath(file)
        named = next((layer for layer, path in self._files.items() if os.path.abspath(path) == spelled), None)
        if named is not None:
            return named
        real = os.path.realpath(file)
        found = [layer for layer, path in self._files.items() if os.path.realpath(path) == real]
        return next((layer for layer in found if layer in PROJECT_LAYERS), found[0] if found else None)

    def linked_to(self, file: Path) -> Path | None:
        """Where a write to ``file`` lands when a link (the file's, or a folder's on its way) sends it elsewhere;
        None when it lands where it is spelled."""
        real = os.path.realpath(file)
        return Path(real) if real != os.path.abspath(file) else None

    def redirected_write(self, file: Path) -> str | None:
        """Why a write to ``file`` is refused, trusted workspace or not: it names a file of the workspace (the
        project or local file, or any file reached through the workspace) but a link makes it the user's or the
        system file, so a change meant for this workspace would hold in every workspace. None otherwise; the
        user's file named by its own path is always the user's, even when the workspace holds it."""
        spelled, real = os.path.abspath(file), os.path.realpath(file)
        for layer in (Layer.USER, Layer.SYSTEM):
            own = self._files.get(layer)
            if own is None or os.path.abspath(own) == spelled or os.path.realpath(own) != real:
                continue
            named = self.layer_of(file)
            if named in PROJECT_LAYERS or self._through_workspace(file):
                what = f"the {named} file of this workspace" if named in PROJECT_LAYERS else "a file of this workspace"
                how = (
                    f"a link to {real}, your {layer} file"
                    if real != spelled
                    else f"your {layer} file too ({own} is a link to it)"
                )
                return f"{file} is {what} but {how}: a change meant for this workspace would hold in every workspace"
        return None

    def _through_workspace(self, file: Path) -> bool:
        """Whether the way to ``file`` passes through the workspace: one of its folders, as the kernel finds it, is
        the workspace or inside it (``..`` is walked as the kernel walks it, not dropped by spelling)."""
        root = Path(os.path.realpath(self.workspace))
        path = Path(os.getcwd(), file)
        for depth in range(1, len(path.parts)):
            folder = Path(os.path.realpath(Path(*path.parts[:depth])))
            if folder == root or root in folder.parents:
                return True
        return False

    def untrusted_file(self, file: Path) -> str | None:
        """What ``file`` is to this workspace while it is untrusted (``the project file``, ``the .mcp.json file``,
        ``a file``), so that a write into it waits for the user's say; None when a write needs none: the
        workspace is trusted, or the file is not the workspace's (the user's own file never is, wherever it lies).

        Any file inside the workspace counts, so a writer naming one that no layer knows is asked about rather
        than let through."""
        if self.trusted:
            return None
        layer = self.layer_of(file)
        if layer in PROJECT_LAYERS:
            return f"the {layer} file"
        if layer is not None:
            return None
        real, root = Path(os.path.realpath(file)), Path(os.path.realpath(self.workspace))
        if root not in real.parents:
            return None
        return f"the {MCP_JSON} file" if file.name == MCP_JSON else "a file"

    def item_pin(self, layer: Layer, key: str, item: str) -> PinnedValue:
        """The pin of one list item in ``layer``'s file (an allow rule), as the next resolve fingerprints it: what
        :meth:`TrustStore.pin` records when Kairox itself wrote the item there for the user."""
        if layer not in PROJECT_LAYERS or reads_files(key):
            raise ValueError(f"{key} in the {layer} layer is not a list item trust pins by its value")
        origin = KeyOrigin(layer=layer, file=self.layer_file(layer))
        return TrustGate(None, self.workspace).pin_of(key, item, origin, item=item)

    def with_servers(
        self,
        section: str,
        servers: Mapping[str, Any],
        origins: Mapping[str, KeyOrigin],
    ) -> "ResolvedConfig":
        """A copy with extra entries in ``mcp_servers`` or ``lsp_servers`` (plugin contributions); this
        configuration itself when every entry is configured already.

        Entries already configured keep their own definition; each added entry's provenance is its origin
        (layer ``plugin``, ``source`` ``plugin:<name>``, and the file that declares it).
        """
        if section not in ("mcp_servers", "lsp_servers", "dap_servers"):
            raise ValueError(f"not a server section: {section}")
        current = dict(getattr(self.config, section))
        if all(name in current for name in servers):
            return self  # nothing to add (the common case: no plugin has servers): the same configuration
        provenance = dict(self.provenance)
        for name, entry in servers.items():
            if name in current:
                continue
            current[name] = entry
            if name in origins:
                provenance[f"{section}.{name}"] = origins[name]
        return dataclasses.replace(
            self, config=self.config.model_copy(update={section: current}), provenance=provenance
        )

    @functools.cached_property
    def secret_values(self) -> tuple[str, ...]:
        """What ``config show`` redacts of this configuration: each value it hides, or the hidden parts of one.
        Worked out once (every scrubber of a session's configuration needs them: its transcript's, its server
        board's); a configuration is never changed, only replaced."""
        from kairox.config._redact import redacted_values

        return redacted_values(self.config.model_dump(mode="json"))

    def to_json(self, *, redact: bool = True) -> dict[str, Any]:
        from kairox.config._redact import redact_tree

        data = self.config.model_dump(mode="json")
        provenance = {key: origin.to_json() for key, origin in sorted(self.provenance.items())}
        for item in self.pending:
            if item.key in provenance and not item.replaces_trusted:
                provenance[item.key]["pending_trust"] = True
        return {
            "workspace": str(self.workspace),
            "trusted": self.trusted,
            "profile": self.profile,
            "config": redact_tree(data) if redact else data,
            "provenance": provenance,
            "layers": [info.to_json() for info in self.layers],
            "pending_trust": [item.to_json() for item in self.pending],
            "rules": [
                {
                    "action": r.action,
                    "pattern": r.pattern,
                    "layer": str(r.layer),
                    "file": str(r.file) if r.file else None,
                    "line": r.line,
                }
                for r in self.rules
            ],
            "problems": [
                {"file": p.file, "line": p.line, "key": p.key, "message": p.message, "hint": p.hint}
                for p in self.problems
            ],
            "diagnostics": [d.to_json() for d in self.diagnostics],
        }


def _identity(path: Path) -> tuple[int, int] | None:
    try:
        found = os.stat(path)
    except (OSError, ValueError):
        return None
    return found.st_dev, found.st_ino


def _shared_layer(files: Mapping[Layer, Path], layer: Layer) -> Layer | None:
    """The user or system layer whose file a project or local file is (a link either way), or None.

    Compared by the files' identity: a stat each, not a walk of every folder on the way (this runs every
    resolve). A dangling link is compared by where it points: a write through it would create the user's file."""
    if layer not in PROJECT_LAYERS:
        return None
    own = _identity(files[layer])
    if own is None:
        if not os.path.islink(files[layer]):
            return None
        real = os.path.realpath(files[layer])
        return next((other for other in (Layer.USER, Layer.SYSTEM) if os.path.realpath(files[other]) == real), None)
    return next((other for other in (Layer.USER, Layer.SYSTEM) if _identity(files[other]) == own), None)


def _parse_file(layer: Layer, path: Path, text: str) -> ParsedFile:
    """One file's text as ``layer``: its table, key lines and leaves, or its TOML or schema problems."""
    try:
        raw = decode_toml(text)
    except DecodeProblem as exc:
        problem = ConfigProblem(
            file=str(path),
            line=exc.line,
            key="",
            message=f"not valid TOML: {exc.message}",
            hint="fix the syntax at that line",
            layer=str(layer),
        )
        return ParsedFile(data=None, problems=(problem,), detail=exc.message)
    data = LayerData(
        layer=layer, raw=raw, file=path, positions=key_positions(text), text_lines=text.splitlines(), pin_memo={}
    )
    problems: list[ConfigProblem] = []
    if not _validate_layer(data, problems):
        return ParsedFile(data=None, problems=tuple(problems), detail="schema problems")
    data.leaves()
    return ParsedFile(data=data)


def _read_file(
    layer: Layer,
    path: Path,
    problems: list[ConfigProblem],
    *,
    untrusted: bool,
    held: bool,
    cache: ConfigParseCache | None,
) -> tuple[LayerData | None, LayerInfo]:
    parse = functools.partial(_parse_file, layer, path)
    try:
        if cache is not None:
            parsed = cache.get(path, layer, parse)
        else:
            parsed = parse(path.read_text(encoding="utf-8")) if path.is_file() else None
    except (OSError, UnicodeDecodeError) as exc:
        problems.append(
            ConfigProblem(file=str(path), line=None, key="", message=f"cannot read: {exc}", layer=str(layer))
        )
        return None, LayerInfo(layer=layer, file=path, status=LayerStatus.ERROR, detail=str(exc))
    if parsed is None:
        return None, LayerInfo(layer=layer, file=path, status=LayerStatus.NOT_FOUND)
    problems.extend(parsed.problems)
    data = parsed.layer_data(untrusted=held)
    if data is None:
        return None, LayerInfo(layer=layer, file=path, status=LayerStatus.ERROR, detail=parsed.detail)
    status = LayerStatus.UNTRUSTED if untrusted else LayerStatus.LOADED
    return data, LayerInfo(layer=layer, file=path, status=status)


@functools.cache
def _default_layer() -> LayerData:
    """Every default value as the lowest layer; made once (a resolve copies nothing of it: nothing changes it)."""
    data = LayerData(layer=Layer.DEFAULT, raw=KairoxConfig().model_dump(mode="json", exclude_none=True))
    data.leaves()
    return data


def _env_items(env: Mapping[str, str]) -> tuple[tuple[str, str], ...]:
    """The variables read as configuration, by name."""
    return tuple((name, env[name]) for name in sorted(env) if name in ENV_KEYS or name.startswith(ENV_GENERIC_PREFIX))


def _env_layer(items: tuple[tuple[str, str], ...], problems: list[ConfigProblem]) -> LayerData | None:
    raw: dict[str, Any] = {}
    origins: dict[str, KeyOrigin] = {}
    for name, text in items:
        key = (
            ENV_KEYS[name]
            if name in ENV_KEYS
            else ".".join(part.lower() for part in name[len(ENV_GENERIC_PREFIX) :].split("__") if part)
        )
        try:
            split_key(key)
        except ValueError:
            problems.append(
                ConfigProblem(file=f"env:{name}", line=None, key=key, message="not a valid key", layer="env")
            )
            continue
        _deep_update(raw, _nest(key, parse_cli_value(text)))
        origins[key] = KeyOrigin(layer=Layer.ENV, source=f"env:{name}")
    if not raw:
        return None
    return LayerData(layer=Layer.ENV, raw=raw, source="env", leaf_origins=origins)


_SERVER_PROFILE_KEYS = ("sandbox", "network", "writable_roots")
"""The keys of a server entry that make its profile; ``-c SECTION.NAME.KEY=VALUE`` sets one over any entry."""

_SANDBOXES = ("workspace_write", "read_only", "none")


def _check_override(key: str, value: Any) -> str | None:
    """Why ``-c`` cannot set profile key ``key`` to ``value`` (None when it can)."""
    if key == "sandbox" and value not in _SANDBOXES:
        return f"sandbox must be one of {', '.join(_SANDBOXES)}"
    if key == "network" and not isinstance(value, bool) and value != "allowlist":
        return 'network must be true, false or "allowlist"'
    if key == "writable_roots" and not (isinstance(value, list) and all(isinstance(v, str) for v in value)):
        return 'writable_roots must be a list of folders, e.g. ["/data/out"]'
    return None


def _profile_overrides(
    overrides: Sequence[str], problems: list[ConfigProblem]
) -> tuple[tuple[str, ...], dict[str, dict[str, Any]]]:
    """``-c SECTION.NAME.sandbox|network|writable_roots=VALUE`` taken apart from the other overrides: a server
    entry is replaced whole by a higher layer, these set one key of the entry in effect instead."""
    rest: list[str] = []
    found: dict[str, dict[str, Any]] = {}
    for override in overrides:
        key, sep, text = override.partition("=")
        try:
            parts = split_key(key.strip()) if sep else ()
        except ValueError:
            parts = ()
        if (
            len(parts) != 3
            or parts[0] not in ("mcp_servers", "lsp_servers", "dap_servers")
            or parts[2] not in _SERVER_PROFILE_KEYS
        ):
            rest.append(override)
            continue
        value = parse_cli_value(text)
        problem = _check_override(parts[2], value)
        if problem is not None:
            problems.append(
                ConfigProblem(
                    file="cli:-c",
                    line=None,
                    key=key.strip(),
                    message=problem,
                    hint='write e.g. -c mcp_servers.NAME.sandbox="read_only"',
                    layer="cli",
                )
            )
            continue
        found.setdefault(join_key(parts[:2]), {})[parts[2]] = value
    return tuple(rest), found


def _cli_layer(overrides: Sequence[str], problems: list[ConfigProblem]) -> LayerData | None:
    raw: dict[str, Any] = {}
    origins: dict[str, KeyOrigin] = {}
    for override in overrides:
        key, sep, value = override.partition("=")
        key = key.strip()
        try:
            if not sep:
                raise ValueError("expected KEY=VALUE")
            split_key(key)
        except ValueError as exc:
            problems.append(
                ConfigProblem(
                    file="cli:-c",
                    line=None,
                    key=key,
                    message=f"bad override {override!r}: {exc}",
                    hint="write -c dotted.key=value",
                    layer="cli",
                )
            )
            continue
        _deep_update(raw, _nest(key, parse_cli_value(value)))
        origins[key] = KeyOrigin(layer=Layer.CLI, source=f"cli:-c {key}")
    if not raw:
        return None
    return LayerData(layer=Layer.CLI, raw=raw, source="cli", leaf_origins=origins)


@dataclass(frozen=True, slots=True)
class _Upper:
    """An env or CLI layer as its input gave it: the layer, the problems of its keys, and of its values."""

    data: LayerData | None
    key_problems: tuple[ConfigProblem, ...]
    valid: bool
    value_problems: tuple[ConfigProblem, ...]


def _upper_layer(build: Callable[[Any, list[ConfigProblem]], LayerData | None], given: tuple[Any, ...]) -> _Upper:
    key_problems: list[ConfigProblem] = []
    data = build(given, key_problems)
    value_problems: list[ConfigProblem] = []
    valid = data is None or _validate_layer(data, value_problems)
    if data is not None:
        data.leaves()
    return _Upper(data, tuple(key_problems), valid, tuple(value_problems))


def _validate_layer(data: LayerData, problems: list[ConfigProblem]) -> bool:
    try:
        KairoxConfig.model_validate(data.raw)
    except ValidationError as exc:
        problems.extend(problems_from_validation(exc, data))
        return False
    return True


def _from_untrusted_file(origin: KeyOrigin | None, file_layers: list[LayerData]) -> bool:
    return origin is not None and any(d.untrusted and d.file == origin.file for d in file_layers)


def _profile_layers(
    name: str, merged: Merged, file_layers: list[LayerData], *, chosen_by_untrusted: bool
) -> list[LayerData]:
    """The profile's keys as a layer: those written in trusted files, then those of untrusted project files.

    Every key is untrusted when an untrusted project file chose the profile (``profile = NAME``): a project may
    not switch on a wider profile the user defined for other work.
    """
    prefix = f"profiles.{name}."
    parts: dict[bool, tuple[dict[str, Any], dict[str, KeyOrigin]]] = {False: ({}, {}), True: ({}, {})}
    for key, value in merged.values.items():
        if key.startswith(prefix):
            inner = key[len(prefix) :]
            origin = merged.origins[key]
            raw, origins = parts[chosen_by_untrusted or _from_untrusted_file(origin, file_layers)]
            _deep_update(raw, _nest(inner, value))
            origins[inner] = KeyOrigin(
                layer=Layer.PROFILE, file=origin.file, line=origin.line, source=f"profile:{name}"
            )
    return [
        LayerData(layer=Layer.PROFILE, raw=raw, source=f"profile:{name}", leaf_origins=origins, untrusted=untrusted)
        for untrusted, (raw, origins) in sorted(parts.items())
        if raw
    ]


def _pin_outside_config(gate: TrustGate, root: Path, final: Merged) -> None:
    """``.mcp.json`` servers and ``.kairox/plugins`` folders: project files the merge does not read, pinned too.

    In an untrusted workspace their readers keep them from running; in a trusted one, what is not pinned waits.
    """
    names = {split_key(k)[1] for k in final.values if k.startswith("mcp_servers.")}
    mcp_json = root / ".mcp.json"
    found: list[tuple[str, Any, KeyOrigin]] = [
        (join_key(["mcp_servers", name]), entry, KeyOrigin(layer=Layer.PROJECT, file=mcp_json, line=line))
        for name, (entry, line) in read_mcp_json_entries(mcp_json).items()
        if name not in names
    ]
    plugins = root / ".kairox" / "plugins"
    for child in sorted(plugins.iterdir()) if plugins.is_dir() else []:
        if child.is_dir() and not child.name.startswith("."):
            found.append(
                (join_key(["plugins", "workspace", child.name]), str(child), KeyOrigin(layer=Layer.PROJECT, file=child))
            )
    for key, value, origin in found:
        pin = gate.pin_of(key, value, origin)
        if gate.pins is None:
            gate.pinnable.append(pin)
        else:
            gate.waits(pin, "")


def resolve_config(
    workspace: Path | None = None,
    *,
    cli_overrides: Sequence[str] = (),
    profile: str | None = None,
    env: Mapping[str, str] | None = None,
    cwd: Path | None = None,
    events: EventSink | None = None,
    parse_cache: ConfigParseCache | None = PARSE_CACHE,
) -> ResolvedConfig:
    """Read every layer, validate each file, merge with provenance and apply workspace trust.

    Problems never raise here: they are collected in ``problems`` (each with file, line, key and hint) so one
    run reports all of them; front ends decide whether they are fatal. ``parse_cache`` keeps each file's parse
    while the file is unchanged (None reads and validates every file afresh).
    """
    env = os.environ if env is None else env
    home = kairox_home(env)
    root = workspace.resolve() if workspace is not None else find_workspace(cwd or Path.cwd())
    pins = TrustStore(home).pins(root)
    trusted = pins is not None
    problems: list[ConfigProblem] = []
    infos: list[LayerInfo] = [LayerInfo(layer=Layer.DEFAULT, file=None, status=LayerStatus.LOADED)]
    files = {
        Layer.SYSTEM: system_config_path(env),
        Layer.USER: home / "kairox.toml",
        Layer.PROJECT: project_config_path(root),
        Layer.LOCAL: local_config_path(root),
    }
    if os.path.abspath(files[Layer.PROJECT]) == os.path.abspath(files[Layer.USER]):
        files[Layer.PROJECT] = root / "kairox.toml"  # the workspace holds $KAIROX_HOME: that file is the user's
    layers: list[LayerData] = [_default_layer()]
    linked: list[Diagnostic] = []
    for layer in _FILE_LAYERS:
        shared = _shared_layer(files, layer)
        if shared is not None:
            # the user's own content, read once as theirs: as the project's it would be listed twice, and its
            # allow rules and servers reported as the workspace's, waiting for trust
            real = os.path.realpath(files[layer])
            detail = f"one file with the {shared} layer ({real}): read as the {shared} layer only"
            infos.append(LayerInfo(layer=layer, file=files[layer], status=LayerStatus.SHARED, detail=detail))
            linked.append(
                Diagnostic(
                    kind="config",
                    name=str(layer),
                    source=str(files[layer]),
                    reason=f"the {layer} file is {detail}",
                    hint=f"remove the link and keep this workspace's settings in {files[layer]} itself",
                )
            )
            continue
        untrusted = layer in PROJECT_LAYERS and not trusted
        data, info = _read_file(
            layer,
            files[layer],
            problems,
            untrusted=untrusted,
            held=layer in PROJECT_LAYERS,
            cache=parse_cache,
        )
        infos.append(info)
        if data is not None:
            layers.append(data)

    # only the profile keys of the files are needed on their own: which profile is active, and what it sets
    file_merge = merge(layers, only=_PROFILE_KEYS)
    env_items = _env_items(env)
    overrides, server_overrides = _profile_overrides(tuple(cli_overrides), problems)
    if parse_cache is not None:
        env_upper = parse_cache.layer(Layer.ENV, env_items, functools.partial(_upper_layer, _env_layer, env_items))
        cli_upper = parse_cache.layer(Layer.CLI, overrides, functools.partial(_upper_layer, _cli_layer, overrides))
    else:
        env_upper, cli_upper = _upper_layer(_env_layer, env_items), _upper_layer(_cli_layer, overrides)
    problems += env_upper.key_problems + cli_upper.key_problems
    env_layer = env_upper.data
    active = profile or (env_layer and env_layer.raw.get("profile")) or file_merge.values.get("profile")
    upper: list[LayerData] = []
    if active:
        if not any(k.startswith(f"profiles.{active}.") for k in file_merge.values):
            known = sorted({k.split(".")[1] for k in file_merge.values if k.startswith("profiles.")})
            from kairox._util._names import suggest

            guess = suggest(str(active), known)
            problems.append(
                ConfigProblem(
                    file="cli:--profile" if profile else "profile",
                    line=None,
                    key=f"profiles.{active}",
                    message=f"profile {active!r} is not defined",
                    hint=f"did you mean {guess!r}?"
                    if guess
                    else f"define [profiles.{active}] or use one of: {', '.join(known) or 'none'}",
                )
            )
        else:
            chosen_by_untrusted = (
                not profile
                and not (env_layer and env_layer.raw.get("profile"))
                and _from_untrusted_file(file_merge.origins.get("profile"), layers)
            )
            upper += _profile_layers(str(active), file_merge, layers, chosen_by_untrusted=chosen_by_untrusted)
    if upper:
        infos.append(LayerInfo(layer=Layer.PROFILE, file=None, status=LayerStatus.LOADED, detail=str(active)))
    for extra in (env_upper, cli_upper):
        if extra.data is None:
            continue
        problems += extra.value_problems
        if extra.valid:
            upper.append(extra.data)
        infos.append(
            LayerInfo(
                layer=extra.data.layer, file=None, status=LayerStatus.LOADED if extra.valid else LayerStatus.ERROR
            )
        )

    everything = layers + upper
    # what the trusted layers alone say: a project value is held back when it would widen that
    base = merge([d for d in everything if not d.untrusted], TrustGate(None, root))
    gate = TrustGate(base, root, frozenset({files[Layer.PROJECT], files[Layer.LOCAL]}), pins=pins)
    final = merge(everything, gate)
    _pin_outside_config(gate, root, final)
    if profile:
        final.values["profile"] = profile
    try:
        config = KairoxConfig.model_validate(final.tree())
    except ValidationError as exc:  # layers valid alone can still clash when merged
        problems.extend(problems_from_validation(exc, None))
        config = KairoxConfig.model_validate(merge(layers[:1]).tree())

    rules = tuple(
        PolicyRule(
            action=key.rsplit(".", 1)[1],
            pattern=str(item),
            layer=origin.layer,
            file=origin.file,
            line=origin.line,
            source=origin.source,
        )
        for key in ("policy.rules.deny", "policy.rules.ask", "policy.rules.allow")
        for item, origin in final.items.get(key, [])
    )
    resolved = ResolvedConfig(
        config=config,
        workspace=root,
        home=home,
        trusted=trusted,
        profile=str(active) if active else None,
        layers=tuple(infos),
        provenance=final.origins,
        rules=rules,
        pending=tuple(gate.pending),
        problems=tuple(problems),
        diagnostics=(*linked, *gate.diagnostics),
        pinnable=tuple(gate.pinnable),
        server_overrides=server_overrides,
        _files=files,
    )
    if events is not None:
        events.emit(
            ConfigLoaded(
                workspace=str(root),
                layers=tuple(str(i.layer) for i in infos if i.status in (LayerStatus.LOADED, LayerStatus.UNTRUSTED)),
                trusted=trusted,
                problems=len(problems),
            )
        )
    return resolved


def trust_workspace(
    workspace: Path,
    *,
    cli_overrides: Sequence[str] = (),
    profile: str | None = None,
    env: Mapping[str, str] | None = None,
) -> TrustReview:
    """Trust ``workspace`` with what its files set now: resolve it, then record every pinnable value in the trust
    store of the ``$KAIROX_HOME`` that ``env`` names (the store only records; resolution happens here)."""
    resolved = resolve_config(workspace, cli_overrides=cli_overrides, profile=profile, env=env)
    return TrustStore(resolved.home).trust(workspace, resolved.pinnable)
