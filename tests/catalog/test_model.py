"""``CatalogEntry`` read from server.json faithfully, the install plan, and the built-in list."""

import re
from pathlib import Path

import pytest

from kairox.catalog import CatalogFormatError, CatalogPlanError, load_catalog, plan_install
from kairox.catalog._model import parse_entry
from kairox.catalog._sources import BuiltinSource, entries_from_documents

ROOT = Path(__file__).resolve().parents[2]

SERVER_JSON = {
    "$schema": "https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json",
    "name": "io.github.acme/weather",
    "title": "Weather",
    "description": "Forecasts",
    "version": "1.4.2",
    "websiteUrl": "https://acme.example/weather",
    "repository": {"url": "https://github.com/acme/weather", "source": "github", "subfolder": "srv"},
    "packages": [
        {
            "registryType": "npm",
            "identifier": "@acme/weather",
            "version": "1.4.2",
            "runtimeHint": "npx",
            "runtimeArguments": [{"type": "named", "name": "--node-options", "value": "--max-old-space-size=512"}],
            "packageArguments": [
                {"type": "positional", "valueHint": "city", "isRequired": True},
                {"type": "named", "name": "--units", "default": "metric"},
            ],
            "environmentVariables": [
                {"name": "WEATHER_API_KEY", "isRequired": True, "isSecret": True, "description": "API key"},
                {"name": "WEATHER_REGION", "value": "eu"},
            ],
            "transport": {"type": "stdio"},
            "x-future": 1,
        },
        {
            "registryType": "oci",
            "identifier": "ghcr.io/acme/weather",
            "version": "1.4.2",
            "transport": {"type": "stdio"},
            "environmentVariables": [{"name": "WEATHER_API_KEY", "isRequired": True, "isSecret": True}],
        },
        {
            "registryType": "mcpb",
            "identifier": "https://acme.example/weather.mcpb",
            "version": "1.4.2",
            "fileSha256": "a" * 64,
            "transport": {"type": "stdio"},
        },
    ],
    "remotes": [
        {
            "type": "streamable-http",
            "url": "https://{tenant}.acme.example/mcp",
            "variables": {"tenant": {"isRequired": True, "description": "Your tenant"}},
            "headers": [
                {
                    "name": "Authorization",
                    "value": "Bearer {api_key}",
                    "isSecret": True,
                    "variables": {"api_key": {"isRequired": True, "isSecret": True}},
                }
            ],
        }
    ],
    "_meta": {"io.modelcontextprotocol.registry/publisher-provided": {"tool": "x"}},
    "x-top-level": {"kept": True},
}


def test_server_json_maps_every_field_and_keeps_unknown_ones() -> None:
    entry = parse_entry(SERVER_JSON, source="acme", where="acme[0]")
    assert (entry.id, entry.title, entry.version, entry.source, entry.status) == (
        "io.github.acme/weather",
        "Weather",
        "1.4.2",
        "acme",
        "active",
    )
    assert entry.repository == {"url": "https://github.com/acme/weather", "source": "github", "subfolder": "srv"}
    assert entry.extra == {"x-top-level": {"kept": True}}
    assert entry.raw == SERVER_JSON
    npm, oci, mcpb = entry.packages
    assert (npm.registry_type, npm.identifier, npm.version, npm.runtime_hint) == (
        "npm",
        "@acme/weather",
        "1.4.2",
        "npx",
    )
    assert npm.extra == {"x-future": 1}
    assert [a.type for a in npm.package_arguments] == ["positional", "named"]
    assert npm.environment_variables[0].is_secret and npm.environment_variables[0].is_required
    assert mcpb.file_sha256 == "a" * 64
    assert entry.remotes[0].variables["tenant"].is_required
    assert entry.transports == ("stdio", "streamable-http")
    assert oci.label == "oci:ghcr.io/acme/weather@1.4.2"


def test_npm_plan_pins_the_version_and_never_writes_a_secret() -> None:
    entry = parse_entry(SERVER_JSON, source="acme", where="acme[0]")
    plan = plan_install(entry)
    assert plan.table == {
        "type": "stdio",
        "command": "npx",
        "args": [
            "-y",
            "--node-options",
            "--max-old-space-size=512",
            "@acme/weather@1.4.2",
            "${CITY}",
            "--units",
            "metric",
        ],
        "env": {"WEATHER_REGION": "eu"},
        "env_vars": ["WEATHER_API_KEY"],
    }
    assert (
        plan.command_line
        == "npx -y --node-options --max-old-space-size=512 @acme/weather@1.4.2 '${CITY}' --units metric"
    )
    assert {(v.name, v.required, v.secret) for v in plan.variables} == {
        ("CITY", True, False),
        ("WEATHER_API_KEY", True, True),
    }


