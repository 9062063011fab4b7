"""Secrets planted in every place a configuration can hold one (env values, headers, URL userinfo and ``?api_key=``
query keys, a catalog source, a model provider, a hook's command line) never reach what a front end shows: the
command line's listings and ``--json``, the TUI's panels, the GUI's API endpoints, the gateway's tool listing and
audit log, an agent session's transcript, and every log file Kairox writes under ``$KAIROX_HOME``."""

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


def _plant(home: Path, head: str = "") -> None:
    """The secrets in the user layer; ``head``: top-level keys before the tables (a model for a session)."""
    s = SECRETS
    (home / "kairox.toml").write_text(
        head
        + f'[mcp_servers.remote]\ntype = "streamable_http"\nurl = "http://me:{s["userinfo"]}@127.0.0.1:9/mcp?api_key={s["query"]}"\n'
        f'headers = {{ Authorization = "Bearer {s["header"]}" }}\nstartup_timeout_sec = 5\n\n'
        f'[mcp_servers.local]\ncommand = "{sys.executable}"\n'
        f'args = ["{SERVERS / "basic_server.py"}"]\nenv = {{ SERVICE_TOKEN = "{s["env"]}" }}\n\n'
        # a server that prints its own secret on stderr and exits: its stderr tail is shown everywhere
        f'[mcp_servers.leaky]\ncommand = "{sys.executable}"\n'
        f'args = ["-c", "{LEAKS_ITS_TOKEN}"]\nstartup_timeout_sec = 20\n'
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
        transport=httpx.ASGITransport(app=app),
        base_url="http://127.0.0.1:8767",
        headers={"Authorization": f"Bearer {TOKEN}"},
        timeout=120,
    )
    async with app.router.lifespan_context(app), client:
        await app.state.backend.ready_context()
        for path in (
            "/api/state",
            "/api/servers",
            "/api/servers/mcp/remote",
            "/api/servers/mcp/local",
            "/api/doctor",
            "/api/plugins",
            "/api/skills",
            "/api/trace?limit=2000",
        ):
            answer = await client.get(path)
            assert answer.status_code == 200, (path, answer.text)
            texts[f"GUI {path}"] = answer.text
    return texts


async def _tui_texts(workspace: Path) -> dict[str, str]:
    from kairox.tui import _reports
    from kairox.tui._servers import describe

    resolved = resolve_config(workspace)
    texts = {"TUI /config": _reports.config_text(resolved), "TUI /trust": _reports.trust_text(resolved)}
    async with build_extension_context(cli=RuntimeOptions(workspace=workspace), resolved=resolved) as context:
        texts["TUI /doctor"] = _reports.doctor_text(context)
        texts["TUI /hooks"] = _reports.hooks_text(context)
        texts["TUI /tools"] = _reports.tools_text(context)
        texts["TUI servers"] = json.dumps(
            [view.to_json() for view in context.servers.views()] if context.servers else []
        )
        shown = [describe(event) for event in context.events.events]
        texts["TUI trace"] = "\n".join(entry.text for entry in shown if entry is not None)
    return texts


def _cli_texts(workspace: Path) -> dict[str, str]:
    texts: dict[str, str] = {}
    for args in (
        ["config", "show"],
        ["config", "show", "--json"],
        ["config", "show", "--provenance"],
        ["mcp", "list"],
        ["mcp", "list", "--json"],
        ["mcp", "status"],
        ["mcp", "status", "--json"],
        ["hooks", "list"],
        ["hooks", "list", "--json"],
        ["doctor"],
        ["doctor", "--json"],
        ["context", "--json"],
    ):
        run = kairox(*args, cwd=workspace)
        texts[f"CLI {' '.join(args)}"] = run.stdout + run.stderr
    return texts


