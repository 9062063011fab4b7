"""``kairox gui``: uvicorn on 127.0.0.1 (a port of the caller's choosing, or a free one), the URL with the run's
token printed, and opened in the browser unless asked not to."""

import contextlib
import dataclasses
import socket
import sys
from collections.abc import Callable, Iterator

import anyio
import uvicorn

from kairox.web._app import create_app
from kairox.web._options import WebOptions

HOST = "127.0.0.1"


class _Server(uvicorn.Server):
    """uvicorn without its own signal handlers: Ctrl+C reaches ``serve_gui``, which stops it in order."""

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        yield


def bind(port: int) -> socket.socket:
    """The listening socket, bound before the app exists, so the guard knows the port (0 picks a free one)."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((HOST, port))
    sock.listen(128)
    sock.set_inheritable(True)
    return sock


async def serve_gui(options: WebOptions, *, open_browser: Callable[[str], object] | None = None) -> None:
    """Serve until SIGINT or SIGTERM; the session and every server it started stop before this returns."""
    import signal

    sock = bind(options.port)
    port = sock.getsockname()[1]
    options = dataclasses.replace(options, port=port)
    app = create_app(options)
    config = uvicorn.Config(app, log_level="warning", lifespan="on", access_log=False, timeout_graceful_shutdown=3)
    server = _Server(config)
    url = f"http://{HOST}:{port}/?token={options.token}"

    async def announce() -> None:
        while not server.started:
            await anyio.sleep(0.02)
        sys.stdout.write(f"Kairox GUI: {url}\n")
        sys.stdout.flush()
        if open_browser is not None:
            open_browser(url)

    async def until_signal() -> None:
        with anyio.open_signal_receiver(signal.SIGTERM, signal.SIGINT) as signals:
            async for _ in signals:
                server.should_exit = True
                return

    try:
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(announce)
            tasks.start_soon(until_signal)
            await server.serve(sockets=[sock])
            tasks.cancel_scope.cancel()
    finally:
        sock.close()
