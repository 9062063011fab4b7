"""The session's egress proxy (Y14): a sandbox's forwarder (``_forwarder.py``) hands it each connection over the Unix
socket bound in. It reads ``CONNECT host:port`` or an absolute ``http://`` request (its ``Host`` set from the URL),
checks the name, resolves it here and connects to what it resolved; it refuses an address in any spelling, a name
off the list, and one only a ``*.`` pattern allows that resolves outside the public internet (a 403 saying why, an
``EgressRefused`` event). A listener per list, its socket in ``egress_folder()``; a thread per connection."""

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
from kairox.errors import SandboxUnavailableError
from kairox.events import Event
from kairox.sandbox._bwrap import egress_folder

FORWARDER = Path(__file__).with_name("_forwarder.py")
# a request's head at most; waits; connections one proxy serves at once (past it a new one is closed at once)
HEAD_LIMIT, HEAD_TIMEOUT_SEC, CONNECT_TIMEOUT_SEC, MAX_CONNECTIONS = 65_536, 30.0, 10.0, 256
_HOP_BY_HOP = {b"host", b"connection", b"proxy-connection", b"keep-alive", b"proxy-authorization", b"te", b"upgrade"}
_PHRASES = {400: "Bad Request", 403: "Forbidden", 502: "Bad Gateway"}


@dataclass(frozen=True, kw_only=True, slots=True)
class EgressRefused(Event):
    """A sandboxed process asked the egress proxy for what it may not reach."""

    host: str
    port: int | None
    reason: str


class _Refusal(Exception):
    """``(status, reason, host, port)``: what the proxy answers instead of connecting."""


class EgressProxy:
    """One session's proxy: ``route`` (the session's ``SandboxSettings.egress``) starts a listener per list on
    first use, ``close`` stops them; ``report`` gets each ``EgressRefused``, in the proxy's threads."""

    def __init__(self, *, report: Callable[[Event], object] | None = None) -> None:
        self._report = report
        self._lock = threading.Lock()
        self._slots = threading.BoundedSemaphore(MAX_CONNECTIONS)
        self._listeners: dict[tuple[str, ...], tuple[socket.socket, Path]] | None = {}

    def route(self, domains: tuple[str, ...]) -> tuple[Path, tuple[str, ...]]:
        """The socket and forwarder for a sandbox allowed ``domains``; ``SandboxUnavailableError`` if none can be."""
        with self._lock:
            if self._listeners is None:
                raise SandboxUnavailableError("the session's egress proxy has stopped", hint="start a new session")
            if domains not in self._listeners:
                self._listeners[domains] = self._listen(domains)
            path = self._listeners[domains][1]
        return path, (_python(), "-I", "-S", str(FORWARDER), str(path), "--")

    def _listen(self, domains: tuple[str, ...]) -> tuple[socket.socket, Path]:
        folder, server = egress_folder(), socket.socket(socket.AF_UNIX)
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
        threading.Thread(target=self._accept, args=(server, domains), daemon=True).start()
        return server, path

    def close(self) -> None:
        with self._lock:
            listeners, self._listeners = self._listeners or {}, None
        for server, path in listeners.values():
            with contextlib.suppress(OSError):
                server.shutdown(socket.SHUT_RDWR)  # wakes the accepting thread
            server.close()
            path.unlink(missing_ok=True)

    def _accept(self, server: socket.socket, domains: tuple[str, ...]) -> None:
        with contextlib.suppress(OSError):
            while link := server.accept()[0]:
                if self._slots.acquire(blocking=False):
                    threading.Thread(target=self._serve, args=(link, domains), daemon=True).start()
                else:
                    link.close()

    def _serve(self, link: socket.socket, domains: tuple[str, ...]) -> None:
        try:
            with link:
                link.settimeout(HEAD_TIMEOUT_SEC)
                fds = socket.recv_fds(link, 1, 1)[1]
            for fd in fds:  # the forwarder's connection; anything else sent is only closed
                if not stat.S_ISSOCK(os.fstat(fd).st_mode):
                    os.close(fd)
                    continue
                with socket.socket(fileno=fd) as client:
                    self._handle(client, domains)
        except (OSError, ValueError):
            pass  # this connection ends; the others go on
        finally:
            self._slots.release()

    def _handle(self, client: socket.socket, domains: tuple[str, ...]) -> None:
        client.settimeout(HEAD_TIMEOUT_SEC)
        try:
            if (request := _request(client)) is None:
                return
            method, target, version, fields, rest = request
            tunnel = method == "CONNECT"
            authority = target if tunnel else target[7:].split("/", 1)[0].split("?", 1)[0].split("#", 1)[0]
            name, port = _authority(authority, None if tunnel else 80)
            if (pattern := allowing(name, domains)) is None:
                raise _Refusal(403, f"{name} is not on the allowed list", name, port)
            upstream = _connect(name, port, pattern)
        except _Refusal as refusal:
            self._refuse(client, refusal, domains)
            return
        with upstream:
            if tunnel:
                client.sendall(b"HTTP/1.1 200 Connection established\r\n\r\n")
            else:  # origin form, the Host of the URL (never the client's), one request
                path = target[7 + len(authority) :].split("#", 1)[0]
                host = name if port == 80 else f"{name}:{port}"
                kept = [f for f in fields.split(b"\r\n") if f and f.split(b":")[0].strip().lower() not in _HOP_BY_HOP]
                first = f"{method} {path if path.startswith('/') else '/' + path} {version}".encode()
                upstream.sendall(b"\r\n".join([first, *kept, f"Host: {host}\r\nConnection: close\r\n\r\n".encode()]))
            upstream.sendall(rest)
            client.settimeout(None)
            upstream.settimeout(None)
            back = threading.Thread(target=_copy, args=(upstream, client), daemon=True)
            back.start()
            _copy(client, upstream)
            back.join()

    def _refuse(self, client: socket.socket, refusal: _Refusal, domains: Sequence[str]) -> None:
        status, reason, host, port = refusal.args
        reason, host = _printable(reason), _printable(host)
        body = f"Kairox sandbox: {reason}.\n"
        if status != 502:  # a refusal (not a failure): reported and explained
            with contextlib.suppress(Exception):
                self._report(EgressRefused(host=host, port=port, reason=reason)) if self._report else None
            body += f"This sandbox reaches only these names, through Kairox's proxy: {', '.join(domains) or 'none'}. "
            body += "The user may add one to sandbox.allowed_domains in their own kairox.toml; no address is reached.\n"
        client.sendall(
            f"HTTP/1.1 {status} {_PHRASES[status]} by Kairox sandbox: {reason}\r\nContent-Type: "
            f"text/plain\r\nContent-Length: {len(body)}\r\nConnection: close\r\n\r\n{body}".encode()
        )