async def test_planted_secrets_reach_no_front_end(tmp_path: Path, isolated_home: Path) -> None:
    _plant(isolated_home)
    workspace = make_workspace(tmp_path / "repo")

    texts: dict[str, Any] = {**_cli_texts(workspace), **await _tui_texts(workspace), **await _gui_texts(workspace)}

    # each output was produced and shows the planted entries, redacted
    assert (
        "<redacted>" in texts["CLI config show --provenance"]
        and "hooks.post_tool_use" in texts["CLI config show --provenance"]
    )
    assert "mcp_servers.remote" in texts["TUI /config"] and "model_providers.corp" in texts["TUI /config"]
    assert "mcp_catalog.sources" in texts["TUI /config"]
    assert "curl" in texts["TUI /hooks"] and "<redacted>" in texts["TUI /hooks"]
    assert "curl" in texts["CLI hooks list"]
    assert '"name":"remote"' in texts["GUI /api/servers"]
    assert "token <redacted>" in texts["CLI mcp status"] and "token <redacted>" in texts["TUI servers"]
    leaks = [leak for where, text in texts.items() for leak in _leaks(where, text)]
    assert leaks == [], "\n".join(leaks)


def _home_files(home: Path) -> dict[str, str]:
    """Every file Kairox wrote under its home (logs, server stderr logs, transcripts, caches), not the planted
    configuration itself."""
    return {
        f"file {path.relative_to(home)}": path.read_text(encoding="utf-8", errors="replace")
        for path in sorted(home.rglob("*"))
        if path.is_file() and path.name != "kairox.toml"
    }


async def _gateway_texts(workspace: Path, audit: Path) -> dict[str, str]:
    from tests.gateway.conftest import in_process

    async with in_process(workspace, audit) as client:
        listed = await client.list_tools()
        names = [tool.name for tool in listed.tools]
        echo = next(name for name in names if name.endswith("local__echo"))
        called = await client.call_tool(echo, {"message": f"token {SECRETS['env']}"})
        assert not called.is_error, called
    return {
        "gateway tools/list": json.dumps(listed.model_dump(mode="json")),
        "gateway audit": audit.read_text(encoding="utf-8"),
    }


async def test_planted_secrets_reach_no_gateway_listing_audit_transcript_or_log(
    tmp_path: Path, isolated_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tests.servers.model_server import ScriptedModelServer

    from kairox.agent import open_session

    monkeypatch.setenv("KAIROX_TEST_MODEL_KEY", "sk-planted-model-key-5611")
    workspace = make_workspace(tmp_path / "repo")
    # the model asks the local server to echo a planted secret: the call's arguments and its result hold it
    script = [
        {
            "reply": "tool_calls",
            "text": "",
            "calls": [{"id": "e1", "name": "mcp__local__echo", "arguments": {"message": f"token {SECRETS['env']}"}}],
        },
        {"reply": "text", "text": "Done.", "expect": {"tool_results": {"e1": "token"}}},
    ]
    with ScriptedModelServer("openai", script) as server:
        head = (
            'model = "scripted-model"\nmodel_provider = "scripted"\n\n[policy.rules]\nallow = ["mcp__local__*"]\n\n'
            '[model_providers.scripted]\nwire_api = "chat"\n'
            f'base_url = "{server.base_url}"\napi_key_env = "KAIROX_TEST_MODEL_KEY"\n\n'
        )
        _plant(isolated_home, head)
        async with open_session(workspace) as session:
            await session.run_turn("Echo the token.")
            transcript = session.transcript.path
    texts = {
        "transcript": transcript.read_text(encoding="utf-8"),
        **await _gateway_texts(workspace, tmp_path / "audit.jsonl"),
    }
    texts.update(_home_files(isolated_home))

    # each output was produced and holds the call (redacted where the secret was)
    assert "mcp__local__echo" in texts["transcript"] and "token <redacted>" in texts["transcript"]
    assert "local__echo" in texts["gateway tools/list"] and "token <redacted>" in texts["gateway audit"]
    # the servers' stderr logs (the leaky one printed its token there) and the gateway's audit under the home
    assert "token <redacted>" in texts["file logs/mcp/leaky.log"], sorted(texts)
    assert "sk-planted-model-key-5611" not in "".join(texts.values())
    leaks = [leak for where, text in texts.items() for leak in _leaks(where, text)]
    assert leaks == [], "\n".join(leaks)
