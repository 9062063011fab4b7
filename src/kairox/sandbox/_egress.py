"""The session's egress proxy (Y14): what a sandbox with ``network = "allowlist"`` has instead of a network.

The sandbox keeps its own network namespace, with nothing but loopback. Its first process (``_forwarder.py``)
listens on 127.0.0.1 there, sets ``HTTP_PROXY``/``HTTPS_PROXY``, and hands each connection it accepts to this
proxy through the Unix socket bound into the sandbox (the connection itself, passed as a descriptor). The proxy
reads the request, checks the name, resolves it here, connects to the address it resolved (so the name is never
looked up twice) and relays. It takes ``CONNECT host:port`` (https, and any TCP to an allowed name) and absolute
``http://`` requests, whose ``Host`` it sets from the URL. It refuses an address in any spelling, a name the list
does not allow, and a name only a ``*.`` pattern allows that resolves outside the public internet: a 403 whose
text says why, an ``EgressRefused`` event and a count. One listener per list, a socket in ``egress_folder()``
that no other sandbox sees; a thread per connection, at most ``MAX_CONNECTIONS`` at once."""

import atexit
import contextlib
import ipaddress
import os
import secrets
import socket
import stat
import sys
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from kairox._util._domains import allowing, host_name
from kairox.config import SandboxPolicy
from kairox.errors import SandboxUnavailableError
from kairox.events import Event
from kairox.tools import EgressRoute, SandboxSettings, egress_folder

FORWARDER = Path(__file__).with_name("_forwarder.py")
HEAD_LIMIT = 65_536
"""Bytes a request's line and headers may take."""
HEAD_TIMEOUT_SEC = 30.0
CONNECT_TIMEOUT_SEC = 10.0
MAX_CONNECTIONS = 256
"""Connections one proxy serves at once; past it a new one is closed at once."""
_HOP_BY_HOP = {b"host", b"connection", b"proxy-connection", b"keep-alive", b"proxy-authorization", b"te", b"upgrade"}
_PHRASES = {400: "Bad Request", 403: "Forbidden", 502: "Bad Gateway"}


@dataclass(frozen=True, kw_only=True, slots=True)
class EgressRefused(Event):
    """A sandboxed process asked the egress proxy for what it may not reach."""

    host: str
    port: int | None
    reason: str


class _Refusal(Exception):
    def __init__(self, status: int, reason: str, host: str = "", port: int | None = None) -> None:
        super().__init__(reason)
        self.status, self.reason, self.host, self.port = status, reason, host, port


def host_allowed(host: str, sandbox: SandboxSettings) -> bool:
    """Whether processes confined by ``sandbox`` may reach ``host`` by name: any host with the network on (or no
    sandbox), none with it off, and under ``allowed_domains`` a name (never an address) the list allows. The proxy
    also refuses a name only a ``*.`` pattern allows once it resolves outside the public internet."""
    if sandbox.mode is SandboxPolicy.DANGER_FULL_ACCESS or sandbox.network_access:
        return True
    name = host_name(host)
    return name is not None and allowing(name, sandbox.allowed_domains or ()) is not None


def _shown(text: str) -> str:
    return "".join(c if c.isascii() and c.isprintable() else "?" for c in text[:120])


def _public(sockaddr: tuple[object, ...]) -> bool:
    address = ipaddress.ip_address(str(sockaddr[0]).split("%", 1)[0])
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        address = address.ipv4_mapped
    return address.is_global


