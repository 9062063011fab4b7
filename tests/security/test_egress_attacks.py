"""Attacks on ``[sandbox] network = "allowlist"`` (attack corpus, Y14), from inside the real sandbox of the real
``kairox tools call shell.exec``, as root and as an unprivileged user, against a listener on 127.0.0.1 that only
``localhost`` may reach. Classes tried: the address in every spelling the C library reads (dotted, short, octal,
hex, one number, trailing dot, IPv6, IPv4-mapped IPv6, zero), by CONNECT and by absolute-form requests; a user name
or a backslash in the URL; a Host header naming another host; origin-form requests; a pipelined second request to
another host; bad ports; look-alike names (a suffix, a prefix, a Cyrillic letter); an over-long head; the proxy's
Unix socket used directly (with a descriptor of one's own, with a pipe, with no descriptor); another proxy's socket;
the proxy variables ignored (raw TCP by address and by IPv6, UDP, an address off the machine, DNS); and names a
``*.`` pattern allows that resolve to a private address (DNS-rebinding style), with a name listed exactly beside
them."""

import os
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.sandbox._egress import PYTHON, allowlist_home, listener, needed, shell_exec
from tests.security._sockets import place_for

from kairox.errors import SandboxUnavailableError
from kairox.sandbox import EgressProxy
from kairox.sandbox._bwrap import egress_folder

ATTACKS = r"""import os, socket, sys
port = int(sys.argv[1])
proxy = int(os.environ["HTTP_PROXY"].rsplit(":", 1)[1])

def ask(raw, sock=None):
    # the first line of the proxy's answer ("closed" when it closed without one)
    s = sock or socket.create_connection(("127.0.0.1", proxy), timeout=20)
    data = b""
    try:
        s.sendall(raw)
        while b"\r\n" not in data and (chunk := s.recv(65536)):
            data += chunk
    except OSError:
        pass
    s.close()
    return data.decode("latin-1").split("\r\n", 1)[0] or "closed"

def say(label, line):
    print(f"{label}: {line}")

spellings = ["127.0.0.1", "127.1", "0x7f.0.0.1", "0177.0.0.1", "2130706433", "0x7f000001", "017700000001",
             "127.0.0.1.", "127.000.000.001", "0.0.0.0", "0", "[::1]", "[::ffff:127.0.0.1]", "[0:0:0:0:0:0:0:1]",
             "::1", "[::]", "localhost@127.0.0.1", "127.0.0.1#.localhost", "127.0.0.1%00"]
for host in spellings:
    say(f"connect {host}", ask(f"CONNECT {host}:{port} HTTP/1.1\r\nHost: localhost\r\n\r\n".encode()))
    say(f"get {host}", ask(f"GET http://{host}:{port}/by-{host} HTTP/1.1\r\nHost: localhost\r\n\r\n".encode()))
say("userinfo", ask(f"GET http://localhost@127.0.0.1:{port}/userinfo HTTP/1.1\r\n\r\n".encode()))
say("backslash", ask(f"GET http://127.0.0.1:{port}\\@localhost/backslash HTTP/1.1\r\n\r\n".encode()))
headers = f"Host: 127.0.0.1:{port}\r\nHost: evil\r\n"
say("host header", ask(f"GET http://localhost:{port}/host-header HTTP/1.1\r\n{headers}\r\n".encode()))
say("origin form", ask(f"GET /origin HTTP/1.1\r\nHost: localhost:{port}\r\n\r\n".encode()))
second = f"GET http://127.0.0.1:{port}/two HTTP/1.1\r\n\r\n"
say("pipelined", ask(f"GET http://localhost:{port}/one HTTP/1.1\r\n\r\n{second}".encode()))
for bad in (f"localhost:0", "localhost:65536", "localhost:", "localhost", f"localhost:+{port}", f"localhost:{port}x"):
    say(f"port {bad}", ask(f"CONNECT {bad} HTTP/1.1\r\n\r\n".encode()))
for label, name in (("suffix", "localhost.evil.example"), ("prefix", "evil-localhost"), ("cyrillic", "l\u043ecalhost"),
                    ("upper", "LOCALHOST."), ("dots", "localhost.."), ("star", "*.localhost")):
    say(f"name {label}", ask(f"CONNECT {name}:{port} HTTP/1.1\r\n\r\n".encode("utf-8")))
long = f"GET http://localhost:{port}/long HTTP/1.1\r\nX: {'a' * 70000}\r\n\r\n"
say("long head", ask(long.encode()))
say("not http", ask(b"\x16\x03\x01 hello\r\n\r\n"))

# the proxy's own socket, used directly: the only thing in its folder
folder = os.path.join(sys.argv[2], f"kairox-egress-{os.getuid()}")
entries = [os.path.join(folder, e) for e in os.listdir(folder)]
say("egress folder", " ".join(sorted(os.path.basename(e) for e in entries)))
for path in entries:
    mine, theirs = socket.socketpair()
    with socket.socket(socket.AF_UNIX) as link:
        link.connect(path)
        socket.send_fds(link, [b"c"], [theirs.fileno()])
    theirs.close()
    say("own descriptor by address", ask(f"GET http://127.0.0.1:{port}/own HTTP/1.1\r\n\r\n".encode(), mine))
    read, write = os.pipe()
    with socket.socket(socket.AF_UNIX) as link:
        link.connect(path)
        socket.send_fds(link, [b"c"], [read])
    with socket.socket(socket.AF_UNIX) as link:
        link.connect(path)
        link.sendall(f"GET http://127.0.0.1:{port}/raw HTTP/1.1\r\n\r\n".encode())
        link.settimeout(20)
        try:
            say("no descriptor", link.recv(100).decode() or "closed")
        except OSError:
            say("no descriptor", "closed")
for path in sys.argv[3:]:
    try:
        socket.socket(socket.AF_UNIX).connect(path)
        say("other proxy", "reached " + path)
    except OSError as exc:
        say("other proxy", type(exc).__name__)
say("still serving", ask(f"CONNECT localhost:{port} HTTP/1.1\r\n\r\n".encode()))

# what ignores the proxy
outside = [(socket.AF_INET, ("127.0.0.1", port)), (socket.AF_INET6, ("::1", port))]
outside += [(socket.AF_INET, ("10.1.2.3", 80)), (socket.AF_INET, ("8.8.8.8", 53))]
for family, address in outside:
    try:
        socket.socket(family).connect(address)
        say(f"raw {address[0]}", "reached")
    except OSError as exc:
        say(f"raw {address[0]}", type(exc).__name__)
try:
    socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b"x", ("8.8.8.8", 53))
    say("udp", "sent")
except OSError as exc:
    say("udp", type(exc).__name__)
try:
    socket.getaddrinfo("pypi.org", 443)
    say("dns", "resolved")
except OSError as exc:
    say("dns", type(exc).__name__)
print("probe-ran")
"""