def _python() -> str:
    """Kairox's own Python, or the system's when a sandbox could not reach Kairox's (in another user's home)."""
    own = Path(os.path.realpath(sys.executable))
    with contextlib.suppress(OSError):
        if all((s := p.stat()).st_mode & 0o001 or s.st_uid == os.getuid() for p in (own, *own.parents)):
            return str(own)
    return "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else str(own)


def _printable(text: str) -> str:
    return "".join(c if c.isascii() and c.isprintable() else "?" for c in text[:200])


def _request(client: socket.socket) -> tuple[str, str, str, bytes, bytes] | None:
    """Method, target, version, header lines and what followed them; None when the connection closed first."""
    data = b""
    while (end := data.find(b"\r\n\r\n")) < 0 and len(data) <= HEAD_LIMIT:
        if not (chunk := client.recv(16_384)):
            return None
        data += chunk
    if not 0 <= end <= HEAD_LIMIT:
        raise _Refusal(400, f"the request's head is longer than {HEAD_LIMIT} bytes", "", None)
    line, _, fields = data[:end].partition(b"\r\n")
    parts = line.decode("latin-1").split(" ")
    if len(parts) != 3 or not parts[0].isalpha() or parts[2] not in ("HTTP/1.1", "HTTP/1.0"):
        raise _Refusal(400, "not an HTTP/1 request", "", None)
    if parts[0] != "CONNECT" and parts[1][:7].lower() != "http://":
        raise _Refusal(400, "the proxy takes CONNECT host:port (https) and absolute http:// URLs only", "", None)
    return parts[0], parts[1], parts[2], fields, data[end + 4 :]


def _authority(text: str, default_port: int | None) -> tuple[str, int]:
    """The host name and port of ``host[:port]``; an address, a user name or a bad port is refused."""
    host, colon, port = text.rpartition(":") if not text.endswith("]") else (text, "", "")
    host, port = (host, port) if colon else (text, str(default_port or ""))
    if not (port.isascii() and port.isdigit() and 0 < int(port) < 65_536):
        raise _Refusal(400, f"{text} has no valid port", text, None)
    name = host_name(host)
    if name is None:
        raise _Refusal(403, f"{host} is an address or no host name; the list names hosts", host, int(port))
    return name, int(port)


def _public(address: str) -> bool:
    found = ipaddress.ip_address(address.split("%", 1)[0])
    mapped = found.ipv4_mapped if isinstance(found, ipaddress.IPv6Address) else None
    return (mapped or found).is_global


def _connect(name: str, port: int, pattern: str) -> socket.socket:
    """A connection to the first address of ``name`` that answers; only a name listed exactly (not by a ``*.``
    ``pattern``) may reach an address outside the public internet."""
    try:
        found = socket.getaddrinfo(name, port, type=socket.SOCK_STREAM)
    except OSError as exc:
        raise _Refusal(502, f"{name} could not be resolved ({exc})", name, port) from exc
    if pattern.startswith("*.") and not (found := [f for f in found if _public(str(f[4][0]))]):
        where = "outside the public internet; only a name listed exactly may reach such an address"
        raise _Refusal(403, f"{name} is allowed by {pattern} but resolves {where}", name, port)
    for *_, address in found:
        with contextlib.suppress(OSError):
            return socket.create_connection((str(address[0]), port), timeout=CONNECT_TIMEOUT_SEC)
    raise _Refusal(502, f"{name}:{port} did not answer", name, port)


def _copy(source: socket.socket, target: socket.socket) -> None:
    """One way of a relay (a thread each way: neither waits on the other's reader)."""
    try:
        while data := source.recv(65_536):
            target.sendall(data)
        target.shutdown(socket.SHUT_WR)
    except OSError:  # one side broke: stop both ways
        for side in (source, target):
            with contextlib.suppress(OSError):
                side.shutdown(socket.SHUT_RDWR)


SHARED = EgressProxy()  # for sandboxes started outside a session (a session puts its own in its settings)
atexit.register(SHARED.close)
shared_egress = SHARED.route