class EgressProxy:
    """One session's proxy. ``route`` (the ``SandboxSettings.egress`` of the session) starts a listener per list
    on first use; ``close`` stops them. ``report`` gets each ``EgressRefused`` (from the proxy's threads)."""

    def __init__(self, *, report: Callable[[Event], object] | None = None) -> None:
        self.refused = 0
        self._report = report
        self._lock = threading.Lock()
        self._slots = threading.BoundedSemaphore(MAX_CONNECTIONS)
        self._listeners: dict[tuple[str, ...], tuple[socket.socket, Path]] = {}
        self._closed = False

    def route(self, domains: tuple[str, ...]) -> EgressRoute:
        """The way into this proxy for a sandbox allowed ``domains``; raises ``SandboxUnavailableError`` when it
        cannot listen (the command does not run)."""
        with self._lock:
            if self._closed:
                raise SandboxUnavailableError("the session's egress proxy has stopped", hint="start a new session")
            if domains not in self._listeners:
                self._listeners[domains] = self._listen(domains)
            path = self._listeners[domains][1]
        python = sys.executable or "python3"
        return EgressRoute(socket=path, launcher=(python, "-I", "-S", str(FORWARDER), str(path), "--"))

    def _listen(self, domains: tuple[str, ...]) -> tuple[socket.socket, Path]:
        folder = egress_folder()
        server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            found = folder.lstat()
            if not stat.S_ISDIR(found.st_mode) or found.st_uid != os.getuid() or found.st_mode & 0o077:
                raise OSError(f"{folder} is not a folder of this user's alone")
            path = folder / f"{os.getpid()}-{secrets.token_hex(6)}.sock"
            server.bind(str(path))
            server.listen(64)
        except OSError as exc:
            server.close()
            raise SandboxUnavailableError(
                f"the egress proxy for sandbox.allowed_domains cannot listen: {exc}",
                hint=f"remove {folder}, or point TMPDIR at a folder of your own",
            ) from exc
        threading.Thread(target=self._accept, args=(server, domains), name="kairox-egress", daemon=True).start()
        return server, path

    def close(self) -> None:
        with self._lock:
            self._closed = True
            listeners, self._listeners = self._listeners, {}
        for server, path in listeners.values():
            with contextlib.suppress(OSError):
                server.shutdown(socket.SHUT_RDWR)  # wakes the accepting thread
            server.close()
            path.unlink(missing_ok=True)

    def _accept(self, server: socket.socket, domains: tuple[str, ...]) -> None:
        while True:
            try:
                link, _ = server.accept()
            except OSError:
                return
            if not self._slots.acquire(blocking=False):
                link.close()
                continue
            threading.Thread(target=self._serve, args=(link, domains), name="kairox-egress", daemon=True).start()

    def _serve(self, link: socket.socket, domains: tuple[str, ...]) -> None:
        try:
            fds: list[int] = []
            with link, contextlib.suppress(OSError):
                link.settimeout(HEAD_TIMEOUT_SEC)
                _, fds, _, _ = socket.recv_fds(link, 1, 1)
            for fd in fds:
                try:
                    client = socket.socket(fileno=fd)
                except OSError:  # not a socket: nothing to serve
                    os.close(fd)
                    continue
                with client:
                    self._handle(client, domains)
        finally:
            self._slots.release()

    def _handle(self, client: socket.socket, domains: tuple[str, ...]) -> None:
        try:
            client.settimeout(HEAD_TIMEOUT_SEC)
            head, rest = _read_head(client)
            if head is None:
                return
            method, target, version, fields = _request_line(head)
            tunnel = method == "CONNECT"
            authority = target if tunnel else target[7:].split("/", 1)[0].split("?", 1)[0].split("#", 1)[0]
            name, port = _authority(authority, None if tunnel else 80)
            pattern = allowing(name, domains)
            if pattern is None:
                raise _Refusal(403, f"{name} is not on the allowed list", name, port)
            upstream = _connect(name, port, pattern)
        except _Refusal as refusal:
            self._refuse(client, refusal, domains)
            return
        except OSError:
            return
        with upstream:
            if tunnel:
                client.sendall(b"HTTP/1.1 200 Connection established\r\n\r\n")
            else:
                path = target[7 + len(authority) :].split("#", 1)[0]
                path = path if path.startswith("/") else f"/{path}"
                host = name if port == 80 else f"{name}:{port}"
                kept = [f for f in fields.split(b"\r\n") if f.split(b":", 1)[0].strip().lower() not in _HOP_BY_HOP]
                lines = [f"{method} {path} {version}".encode(), *kept, f"Host: {host}".encode(), b"Connection: close"]
                upstream.sendall(b"\r\n".join(lines) + b"\r\n\r\n")
            if rest:
                upstream.sendall(rest)
            _relay(client, upstream)

    def _refuse(self, client: socket.socket, refusal: _Refusal, domains: Sequence[str]) -> None:
        reason = _shown(refusal.reason)
        if refusal.status != 502:
            with self._lock:
                self.refused += 1
            if self._report is not None:
                with contextlib.suppress(Exception):
                    self._report(EgressRefused(host=_shown(refusal.host), port=refusal.port, reason=reason))
        body = f"Kairox sandbox: {reason}.\n" + (
            ""
            if refusal.status == 502
            else f"This sandbox reaches the network only through Kairox's proxy, and only these names: "
            f"{', '.join(domains) or 'none'}. Another name must be added to sandbox.allowed_domains in the user's "
            "own kairox.toml; an address is never reached.\n"
        )
        head = (
            f"HTTP/1.1 {refusal.status} {_PHRASES[refusal.status]} by Kairox sandbox: {reason}\r\n"
            f"Content-Type: text/plain; charset=utf-8\r\nContent-Length: {len(body)}\r\nConnection: close\r\n\r\n"
        )
        with contextlib.suppress(OSError):
            client.sendall((head + body).encode())