@pytest.fixture
def place(user: str) -> Iterator[Path]:
    with place_for(user, "kairox-egress-attack-") as base:
        yield base


def lines(said: str) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for line in said.splitlines():
        label, sep, rest = line.partition(": ")
        if sep:
            found.setdefault(label, []).append(rest)
    return found


@pytest.mark.timeout(300)
def test_no_spelling_no_request_form_and_no_socket_reaches_an_address(place: Path, user: str) -> None:
    allowlist_home(place / "home", ["localhost"], user)
    (place / "ws" / "attacks.py").write_text(ATTACKS)
    other = EgressProxy()  # another session's proxy of this user, with a wider list, made before the command
    try:
        theirs = [str(other.route(("*.example",))[0])] if os.geteuid() == 0 and user == "root" else []
        with listener() as server:
            temp = os.path.realpath(tempfile.gettempdir())
            command = f"{PYTHON} attacks.py {server.port} {temp} {' '.join(theirs)}"
            said, events = shell_exec(place, user, command)
    finally:
        other.close()
    found = lines(said)

    for label, answers in found.items():
        if label.startswith(("connect ", "get ")):
            assert answers[0].startswith(("HTTP/1.1 403 Forbidden by Kairox sandbox", "HTTP/1.1 400")), (label, said)
    assert found["userinfo"][0].startswith("HTTP/1.1 403") and found["backslash"][0].startswith("HTTP/1.1 400")
    assert found["host header"][0].split()[1] == found["pipelined"][0].split()[1] == "200"
    assert found["origin form"][0].startswith("HTTP/1.1 400") and found["not http"][0].startswith("HTTP/1.1 400")
    assert all(found[f"port {bad}"][0].startswith("HTTP/1.1 400") for bad in ("localhost:0", "localhost:65536"))
    assert all(a[0].startswith("HTTP/1.1 40") for label, a in found.items() if label.startswith("port "))
    assert found["name upper"] == ["HTTP/1.1 200 Connection established"]
    for name in ("suffix", "prefix", "cyrillic", "dots", "star"):
        assert found[f"name {name}"][0].startswith("HTTP/1.1 403"), name
    # the proxy answers 400 and closes with the rest unread: the client may see the answer or the reset
    assert found["long head"][0].startswith("HTTP/1.1 400") or found["long head"] == ["closed"]
    # the proxy's socket is the only one in its folder; used directly it applies the same list; junk leaves it serving
    assert len(found["egress folder"][0].split()) == 1
    assert found["own descriptor by address"][0].startswith("HTTP/1.1 403")
    assert found["no descriptor"] == ["closed"]
    assert found.get("other proxy", []) == ["FileNotFoundError"] * len(theirs)
    assert found["still serving"] == ["HTTP/1.1 200 Connection established"]
    # nothing but the proxy: no route, no DNS
    assert found["raw 127.0.0.1"] == ["ConnectionRefusedError"]
    assert found["raw ::1"][0] in ("ConnectionRefusedError", "OSError")
    assert found["raw 10.1.2.3"] == found["raw 8.8.8.8"] == found["udp"] == ["OSError"]
    assert found["dns"] == ["gaierror"]
    # what reached the listener: the allowed name only, always with its own Host
    assert sorted(server.paths()) == ["/host-header", "/one"]
    assert {host for _, host in server.requests} == {f"localhost:{server.port}"}
    answers = [a for label, a in found.items() if label != "long head" for a in a if a.startswith("HTTP/1.1 40")]
    assert sum(1 for e in events if e["event"] == "EgressRefused") == len(answers) + 1  # and the long head


