"""Secrets planted in every place a configuration can hold one (env values, headers, URL userinfo and ``?api_key=``
query keys, a catalog source, a model provider, a hook's command line) never reach what a front end shows: the
command line's listings and ``--json``, the TUI's panels, the GUI's API endpoints."""

import json
import sys
from pathlib import Path
from typing import Any

import httpx
import pytest
from tests.agent._support import SERVERS, make_workspace
from tests.helpers import kairox

from kairox.config import resolve_config
from kairox.runtime import RuntimeOptions, build_extension_context

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(180)]

SECRETS = {
    "userinfo": "PW-userinfo-4411",
    "query": "QK-query-5522",
    "header": "HD-header-6633",
    "env": "EV-env-7744",
    "catalog": "CS-catalog-8855",
    "provider_header": "MH-provider-9966",
    "provider_query": "MQ-provider-1077",
    "hook_header": "HK-hook-2188",
    "hook_query": "HQ-hook-3299",
    "hook_assignment": "HA-hook-4300",
}
TOKEN = "test-token-0123456789"
LEAKS_ITS_TOKEN = "import os, sys; sys.stderr.write('token ' + os.environ['SERVICE_TOKEN']); sys.exit(3)"


def _plant(home: Path) -> None:
    s = SECRETS
    (home / "kairox.toml").write_text(
        f'[mcp_servers.remote]\ntype = "streamable_http"\nurl = "http://me:{s["userinfo"]}@127.0.0.1:9/mcp?api_key={s["query"]}"\n'
        f'headers = {{ Authorization = "Bearer {s["header"]}" }}\nstartup_timeout_sec = 5\n\n'
        f'[mcp_servers.local]\ncommand = "{sys.executable}"\nargs = ["{SERVERS / "basic_server.py"}"]\nenv = {{ SERVICE_TOKEN = "{s["env"]}" }}\n\n'
        # a server that prints its own secret on stderr and exits: its stderr tail is shown everywhere
        f'[mcp_servers.leaky]\ncommand = "{sys.executable}"\nargs = ["-c", "{LEAKS_ITS_TOKEN}"]\nstartup_timeout_sec = 20\n'
        f'env = {{ SERVICE_TOKEN = "{s["env"]}" }}\n\n'
        f'[[mcp_catalog.sources]]\nname = "corp"\nurl = "https://ci:{s["catalog"]}@catalog.invalid/index.json"\n\n'
        f'[model_providers.corp]\nbase_url = "https://api.invalid/v1?api_key={s["provider_query"]}"\n'
        f'headers = {{ X-Api-Key = "{s["provider_header"]}" }}\n\n'
        "[[hooks.post_tool_use]]\n"
        f"command = \"API_TOKEN={s['hook_assignment']} curl -s -H 'Authorization: Bearer {s['hook_header']}' "
        f"'https://hooks.invalid/notify?api_key={s['hook_query']}' || true\"\n",
        encoding="utf-8",
    )


def _leaks(where: str, text: str) -> list[str]:
    return [f"{where}: {name}" for name, value in SECRETS.items() if value in text]


async def _gui_texts(workspace: Path) -> dict[str, str]:
    from kairox.web import WebOptions, create_app

    app = create_app(WebOptions(workspace=workspace, port=8767, token=TOKEN))
    texts: dict[str, str] = {}
    client = httpx.AsyncClient(
        transport=httpx.ASGITransport(app=app), base_url="http://127.0.0.1:8767", headers={"Authorization": f"Bearer {TOKEN}"}, timeout=120
    )
    async with app.router.lifespan_context(app), client:
        await app.state.backend.ready_context()
        for path in ("/api/state", "/api/servers", "/api/servers/mcp/remote", "/api/servers/mcp/local", "/api/doctor",
                     "/api/plugins", "/api/skills", "/api/trace?limit=2000"):
            answer = await client.get(path)
            assert answer.status_code == 200, (path, answer.text)
            texts[f"GUI {path}"] = answer.text
    return texts


async def _tui_texts(workspace: Path) -> dict[str, str]:
    from kairox.tui import _reports, describe

    resolved = resolve_config(workspace)
    texts = {"TUI /config": _reports.config_text(resolved), "TUI /trust": _reports.trust_text(resolved)}
    async with build_extension_context(cli=RuntimeOptions(workspace=workspace), resolved=resolved) as context:
        texts["TUI /doctor"] = _reports.doctor_text(context)
        texts["TUI /hooks"] = _reports.hooks_text(context)
        texts["TUI /tools"] = _reports.tools_text(context)
        texts["TUI servers"] = json.dumps([view.to_json() for view in context.servers.views()] if context.servers else [])
        shown = [describe(event) for event in context.events.events]
        texts["TUI trace"] = "\n".join(entry.text for entry in shown if entry is not None)
    return texts


def _cli_texts(workspace: Path) -> dict[str, str]:
    texts: dict[str, str] = {}
    for args in (["config", "show"], ["config", "show", "--json"], ["config", "show", "--provenance"],
                 ["mcp", "list"], ["mcp", "list", "--json"], ["mcp", "status"], ["mcp", "status", "--json"],
                 ["hooks", "list"], ["hooks", "list", "--json"], ["doctor"], ["doctor", "--json"], ["context", "--json"]):
        run = kairox(*args, cwd=workspace)
        texts[f"CLI {' '.join(args)}"] = run.stdout + run.stderr
    return texts


async def test_planted_secrets_reach_no_front_end(tmp_path: Path, isolated_home: Path) -> None:
    _plant(isolated_home)
    workspace = make_workspace(tmp_path / "repo")

    texts: dict[str, Any] = {**_cli_texts(workspace), **await _tui_texts(workspace), **await _gui_texts(workspace)}

    # each output was produced and shows the planted entries, redacted
    assert "<redacted>" in texts["CLI config show --provenance"] and "hooks.post_tool_use" in texts["CLI config show --provenance"]
    assert "mcp_servers.remote" in texts["TUI /config"] and "model_providers.corp" in texts["TUI /config"]
    assert "mcp_catalog.sources" in texts["TUI /config"]
    assert "curl" in texts["TUI /hooks"] and "<redacted>" in texts["TUI /hooks"]
    assert "curl" in texts["CLI hooks list"]
    assert '"name":"remote"' in texts["GUI /api/servers"]
    assert "token <redacted>" in texts["CLI mcp status"] and "token <redacted>" in texts["TUI servers"]
    leaks = [leak for where, text in texts.items() for leak in _leaks(where, text)]
    assert leaks == [], "\n".join(leaks)
