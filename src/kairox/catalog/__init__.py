"""The MCP server catalog (M9, M11): entries in the MCP Registry's ``server.json`` format from the built-in list
and remote sources (manifests, registries), cached; the install plan and pre-flight checks.

Installing (which writes configuration through the gate and starts the server for a dry run) is the
runtime's job; this package never starts a server and never imports the MCP SDK.
"""

from kairox.catalog._cache import CatalogCache
from kairox.catalog._catalog import Catalog, catalog_sources, load_catalog
from kairox.catalog._model import CatalogEntry, CatalogFormatError
from kairox.catalog._plan import CatalogPlanError, InstallPlan, plan_install
from kairox.catalog._preflight import PreflightCheck, PreflightReport, preflight, probe_version, requirements_text
from kairox.catalog._sources import SourceStatus

__all__ = [
    "Catalog",
    "CatalogCache",
    "CatalogEntry",
    "CatalogFormatError",
    "CatalogPlanError",
    "InstallPlan",
    "PreflightCheck",
    "PreflightReport",
    "SourceStatus",
    "catalog_sources",
    "load_catalog",
    "plan_install",
    "preflight",
    "probe_version",
    "requirements_text",
]