@pytest.mark.timeout(200)
def test_a_wildcard_name_that_resolves_to_a_private_address_is_refused_and_an_exact_one_is_not(
    place: Path, user: str
) -> None:
    """DNS-rebinding style: names under an allowed pattern point at loopback (a private hosts file around the whole
    ``kairox`` process stands in for a hostile DNS zone)."""
    hosts = place / "hosts"
    hosts.write_text("127.0.0.1 localhost api.example.test exact.example.test\n")
    hosts.chmod(0o644)
    allowlist_home(place / "home", ["*.example.test", "exact.example.test"], user)
    wrap = (needed("bwrap"), "--dev-bind", "/", "/", "--bind", str(hosts), "/etc/hosts", "--")
    curl = needed("curl")
    with listener() as server:
        command = (
            f"{curl} -sS -m 20 http://api.example.test:{server.port}/wild | head -1; "
            f"{curl} -sS -m 20 -p http://api.example.test.:{server.port}/wild-tunnel; echo tunnel=$?; "
            f"{curl} -sS -m 20 http://exact.example.test:{server.port}/exact; echo probe-ran"
        )
        said, events = shell_exec(place, user, command, prefix=wrap)

    assert (
        "Kairox sandbox: api.example.test is allowed by *.example.test but resolves outside the public internet; "
        "only a name listed exactly may reach such an address." in said
    )
    assert "tunnel=56" in said
    assert f"seen /exact host=exact.example.test:{server.port}" in said
    assert server.paths() == ["/exact"]
    assert [e["host"] for e in events if e["event"] == "EgressRefused"] == ["api.example.test"] * 2


def test_the_egress_folder_is_this_users_alone_or_the_proxy_does_not_start(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    info = egress_folder().lstat()
    assert (info.st_uid, info.st_mode & 0o777) == (os.getuid(), 0o700)
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    (tmp_path / f"kairox-egress-{os.getuid()}").mkdir(mode=0o777)  # made by someone else, open to all
    os.chmod(tmp_path / f"kairox-egress-{os.getuid()}", 0o777)
    proxy = EgressProxy()
    with pytest.raises(SandboxUnavailableError, match="is not a folder of this user's alone"):
        proxy.route(("localhost",))
    proxy.close()
