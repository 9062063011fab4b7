"""OAuth for remote MCP servers, on the SDK's OAuth client provider.

Tokens and the dynamic client registration of each server live in ``$KAIROX_HOME/mcp-oauth/<server>.json``
(folder 0700, file 0600). A server start never opens a browser: without usable tokens it fails with a hint to
run ``kairox mcp login NAME``, which runs the authorization-code flow with PKCE through a one-shot callback
listener on 127.0.0.1.
"""

import asyncio
import contextlib
import json
import os
import webbrowser
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import anyio
from mcp.client.auth import OAuthClientProvider
from mcp.shared.auth import (
    AuthorizationCodeResult,
    OAuthClientInformationFull,
    OAuthClientMetadata,
    OAuthToken,
)
from pydantic import AnyUrl, ValidationError

from kairox.mcp._features import CallbackParams, OAuthLogin
from kairox.mcp._files import server_file_stem


class NeedsLoginError(Exception):
    def __init__(self, server: str) -> None:
        super().__init__(f"MCP server {server!r} needs an OAuth login; run `kairox mcp login {server}`")


def token_path(home: Path, server: str) -> Path:
    return home / "mcp-oauth" / f"{server_file_stem(server)}.json"


class FileTokenStorage:
    """The SDK's ``TokenStorage`` in one private JSON file per server."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def _read(self) -> dict[str, object]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        return data if isinstance(data, dict) else {}

    def _write(self, key: str, value: object) -> None:
        data = self._read()
        data[key] = value
        self.path.parent.mkdir(parents=True, exist_ok=True)
        os.chmod(self.path.parent, 0o700)
        descriptor = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
            json.dump(data, handle, indent=2)
        os.chmod(self.path, 0o600)

    async def get_tokens(self) -> OAuthToken | None:
        raw = self._read().get("tokens")
        with contextlib.suppress(ValidationError):
            return OAuthToken.model_validate(raw) if raw else None
        return None

    async def set_tokens(self, tokens: OAuthToken) -> None:
        self._write("tokens", tokens.model_dump(mode="json", exclude_none=True))

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        raw = self._read().get("client_info")
        with contextlib.suppress(ValidationError):
            return OAuthClientInformationFull.model_validate(raw) if raw else None
        return None

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        self._write("client_info", client_info.model_dump(mode="json", exclude_none=True))


def oauth_provider(
    server: str,
    url: str,
    *,
    home: Path,
    login: OAuthLogin | None = None,
    client_metadata_url: str | None = None,
    storage: Any = None,
) -> OAuthClientProvider:
    """An httpx auth for ``url`` whose tokens persist under ``home`` (or in ``storage``); ``login`` is needed only
    to authorize anew. With ``client_metadata_url``, that document is the client ID where the authorization server
    supports it."""
    redirect_uri = login.redirect_uri if login is not None else "http://127.0.0.1/callback"
    metadata = OAuthClientMetadata(
        client_name="Kairox",
        redirect_uris=[AnyUrl(redirect_uri)],
        grant_types=["authorization_code", "refresh_token"],
        response_types=["code"],
    )
    pending: dict[str, CallbackParams] = {}

    async def redirect(authorization_url: str) -> None:
        if login is None:
            raise NeedsLoginError(server)
        pending["params"] = await login.authorize(authorization_url)

    async def callback() -> AuthorizationCodeResult:
        params = pending.pop("params", {})
        if "code" not in params:
            raise NeedsLoginError(server)
        return AuthorizationCodeResult(code=params["code"], state=params.get("state"), iss=params.get("iss"))

    return OAuthClientProvider(
        server_url=url,
        client_metadata=metadata,
        storage=storage or FileTokenStorage(token_path(home, server)),
        redirect_handler=redirect,
        callback_handler=callback,
        client_metadata_url=client_metadata_url,
    )


def client_credentials_provider(
    server: str, url: str, *, home: Path, client_id: str, secret: str | None, private_key: str | None
) -> OAuthClientProvider:
    """The client-credentials grant (machine to machine, no login): with the client's secret, or with a JWT
    assertion signed by its private key (``private_key_jwt``, the algorithm read from the key)."""
    from mcp.client.auth.extensions.client_credentials import (
        ClientCredentialsOAuthProvider,
        PrivateKeyJWTOAuthProvider,
        SignedJWTParameters,
    )

    storage = FileTokenStorage(token_path(home, server))
    if private_key is None:
        return ClientCredentialsOAuthProvider(url, storage, client_id, secret or "")
    from cryptography.hazmat.primitives.asymmetric import ec, rsa
    from cryptography.hazmat.primitives.serialization import load_pem_private_key

    key = load_pem_private_key(private_key.encode(), password=None)
    if isinstance(key, ec.EllipticCurvePrivateKey):
        algorithm = {256: "ES256", 384: "ES384"}.get(key.curve.key_size, "ES512")
    else:
        algorithm = "RS256" if isinstance(key, rsa.RSAPrivateKey) else "EdDSA"
    signed = SignedJWTParameters(
        issuer=client_id, subject=client_id, signing_key=private_key, signing_algorithm=algorithm
    )
    return PrivateKeyJWTOAuthProvider(url, storage, client_id, signed.create_assertion_provider())


def logout(home: Path, server: str) -> bool:
    """Forget the tokens and client registration of ``server``; False when there were none."""
    path = token_path(home, server)
    if not path.exists():
        return False
    path.unlink()
    return True


@contextlib.asynccontextmanager
async def browser_login(*, open_browser: bool = True, timeout: float = 300.0):  # type: ignore[no-untyped-def]
    """``async with browser_login() as login:`` a one-shot callback listener on 127.0.0.1 and a browser."""
    received: asyncio.Future[CallbackParams] = asyncio.get_running_loop().create_future()

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        request_line = (await reader.readline()).decode("latin-1")
        while (await reader.readline()).strip():
            pass
        target = request_line.split(" ")[1] if " " in request_line else "/"
        params = {key: values[0] for key, values in parse_qs(urlsplit(target).query).items()}
        body = b"Kairox: authorization received; you can close this tab." if "code" in params else b"Kairox: no code."
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: %d\r\n\r\n%s" % (len(body), body))
        await writer.drain()
        writer.close()
        if "code" in params and not received.done():
            received.set_result(params)

    listener = await asyncio.start_server(handle, "127.0.0.1", 0)
    port = listener.sockets[0].getsockname()[1]

    async def authorize(authorization_url: str) -> CallbackParams:
        import sys

        sys.stderr.write(f"Open this page to authorize Kairox:\n  {authorization_url}\n")
        if open_browser:
            with contextlib.suppress(Exception):
                webbrowser.open(authorization_url)
        with anyio.fail_after(timeout):
            return await received

    try:
        yield OAuthLogin(redirect_uri=f"http://127.0.0.1:{port}/callback", authorize=authorize)
    finally:
        listener.close()
        await listener.wait_closed()
