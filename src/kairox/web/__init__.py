"""``kairox gui``: the local web GUI. A Starlette application on 127.0.0.1 with a per-run token, a JSON API over
the runtime's operations and one server-sent-events stream of Kairox events (``docs/web-api.md``), serving the
page built from ``ui/`` into ``kairox/web/static``."""

from kairox.config import SecretScrubber as Redactor
from kairox.web._app import NOT_BUILT, create_app
from kairox.web._backend import WebApprover, WebBackend, answer_from_json
from kairox.web._guard import COOKIE, RequestGuard
from kairox.web._hub import EventHub
from kairox.web._options import STATIC, WebOptions
from kairox.web._serve import HOST, bind, gui_url, serve_gui

__all__ = [
    "COOKIE",
    "HOST",
    "NOT_BUILT",
    "STATIC",
    "EventHub",
    "Redactor",
    "RequestGuard",
    "WebApprover",
    "WebBackend",
    "WebOptions",
    "answer_from_json",
    "bind",
    "create_app",
    "gui_url",
    "serve_gui",
]
