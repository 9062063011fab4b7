"""``kairox gui``: the local web GUI. A Starlette application on 127.0.0.1 with a per-run token, a JSON API over
the runtime's operations and one server-sent-events stream of Kairox events (``docs/web-api.md``), serving the
page built from ``ui/`` into ``kairox/web/static``."""

from kairox.web._app import create_app
from kairox.web._options import WebOptions
from kairox.web._serve import serve_gui

__all__ = ["WebOptions", "create_app", "serve_gui"]