def _read_head(client: socket.socket) -> tuple[bytes | None, bytes]:
    """The request's line and headers, and what came after them; None when the connection closed first."""
    data = b""
    while (end := data.find(b"\r\n\r\n")) < 0:
        if len(data) > HEAD_LIMIT:
            raise _Refusal(400, f"the request's head is longer than {HEAD_LIMIT} bytes")
        chunk = client.recv(16_384)
        if not chunk:
            return None, b""
        data += chunk
    return data[:end], data[end + 4 :]


def _request_line(head: bytes) -> tuple[str, str, str, bytes]:
    line, _, fields = head.partition(b"\r\n")
    parts = line.decode("latin-1").split(" ")
    if len(parts) != 3 or not parts[0].isalpha() or parts[2] not in ("HTTP/1.1", "HTTP/1.0"):
        raise _Refusal(400, "not an HTTP/1 request")
    method, target, version = parts
    if method != "CONNECT" and target[:7].lower() != "http://":
        raise _Refusal(400, "the proxy takes CONNECT host:port (https) and absolute http:// URLs only")
    return method, target, version, fields


def _authority(text: str, default_port: int | None) -> tuple[str, int]:
    """The host name and port of ``host[:port]``; an address, a user name or a bad port is refused."""
    host, colon, port_text = text.rpartition(":") if not text.endswith("]") else (text, "", "")
    if not colon:
        host, port_text = text, str(default_port or "")
    if not (port_text.isascii() and port_text.isdigit() and 0 < int(port_text) < 65_536):
        raise _Refusal(400, f"{text} has no valid port", text)
    name = host_name(host)
    if name is None:
        raise _Refusal(403, f"{host} is an address or no host name; the list names hosts", host, int(port_text))
    return name, int(port_text)


def _connect(name: str, port: int, pattern: str) -> socket.socket:
    """A connection to ``name`` (allowed by ``pattern``), to the first address it resolves to that answers; only
    a name listed exactly may reach an address outside the public internet."""
    try:
        found = socket.getaddrinfo(name, port, type=socket.SOCK_STREAM)
    except OSError as exc:
        raise _Refusal(502, f"{name} could not be resolved ({exc.strerror or exc})", name, port) from exc
    if pattern.startswith("*."):
        public = [entry for entry in found if _public(entry[4])]
        if not public:
            raise _Refusal(
                403,
                f"{name} is allowed by {pattern} but resolves to {found[0][4][0]}, outside the public internet; "
                "only a name listed exactly may reach such an address",
                name,
                port,
            )
        found = public
    problem: OSError | None = None
    for family, kind, proto, _, sockaddr in found:
        upstream = socket.socket(family, kind, proto)
        try:
            upstream.settimeout(CONNECT_TIMEOUT_SEC)
            upstream.connect(sockaddr)
            upstream.settimeout(None)
            return upstream
        except OSError as exc:
            upstream.close()
            problem = exc
    raise _Refusal(502, f"{name}:{port} did not answer ({problem})", name, port)


def _relay(client: socket.socket, upstream: socket.socket) -> None:
    """Copy both ways until both sides are done (one thread each way: neither waits on the other's reader)."""
    client.settimeout(None)
    back = threading.Thread(target=_copy, args=(upstream, client), name="kairox-egress", daemon=True)
    back.start()
    _copy(client, upstream)
    back.join()


def _copy(source: socket.socket, target: socket.socket) -> None:
    try:
        while data := source.recv(65_536):
            target.sendall(data)
        target.shutdown(socket.SHUT_WR)
    except OSError:  # one side broke: stop both ways
        for side in (source, target):
            with contextlib.suppress(OSError):
                side.shutdown(socket.SHUT_RDWR)


_shared: list[EgressProxy] = []
_shared_lock = threading.Lock()


def shared_egress(domains: tuple[str, ...]) -> EgressRoute:
    """The route into this process's own proxy, for sandboxes started outside a session (refusals only counted);
    a session replaces it with its own (``EgressProxy.route``)."""
    with _shared_lock:
        if not _shared:
            _shared.append(EgressProxy())
            atexit.register(_shared[0].close)
    return _shared[0].route(domains)
