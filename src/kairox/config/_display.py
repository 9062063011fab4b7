"""The effective configuration as people read it, one line per key with where it was set (``kairox config show
--provenance`` and the TUI's ``/config`` panel print these lines): every value redacted as ``config show`` redacts
it, server entries on one line, what waits for trust and the permission rules."""

import json
from typing import TYPE_CHECKING, Any

from kairox.config._redact import REDACTED, is_secret_key

if TYPE_CHECKING:
    from kairox.config._resolve import ResolvedConfig


def value_text(value: Any) -> str:
    """A value as the configuration shows it: JSON, non-ASCII kept."""
    return json.dumps(value, ensure_ascii=False, default=str)


def lookup_value(data: Any, key: str) -> Any:
    """The value at a dotted key of the configuration's JSON; KeyError when it is not there."""
    from kairox.config._keys import split_key

    node = data
    for part in split_key(key):
        if not isinstance(node, dict) or part not in node:
            raise KeyError(key)
        node = node[part]
    return node


def _entry_as_written(resolved: "ResolvedConfig", key: str, shown: dict[str, Any]) -> dict[str, Any]:
    """A server entry with only the keys that differ from their defaults (still redacted), for one line."""
    from kairox.config._keys import split_key

    section, name = split_key(key)[:2]
    entry = getattr(resolved.config, section).get(name)
    if entry is None:
        return shown
    set_keys = entry.model_dump(mode="json", exclude_defaults=True)
    return {k: v for k, v in shown.items() if k in set_keys}


def provenance_lines(resolved: "ResolvedConfig") -> list[str]:
    """Every key set by a layer, redacted, with its layer and file:line."""
    data = resolved.to_json(redact=True)
    lines: list[str] = []
    out = lines.append
    out(f"# workspace {resolved.workspace} ({'trusted' if resolved.trusted else 'untrusted: run `kairox trust`'})")
    if resolved.profile:
        out(f"# profile {resolved.profile}")
    width = max((len(o.where()) for o in resolved.provenance.values()), default=10)
    for key in sorted(resolved.provenance):
        origin = resolved.provenance[key]
        try:
            value = lookup_value(data["config"], key)
        except KeyError:
            continue
        if is_secret_key(key.rsplit(".", 1)[-1]) and isinstance(value, str):
            value = REDACTED
        if isinstance(value, dict) and key.split(".", 1)[0] in ("mcp_servers", "lsp_servers", "dap_servers"):
            value = _entry_as_written(resolved, key, value)
        line = f"{origin.layer!s:8} {origin.where():<{width}}  {key} = {value_text(value)}"
        if origin.shadowed:
            line += "  (shadows " + ", ".join(f"{s.layer}:{s.where()}" for s in origin.shadowed) + ")"
        if resolved.is_pending(key):
            line += "  [pending trust]"
        out(line)
    for item in resolved.pending:
        out(f"pending  {item.origin.where():<{width}}  {item.key}: {item.reason} (`kairox trust` applies it)")
    for rule in resolved.rules:
        out(f"rule     {rule.where():<{width}}  {rule.action} {rule.pattern}")
    return lines
