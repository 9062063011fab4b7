"""Plugin settings (P6) written through the config writer: enable, disable, disable one contribution, paths."""

from pathlib import Path

from kairox._util._names import suggest
from kairox.config import append_value, join_key, remove_value, set_value, unset_value
from kairox.errors import KairoxError
from kairox.plugins._model import ContributionKind


class PluginSettingsError(KairoxError):
    """A plugin setting cannot be written as asked."""


def _key(name: str, *rest: str) -> str:
    return join_key(["plugins", "entries", name, *rest])


def parse_contribution(text: str) -> tuple[ContributionKind, str]:
    """``skill:pdf`` -> ``(ContributionKind.SKILL, "pdf")``; raises :class:`PluginSettingsError`."""
    kind, sep, name = text.partition(":")
    kinds = [str(k) for k in ContributionKind]
    if not sep or not name:
        raise PluginSettingsError(
            f"{text!r} is not KIND:NAME", hint=f"KIND is one of {', '.join(kinds)}, e.g. skill:pdf"
        )
    if kind not in kinds:
        close = suggest(kind, kinds)
        raise PluginSettingsError(
            f"unknown contribution kind {kind!r}",
            hint=f"did you mean {close!r}?" if close else f"use one of {', '.join(kinds)}",
        )
    return ContributionKind(kind), name


def set_plugin_enabled(config_file: Path, name: str, enabled: bool) -> None:
    """``[plugins.entries.NAME] enabled = ...`` in ``config_file``."""
    set_value(config_file, _key(name, "enabled"), enabled)


def set_contribution_enabled(config_file: Path, name: str, contribution: str, enabled: bool) -> bool:
    """Add ``kind:name`` to (or remove it from) the plugin's ``disabled_contributions``; False when unchanged."""
    kind, item = parse_contribution(contribution)
    value = f"{kind}:{item}"
    if enabled:
        return remove_value(config_file, _key(name, "disabled_contributions"), value)
    return append_value(config_file, _key(name, "disabled_contributions"), value)


def set_plugin_path(config_file: Path, name: str, path: str | None) -> None:
    """Load plugin ``name`` from another folder (``None`` removes the override)."""
    if path is None:
        unset_value(config_file, _key(name, "path"))
    else:
        set_value(config_file, _key(name, "path"), path)


def forget_plugin(config_file: Path, name: str) -> bool:
    """Remove every setting of plugin ``name``; False when there were none."""
    return unset_value(config_file, _key(name))
