"""A person per token: who a request's bearer token belongs to.

``--users-file``: a JSON or TOML map of user -> token (or ``sha256:`` and the token's hex digest), reread when
the file changes. ``--oidc-issuer``/``--oidc-audience``: a JWT signed by a key of the issuer's JWKS (fetched,
cached, and fetched again when a token names a key it does not know, so rotation needs no restart), for this
audience; the user is its ``sub`` (or another claim). A token of nobody is refused with 401 before anything runs.
"""

import hashlib
import json
import sys
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import httpx

from kairox._util._filestate import file_state
from kairox.errors import KairoxError

USER_KEY, GROUPS_KEY = "kairox.user", "kairox.groups"
"""Where the authenticated user's name (and groups) go in the ASGI scope, for the audit, spans, sessions, rules."""


class UsersFileError(KairoxError):
    """The users file cannot be read or holds something other than user -> token."""


def _digest(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def read_users(path: Path, groups: dict[str, tuple[str, ...]] | None = None) -> dict[str, str]:
    """Token digest -> user, from a JSON or TOML file of ``user = "token"`` or ``user = "sha256:HEX"`` (or a table
    ``{token = ..., groups = [...]}``, whose groups go into ``groups``)."""
    try:
        text = path.read_text(encoding="utf-8")
        data: Any = json.loads(text) if path.suffix == ".json" else tomllib.loads(text)
    except (OSError, ValueError) as exc:  # tomllib's and json's errors name the line
        raise UsersFileError(
            f"--users-file {path}: cannot read it: {exc}", hint="a JSON or TOML map of user -> token"
        ) from exc
    if not isinstance(data, dict):
        raise UsersFileError(f"--users-file {path}: expected a map of user -> token", hint='alice = "TOKEN"')
    digests: dict[str, str] = {}
    for user, entry in data.items():
        token = entry.get("token") if isinstance(entry, dict) else entry
        if groups is not None and isinstance(entry, dict):
            groups[user] = tuple(str(g) for g in entry.get("groups", ()))
        if not isinstance(token, str) or not token or token == "sha256:":
            raise UsersFileError(
                f"--users-file {path}: key {user!r}: expected a token or sha256:HEX",
                hint=f'{user} = "sha256:<hex digest of the token>"',
            )
        digest = token.removeprefix("sha256:").lower() if token.startswith("sha256:") else _digest(token)
        if digest in digests:
            raise UsersFileError(f"--users-file {path}: {user!r} and {digests[digest]!r} have the same token")
        digests[digest] = user
    return digests


@dataclass(frozen=True, kw_only=True, slots=True)
class OidcOptions:
    issuer: str
    audience: str
    claim: str = "sub"
    algorithms: tuple[str, ...] = ("RS256", "RS384", "RS512", "ES256", "ES384", "PS256")
    refetch_after_sec: float = 30.0
    """A token naming a key the JWKS lacks fetches the JWKS again at most this often (rotation, not a flood)."""


class Users:
    """Tokens -> users. ``refused`` counts the requests turned away."""

    def __init__(self, *, users_file: Path | None = None, oidc: OidcOptions | None = None) -> None:
        self.users_file = users_file
        self.oidc = oidc
        self.refused = 0
        self._read: tuple[tuple[int, ...] | None, bool] | None = None
        """The users file's status when it was last read (None when missing) and whether that status had settled."""
        self._digests: dict[str, str] = {}
        self.groups: dict[str, tuple[str, ...]] = {}
        """User -> groups, from the users file (an OIDC token's ``groups`` claim says its own)."""
        self._jwks: Any = None
        if users_file is not None:
            self._reload()

    def _reload(self) -> None:
        assert self.users_file is not None
        # read again unless the file's settled status shows it unchanged (kairox._util._filestate): a revoked
        # token's line replaced by one of the same length within a clock tick is still seen
        try:
            state = file_state(str(self.users_file))
            read: tuple[tuple[int, ...] | None, bool] = (state.key, state.settled)
        except OSError:
            read = (None, True)
        if self._read is not None and self._read[1] and self._read[0] == read[0]:
            return
        if self._read is None:
            self._digests = read_users(self.users_file, self.groups)  # at start a broken file stops the server
        else:
            try:
                groups: dict[str, tuple[str, ...]] = {}
                self._digests, self.groups = read_users(self.users_file, groups), groups
            except UsersFileError as exc:  # a bad edit keeps the users it had, and says so
                sys.stderr.write(f"kairox serve: {exc}; keeping the users read before\n")
        self._read = read

    async def user_of(self, token: str) -> tuple[str, tuple[str, ...]] | None:
        if self.users_file is not None:
            self._reload()
            user = self._digests.get(_digest(token))
            if user is not None:
                return user, self.groups.get(user, ())
        if self.oidc is not None and token.count(".") == 2:
            return await anyio.to_thread.run_sync(self._verify, token)
        return None

    def _verify(self, token: str) -> tuple[str, tuple[str, ...]] | None:
        import jwt

        assert self.oidc is not None
        try:
            if self._jwks is None:
                found = httpx.get(f"{self.oidc.issuer.rstrip('/')}/.well-known/openid-configuration", timeout=10)
                found.raise_for_status()
                self._jwks = jwt.PyJWKClient(
                    found.json()["jwks_uri"], lifespan=300, timeout=10, cooldown_duration=self.oidc.refetch_after_sec
                )
            key = self._jwks.get_signing_key_from_jwt(token)
            claims = jwt.decode(
                token,
                key.key,
                algorithms=list(self.oidc.algorithms),
                audience=self.oidc.audience,
                issuer=self.oidc.issuer,
            )
        except (jwt.PyJWTError, httpx.HTTPError, KeyError, ValueError):
            return None
        user, groups = claims.get(self.oidc.claim), claims.get("groups")
        groups = tuple(g for g in groups if isinstance(g, str)) if isinstance(groups, list) else ()
        return (user, groups) if isinstance(user, str) and user else None
