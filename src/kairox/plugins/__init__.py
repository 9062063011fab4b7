"""Plugins (P1-P8): manifests in three formats, discovery, the inventory, routing as data, settings,
marketplaces and command tools. This package returns data; the runtime routes it to skills, MCP, LSP,
hooks and the registry."""

from kairox.plugins._catalog import Marketplace, MarketplaceEntry
from kairox.plugins._contents import expand_plugin_values
from kairox.plugins._discovery import PluginSet, discover_from_resolved, validate_tree
from kairox.plugins._load import load_plugin
from kairox.plugins._manifest import TrustLevel
from kairox.plugins._marketplace import (
    Confirm,
    InstallRequest,
    InstallResult,
    MarketplaceError,
    Marketplaces,
    PluginInstallDeniedError,
)
from kairox.plugins._model import ContributionKind, Plugin, PluginOrigin
from kairox.plugins._permissions import narrow_policy
from kairox.plugins._routing import PluginRouting, route_plugins
from kairox.plugins._settings import (
    PluginSettingsError,
    parse_contribution,
    set_contribution_enabled,
    set_plugin_enabled,
    set_plugin_path,
)
from kairox.plugins._tools import plugin_tool_providers
from kairox.plugins._view import PluginManifestView, diagnostic_json

__all__ = [
    "Confirm",
    "ContributionKind",
    "InstallRequest",
    "InstallResult",
    "Marketplace",
    "MarketplaceEntry",
    "MarketplaceError",
    "Marketplaces",
    "Plugin",
    "PluginInstallDeniedError",
    "PluginManifestView",
    "PluginOrigin",
    "PluginRouting",
    "PluginSet",
    "PluginSettingsError",
    "TrustLevel",
    "diagnostic_json",
    "discover_from_resolved",
    "expand_plugin_values",
    "load_plugin",
    "narrow_policy",
    "parse_contribution",
    "plugin_tool_providers",
    "route_plugins",
    "set_contribution_enabled",
    "set_plugin_enabled",
    "set_plugin_path",
    "validate_tree",
]
