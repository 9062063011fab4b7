"""Building a registry from the resolved configuration, with the built-in tools in it."""

import dataclasses
from pathlib import Path

from kairox.config import Layer, ResolvedConfig, TrustStore, append_value
from kairox.events import EventSink
from kairox.policy import Approver, PolicySettings, RuleLayer, read_mask, resolve_path
from kairox.registry._approvals import PersistRule, RuleWriter
from kairox.registry._registry import RegistrySettings, ToolRegistry
from kairox.sandbox import SandboxSettings, shared_egress
from kairox.tools import BuiltinSettings, BuiltinToolProvider, ToolHooks, rule_hosts


def registry_settings(resolved: ResolvedConfig, *, user_home: Path | None = None) -> RegistrySettings:
    """The gate's settings from ``[policy]`` and ``[tools]``; relative paths against the file that set them."""
    config = resolved.config
    home = user_home or Path.home()
    policy = PolicySettings.from_config(
        config.policy,
        workspace=resolved.workspace,
        rules=resolved.rules,
        home=home,
        roots_base=resolved.base_dir("policy.writable_roots"),
        sockets_base=resolved.base_dir("policy.allow_unix_sockets"),
        own_dirs=(resolved.home,),
    )
    # [sandbox] network, when set, says what policy.network_access says otherwise
    network = config.sandbox.network or ("on" if config.policy.network_access else "off")
    policy = dataclasses.replace(policy, network_access=network == "on")
    # what fs.read rules forbid is hidden from commands (hooks get this sandbox too, not only the registry's tools)
    hidden = read_mask(policy.rules, workspace=policy.workspace, home=policy.home, roots=policy.writable_roots)
    sandbox = SandboxSettings(
        mode=policy.sandbox,
        writable_roots=policy.writable_roots,
        network_access=policy.network_access,
        allowed_domains=tuple(config.sandbox.allowed_domains) if network == "allowlist" else None,
        egress=shared_egress,  # a session puts its own proxy here
        allowed_sockets=policy.allowed_sockets,
        hidden=hidden,
    )
    tools = config.tools
    if tools.spill_dir:
        spill = resolve_path(tools.spill_dir, base=resolved.base_dir("tools.spill_dir"), home=home)
    else:
        spill = resolved.home / "spill"
    return RegistrySettings(
        policy=policy,
        sandbox=sandbox,
        disabled=tuple(tools.disabled),
        default_timeout_sec=tools.default_timeout_sec,
        output_limit_chars=tools.output_limit_chars,
        spill_dir=spill,
    )


def user_layer_writer(resolved: ResolvedConfig) -> RuleWriter:
    """Persists "always" approvals as allow rules in the layer the person chose (user by default), keeping the
    file's comments.

    It never writes a file of an untrusted workspace (:meth:`ResolvedConfig.untrusted_file` says which, by any
    spelling or link) nor, there, the project or local layer at all: the file is the workspace owner's, and a rule
    in it would not count before ``kairox trust`` anyway. Nor, trusted or not, a project or local file that a link
    makes the user's own (:meth:`ResolvedConfig.redirected_write`): a rule meant for this workspace would hold in
    every workspace. Those layers are not offered, and an "always" naming one holds for the session.

    In a trusted workspace a rule saved in the project or local layer is pinned as trusted at once (that rule
    only, by its fingerprint), so it is in force from the next resolve; anything else that changed in the file
    meanwhile still waits for ``kairox trust``."""
    refused: dict[RuleLayer, str] = {}
    hints: dict[RuleLayer, str] = {}
    for layer in RuleLayer:
        file = resolved.layer_file(Layer(str(layer)))
        redirected = resolved.redirected_write(file)
        if redirected is not None:
            refused[layer] = redirected
            hints[layer] = (
                f"save it in the {RuleLayer.USER} layer if it is meant for "
                "every workspace, or replace the link with a file of its own"
            )
            continue
        what = resolved.untrusted_file(file)
        if what is None and layer is not RuleLayer.USER and not resolved.trusted:
            what = f"the {layer} file"
        if what is not None:
            target = resolved.linked_to(file)
            refused[layer] = f"{file} is {what} of a workspace you have not trusted" + (
                f" (a link to {target})" if target else ""
            )

    def persist(rule: str, layer: RuleLayer) -> None:
        file_layer = Layer(str(layer))
        append_value(resolved.layer_file(file_layer), "policy.rules.allow", rule)
        if file_layer is not Layer.USER and resolved.trusted:
            # the person chose this very rule for this workspace: it needs no second review by `kairox trust`
            TrustStore(resolved.home).pin(
                resolved.workspace, [resolved.item_pin(file_layer, "policy.rules.allow", rule)]
            )

    return RuleWriter(persist, refused=refused, hints=hints)


async def build_registry(
    source: ResolvedConfig | RegistrySettings,
    *,
    approver: Approver,
    hooks: ToolHooks | None = None,
    events: EventSink | None = None,
    builtins: BuiltinSettings | None = None,
    persist_rule: PersistRule | None = None,
) -> ToolRegistry:
    """A registry holding the built-in tools. From a ``ResolvedConfig``, "always" approvals go to the user layer."""
    if isinstance(source, ResolvedConfig):
        settings = registry_settings(source)
        builtins = builtins or BuiltinSettings.from_config(source.config.tools)
        persist_rule = persist_rule or user_layer_writer(source)
    else:
        settings = source
    registry = ToolRegistry(settings, approver=approver, hooks=hooks, events=events, persist_rule=persist_rule)
    hosts = rule_hosts(settings.policy.rules)  # the rules in force (an untrusted project's allow rules are not)
    await registry.add_provider(
        BuiltinToolProvider(dataclasses.replace(builtins or BuiltinSettings(), web_hosts=hosts))
    )
    return registry
