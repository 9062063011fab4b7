"""The GUI's application under test: started with its lifespan (the session or the extension context runs, real
servers start), asked through httpx's ASGI transport with the run's token, its events read from the hub."""

import asyncio
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest

from kairox.web import WebOptions, create_app
from kairox.web._backend import WebBackend
from kairox.web._hub import WebEvent

PORT = 8765
TOKEN = "test-token-0123456789"
BASE = f"http://127.0.0.1:{PORT}"


@dataclass
class Gui:
    client: httpx.AsyncClient
    backend: WebBackend
    events: "asyncio.Queue[WebEvent]"
    seen: list[WebEvent]

    async def event(
        self, kind: str, check: Callable[[dict[str, Any]], bool] = lambda data: True, timeout: float = 90
    ) -> dict[str, Any]:
        """The next event of ``kind`` (that ``check`` accepts); every event read on the way is kept in ``seen``."""
        with anyio.fail_after(timeout):
            while True:
                item = await self.events.get()
                self.seen.append(item)
                if item.type == kind and check(item.data):
                    return item.data

    async def until(self, check: Callable[[], bool], timeout: float = 90) -> None:
        with anyio.fail_after(timeout):
            while not check():
                await anyio.sleep(0.05)


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    (root / ".git").mkdir(parents=True)
    return root


@pytest.fixture
def open_gui() -> Callable[..., Any]:
    """``async with open_gui(workspace) as gui:`` — the app running over ``workspace``."""
    import contextlib

    @contextlib.asynccontextmanager
    async def opened(workspace: Path, *, static_dir: Path | None = None, wait: bool = True) -> AsyncIterator[Gui]:
        options = WebOptions(workspace=workspace, port=PORT, token=TOKEN)
        if static_dir is not None:
            options = WebOptions(workspace=workspace, port=PORT, token=TOKEN, static_dir=static_dir)
        app = create_app(options)
        backend: WebBackend = app.state.backend
        queue = backend.hub.subscribe()
        async with app.router.lifespan_context(app):
            transport = httpx.ASGITransport(app=app)
            async with httpx.AsyncClient(
                transport=transport, base_url=BASE, headers={"Authorization": f"Bearer {TOKEN}"}, timeout=120
            ) as client:
                gui = Gui(client=client, backend=backend, events=queue, seen=[])
                if wait:
                    await backend.ready_context()
                yield gui

    return opened
