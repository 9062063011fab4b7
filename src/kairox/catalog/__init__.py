"""The MCP server catalog (M9, M11): entries in the MCP Registry's ``server.json`` format from the built-in list
and remote sources (manifests, registries), cached; the install plan and pre-flight checks.

Installing (which writes configuration through the gate and starts the server for a dry run) is the
runtime's job; this package never starts a server and never imports the MCP SDK.
"""

from kairox.catalog._cache import CachedSource, CatalogCache, catalog_cache_dir
from kairox.catalog._catalog import URL_SOURCE_NAME, Catalog, catalog_sources, load_catalog
from kairox.catalog._model import (
    KAIROX_META,
    OFFICIAL_META,
    SERVER_SCHEMA,
    CatalogArgument,
    CatalogEntry,
    CatalogFormatError,
    CatalogInput,
    CatalogPackage,
    CatalogTransport,
    parse_entry,
)
from kairox.catalog._plan import (
    INSTALLABLE,
    CatalogPlanError,
    InstallPlan,
    PlanVariable,
    choose,
    env_name,
    plan_install,
)
from kairox.catalog._preflight import (
    RUNTIMES,
    PreflightCheck,
    PreflightReport,
    Runtime,
    preflight,
    probe_version,
    requirements_text,
)
from kairox.catalog._sources import (
    BuiltinSource,
    CatalogSource,
    RemoteSource,
    SourceLoad,
    SourceState,
    SourceStatus,
    entries_from_documents,
)

__all__ = [
    "INSTALLABLE",
    "KAIROX_META",
    "OFFICIAL_META",
    "RUNTIMES",
    "SERVER_SCHEMA",
    "URL_SOURCE_NAME",
    "BuiltinSource",
    "CachedSource",
    "Catalog",
    "CatalogArgument",
    "CatalogCache",
    "CatalogEntry",
    "CatalogFormatError",
    "CatalogInput",
    "CatalogPackage",
    "CatalogPlanError",
    "CatalogSource",
    "CatalogTransport",
    "InstallPlan",
    "PlanVariable",
    "PreflightCheck",
    "PreflightReport",
    "RemoteSource",
    "Runtime",
    "SourceLoad",
    "SourceState",
    "SourceStatus",
    "catalog_cache_dir",
    "catalog_sources",
    "choose",
    "entries_from_documents",
    "env_name",
    "load_catalog",
    "parse_entry",
    "plan_install",
    "preflight",
    "probe_version",
    "requirements_text",
]