def test_oci_plan_forwards_variables_to_the_container() -> None:
    plan = plan_install(parse_entry(SERVER_JSON, source="acme", where="x"), package="oci")
    assert plan.table["args"] == ["run", "-i", "--rm", "-e", "WEATHER_API_KEY", "ghcr.io/acme/weather:1.4.2"]
    assert plan.table["env_vars"] == ["WEATHER_API_KEY"]


def test_remote_plan_uses_variable_references_in_url_and_headers() -> None:
    plan = plan_install(parse_entry(SERVER_JSON, source="acme", where="x"), package="remote", name="acme")
    assert plan.table == {
        "type": "streamable_http",
        "url": "https://${TENANT}.acme.example/mcp",
        "headers": {"Authorization": "Bearer ${API_KEY}"},
    }


def test_mcpb_package_is_refused_with_the_alternatives() -> None:
    entry = parse_entry(SERVER_JSON, source="acme", where="x")
    with pytest.raises(
        CatalogPlanError, match=r"cannot run mcpb packages; choose another with --package \(npm, oci, mcpb\)"
    ):
        plan_install(entry, package="mcpb")


@pytest.mark.parametrize(
    ("document", "where", "reason"),
    [
        ({"name": 5, "description": "d", "version": "1"}, "e[0].name", "expected a string, got a number"),
        (
            {"name": "a/b", "description": "d", "version": "1", "packages": "npm"},
            "e[0].packages",
            "expected a list, got a string",
        ),
        ({"name": "a/b", "description": "d"}, "e[0]", "`version` is missing"),
        (
            {
                "name": "a/b",
                "description": "d",
                "version": "1",
                "packages": [
                    {"registryType": "npm", "identifier": "x", "version": "latest", "transport": {"type": "stdio"}}
                ],
            },
            "e[0].packages[0].version",
            '"latest" is not an exact version',
        ),
        ([1, 2], "e[0]", "expected an object, got a list"),
    ],
)
def test_wrong_types_name_the_field(document: object, where: str, reason: str) -> None:
    with pytest.raises(CatalogFormatError) as caught:
        parse_entry(document, source="s", where="e[0]").packages  # noqa: B018 (packages are read when used)
    assert (caught.value.where, caught.value.reason) == (where, reason)


def test_bad_entries_are_counted_not_listed_one_by_one() -> None:
    documents = [{"name": i} for i in range(1000)] + [{"name": "a/ok", "description": "d", "version": "1"}]
    entries, hidden, diagnostics = entries_from_documents(documents, "s", "s")
    assert [e.id for e in entries] == ["a/ok"] and hidden == 0
    assert len(diagnostics) == 6
    assert diagnostics[-1].reason == "995 more entries skipped for the same kind of problem"


def test_builtin_list_has_well_known_servers_with_exact_versions() -> None:
    catalog = load_catalog([BuiltinSource()])
    assert len(catalog.entries) >= 12
    for name in ("filesystem", "memory", "git", "fetch", "time", "sequential-thinking", "everything"):
        assert f"io.github.modelcontextprotocol/{name}" in catalog.entries
    for entry in catalog.entries.values():
        assert entry.packages or entry.remotes, entry.id
        for package in entry.packages:
            assert package.version and re.fullmatch(r"\d+\.\d+\.\d+", package.version), package.label
        plan = plan_install(entry)  # every built-in entry can be installed
        assert plan.package is None or f"{plan.package.version}" in plan.command_line


def test_makefile_fills_the_npm_cache_with_the_builtin_versions() -> None:
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    specs = re.search(r"^CATALOG_NPM := (.+)$", makefile, re.MULTILINE)
    assert specs is not None
    catalog = load_catalog([BuiltinSource()])
    for spec in specs.group(1).split():
        name, _, version = spec.rpartition("@")
        [entry] = catalog.find(name)
        assert entry.packages[0].version == version, spec


def test_find_accepts_an_id_a_package_name_or_a_short_name() -> None:
    catalog = load_catalog([BuiltinSource()])
    expected = ["io.github.modelcontextprotocol/filesystem"]
    assert [e.id for e in catalog.find("@modelcontextprotocol/server-filesystem")] == expected
    assert [e.id for e in catalog.find("@modelcontextprotocol/server-filesystem@2026.8.31")] == expected
    assert [e.id for e in catalog.find("filesystem")] == expected
    assert [e.id for e in catalog.search("knowledge graph")] == ["io.github.modelcontextprotocol/memory"]


def test_search_matches_names_titles_and_descriptions_not_the_namespace_of_the_id() -> None:
    catalog = load_catalog([BuiltinSource()])
    found = [e.id for e in catalog.search("git")]
    assert found == ["io.github.modelcontextprotocol/git", "io.github.github/github-mcp-server"]
