"""A person per token: a users file (reread on change) and OIDC tokens checked against the issuer's JWKS, served
on 127.0.0.1 with keys made here."""

import hashlib
import json
import os
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import jwt
import pytest
from cryptography.hazmat.primitives.asymmetric import rsa

from kairox.gateway import OidcOptions, Users
from kairox.gateway._users import UsersFileError

pytestmark = pytest.mark.anyio


async def test_a_users_file_names_the_person_and_is_reread_when_it_changes(tmp_path: Path) -> None:
    users_file = tmp_path / "users.json"
    users_file.write_text(json.dumps({"alice": "a-token", "bob": "sha256:" + hashlib.sha256(b"b-token").hexdigest()}))
    users = Users(users_file=users_file)
    assert [await users.user_of(t) for t in ("a-token", "b-token", "c-token")] == [("alice", ()), ("bob", ()), None]
    users_file.write_text(json.dumps({"carol": {"token": "c-token", "groups": ["ops"]}}))
    os.utime(users_file, ns=(time.time_ns(), time.time_ns() + 10**9))
    assert [await users.user_of(t) for t in ("a-token", "c-token")] == [None, ("carol", ("ops",))]
    users_file.write_text("{not json")  # a bad edit: the users read before stay, and the server says so
    os.utime(users_file, ns=(time.time_ns(), time.time_ns() + 2 * 10**9))
    assert await users.user_of("c-token") == ("carol", ("ops",))


async def test_a_revoked_token_replaced_within_one_clock_tick_is_refused(tmp_path: Path) -> None:
    # the same length, the modification time set back to what it was: only the change time shows the edit
    users_file = tmp_path / "users.json"
    users_file.write_text(json.dumps({"alice": "token-1"}))
    os.utime(users_file, ns=(10**9, 10**9))
    users = Users(users_file=users_file)
    assert await users.user_of("token-1") == ("alice", ())
    users_file.write_text(json.dumps({"alice": "token-2"}))
    os.utime(users_file, ns=(10**9, 10**9))
    assert [await users.user_of(t) for t in ("token-1", "token-2")] == [None, ("alice", ())]


def test_a_broken_users_file_stops_the_start_naming_the_file_and_key(tmp_path: Path) -> None:
    users_file = tmp_path / "users.toml"
    users_file.write_text('alice = "t"\nbob = 3\n')
    with pytest.raises(UsersFileError, match=r"users.toml: key 'bob': expected a token or sha256:HEX"):
        Users(users_file=users_file)
    users_file.write_text('alice = "t"\nbob = "t"\n')
    with pytest.raises(UsersFileError, match="'bob' and 'alice' have the same token"):
        Users(users_file=users_file)


class Issuer:
    """An OpenID Connect issuer on 127.0.0.1: discovery and JWKS, with keys that can rotate."""

    def __init__(self) -> None:
        self.keys: dict[str, Any] = {}
        issuer = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                if self.path == "/.well-known/openid-configuration":
                    body = {"issuer": issuer.url, "jwks_uri": f"{issuer.url}/jwks"}
                else:
                    body = {"keys": [issuer.public(kid) for kid in issuer.keys]}
                data = json.dumps(body).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def rotate(self, kid: str) -> None:
        self.keys = {kid: rsa.generate_private_key(public_exponent=65537, key_size=2048)}

    def public(self, kid: str) -> dict[str, Any]:
        jwk: dict[str, Any] = json.loads(jwt.algorithms.RSAAlgorithm.to_jwk(self.keys[kid].public_key()))
        return {**jwk, "kid": kid, "use": "sig", "alg": "RS256"}

    def token(self, kid: str, **claims: Any) -> str:
        body = {"iss": self.url, "aud": "kairox", "sub": "alice", "exp": int(time.time()) + 300, **claims}
        return jwt.encode(body, self.keys[kid], algorithm="RS256", headers={"kid": kid})


@pytest.fixture
def issuer() -> Iterator[Issuer]:
    served = Issuer()
    served.rotate("k1")
    yield served
    served.server.shutdown()


async def test_oidc_tokens_of_the_issuer_for_this_audience_name_their_subject(issuer: Issuer) -> None:
    users = Users(oidc=OidcOptions(issuer=issuer.url, audience="kairox"))
    assert await users.user_of(issuer.token("k1", groups=["dev", 3])) == ("alice", ("dev",))
    assert await users.user_of(issuer.token("k1", aud="another-service")) is None
    assert await users.user_of(issuer.token("k1", exp=int(time.time()) - 60)) is None
    assert await users.user_of(issuer.token("k1", iss="https://elsewhere.example")) is None
    real = issuer.keys
    issuer.rotate("k1")  # a key of someone else's under the issuer's key id
    forged = issuer.token("k1")
    issuer.keys = real
    assert await users.user_of(forged) is None


async def test_a_rotated_issuer_key_is_fetched_without_a_restart(issuer: Issuer) -> None:
    users = Users(oidc=OidcOptions(issuer=issuer.url, audience="kairox", claim="email", refetch_after_sec=0))
    assert await users.user_of(issuer.token("k1", email="ann@example.org")) == ("ann@example.org", ())
    issuer.rotate("k2")
    assert await users.user_of(issuer.token("k2", email="ben@example.org")) == ("ben@example.org", ())
