"""What a process that hosts an MCP server over stdio imports: the server's config model and the client, nothing
that only other commands need (bench/import_time.py measures the time; this guards the list)."""

import json
import subprocess
import sys

HOST_IMPORT = "from kairox.config import McpServerConfig; from kairox.mcp import McpClient"

HEAVY = [
    # the SDK and the HTTP stack: a stdio server that speaks the handshake era needs neither
    "mcp", "mcp_types", "httpx", "httpx2", "httpcore", "starlette", "uvicorn",
    # other commands' libraries
    "jsonschema", "yaml", "tomlkit", "typer", "click", "rich", "textual", "openai", "anthropic",
    # pydantic's plugin entry-point scan (package metadata, email parsing, zip files): paid when a validator is
    # first built, not at import
    "pydantic.plugin._loader", "importlib.metadata", "email", "zipfile", "csv",
    # standard modules only some paths use (asyncio brings ssl along, so ssl is not in this list)
    "tomllib", "difflib", "tempfile", "http.client", "urllib.request",
    # Kairox's own modules a host of one server does not run
    "kairox.config._models", "kairox.config._resolve", "kairox.config._writer", "kairox.config._trust",
    "kairox.config._field_docs", "kairox.mcp._manager", "kairox.mcp._adapter", "kairox.mcp._sdk",
    "kairox.mcp._oauth", "kairox.tools._builtin", "kairox.sandbox._bwrap", "kairox._rpc._connection",
    "kairox.registry", "kairox.policy", "kairox.hooks",
]  # fmt: skip

PROBE = f"""
import json, sys
{HOST_IMPORT}
from kairox.config._servers import DapServerConfig, LspServerConfig
heavy = sorted(set(sys.modules) & set(json.loads(sys.argv[1])))
built = [m.__name__ for m in (McpServerConfig, LspServerConfig, DapServerConfig) if m.__pydantic_complete__]
config = McpServerConfig(command="server", args=["--stdio"])
print(json.dumps({{"heavy": heavy, "built": built, "transport": config.transport}}))
"""


def test_an_mcp_host_imports_no_module_only_other_paths_need() -> None:
    run = subprocess.run([sys.executable, "-c", PROBE, json.dumps(HEAVY)], capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr[-2000:]
    assert json.loads(run.stdout) == {"heavy": [], "built": [], "transport": "stdio"}


def test_the_probe_sees_a_heavy_module_when_one_is_loaded() -> None:
    # the guard above would pass vacuously if the probe could not see imports: load two on purpose
    run = subprocess.run(
        [sys.executable, "-c", "import tomlkit, email.message\n" + PROBE, json.dumps(HEAVY)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert run.returncode == 0, run.stderr[-2000:]
    assert json.loads(run.stdout)["heavy"] == ["email", "tomlkit"]
