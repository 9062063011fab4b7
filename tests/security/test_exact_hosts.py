"""Host and Origin checks compare ports exactly (attack corpus, DNS rebinding): a page of another site reaches the
GUI's server or ``kairox serve --http`` only under a name it controls, so ``localhost:PORT@evil.com``,
``127.0.0.1:PORT.evil.com``, another port or trailing text after the port are all refused, for the Host header and
for the Origin header; the server's own names on its own port still pass. And the GUI's page takes the token out of
the address and sends no referrer."""

from pathlib import Path

import anyio
import httpx
import httpx2
import pytest
from starlette.responses import PlainTextResponse
from starlette.types import Receive, Scope, Send
from tests.gateway.conftest import start_gateway

from kairox.gateway._serve import ExactHosts, HttpOptions
from kairox.web import WebOptions, create_app
from kairox.web._guard import RequestGuard

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(180)]

PORT = 8765
TOKEN = "exact-hosts-token-0123456789"


def _hostile(port: int) -> list[str]:
    return [
        f"localhost:{port}@evil.com",
        f"127.0.0.1:{port}.evil.com",
        f"localhost:{port}.evil.com",
        f"127.0.0.1:{port}:80",
        f"localhost:{port + 1}",
        f"127.0.0.1:{port}0",
        "127.0.0.1:",
        "localhost",
        "evil.com:80",
        f"[::1]:{port}@evil.com",
        f"127.0.0.1:{port}/x",
    ]


def _good(port: int) -> list[str]:
    return [f"127.0.0.1:{port}", f"localhost:{port}"]


async def _ok(scope: Scope, receive: Receive, send: Send) -> None:
    await PlainTextResponse("ok")(scope, receive, send)


async def _status(app: object, host: str, origin: str | None = None) -> int:
    headers = {"Host": host, "Authorization": f"Bearer {TOKEN}"} | ({"Origin": origin} if origin else {})
    async with httpx.AsyncClient(
        transport=httpx.ASGITransport(app=app, client=("127.0.0.1", 5000)), base_url=f"http://127.0.0.1:{PORT}"
    ) as http:  # type: ignore[arg-type]
        return (await http.get("/", headers=headers)).status_code


def _exact_hosts() -> ExactHosts:
    http = HttpOptions(host="127.0.0.1", port=PORT)
    app = ExactHosts(_ok, names=http.names, hosts=http.allowed_hosts, origins=http.allowed_origins)

    async def on_port(scope: Scope, receive: Receive, send: Send) -> None:
        await app({**scope, "server": ("127.0.0.1", PORT)}, receive, send)  # what uvicorn puts there: the bound socket

    return on_port  # type: ignore[return-value]


@pytest.mark.parametrize("host", _hostile(PORT))
async def test_the_gui_refuses_a_host_or_origin_with_another_port_or_text_after_it(host: str) -> None:
    guard = RequestGuard(_ok, token=TOKEN, port=PORT)
    assert await _status(guard, host) == 403
    assert await _status(guard, f"127.0.0.1:{PORT}", origin=f"http://{host}") == 403


@pytest.mark.parametrize("host", _hostile(PORT))
async def test_the_gateway_refuses_a_host_or_origin_with_another_port_or_text_after_it(host: str) -> None:
    app = _exact_hosts()
    assert await _status(app, host) == 421
    assert await _status(app, f"127.0.0.1:{PORT}", origin=f"http://{host}") == 403


@pytest.mark.parametrize("host", _good(PORT))
async def test_the_own_names_on_the_own_port_pass(host: str) -> None:
    assert await _status(RequestGuard(_ok, token=TOKEN, port=PORT), host, origin=f"http://{host}") == 200
    assert await _status(_exact_hosts(), host, origin=f"http://{host}") == 200


async def test_an_allowed_name_with_any_port_takes_only_a_port() -> None:
    app = ExactHosts(_ok, names=(), hosts=("dev.internal:*",), origins=())
    assert await _status(app, "dev.internal:9000") == 200
    assert await _status(app, "dev.internal:9000@evil.com") == 421
    assert await _status(app, "dev.internal:9000.evil.com") == 421


async def test_a_real_kairox_serve_refuses_the_spellings(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    (workspace / ".git").mkdir(parents=True)
    served = start_gateway(workspace, tmp_path / "home", "--token", TOKEN)
    try:
        port = int(served.url.rsplit(":", 1)[1].split("/", 1)[0])
        body = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
        headers = {
            "Accept": "application/json, text/event-stream",
            "Content-Type": "application/json",
            "Authorization": f"Bearer {TOKEN}",
        }
        async with httpx2.AsyncClient(timeout=30) as http:
            statuses = {
                host: (await http.post(served.url, json=body, headers={**headers, "Host": host})).status_code
                for host in _hostile(port)
            }
            origins = {
                host: (
                    await http.post(served.url, json=body, headers={**headers, "Origin": f"http://{host}"})
                ).status_code
                for host in _hostile(port)
            }
            own = await http.post(served.url, json=body, headers={**headers, "Origin": f"http://127.0.0.1:{port}"})
    finally:
        await anyio.to_thread.run_sync(served.stop)
    assert statuses == dict.fromkeys(_hostile(port), 421)
    assert origins == dict.fromkeys(_hostile(port), 403)
    assert own.status_code not in (403, 421), (
        own.text
    )  # past both checks: the MCP layer answers (here: a ping needs a session)


async def test_the_gui_page_takes_the_token_out_of_the_address_and_sends_no_referrer(tmp_path: Path) -> None:
    static = tmp_path / "static"
    static.mkdir()
    (static / "index.html").write_text("<!doctype html><title>Kairox</title>", encoding="utf-8")
    (tmp_path / "ws" / ".git").mkdir(parents=True)
    app = create_app(WebOptions(workspace=tmp_path / "ws", port=PORT, token=TOKEN, static_dir=static))
    async with httpx.AsyncClient(
        transport=httpx.ASGITransport(app=app), base_url=f"http://127.0.0.1:{PORT}"
    ) as browser:
        first = await browser.get(f"/settings?token={TOKEN}&tab=mcp")
        page = await browser.get(first.headers["location"])
    assert (first.status_code, first.headers["location"]) == (303, "/settings?tab=mcp")
    assert TOKEN not in first.headers["location"] and first.headers["referrer-policy"] == "no-referrer"
    assert first.headers["set-cookie"].startswith(f"kairox_token={TOKEN}")
    assert (page.status_code, page.headers["referrer-policy"]) == (
        200,
        "no-referrer",
    ) and "<title>Kairox</title>" in page.text
