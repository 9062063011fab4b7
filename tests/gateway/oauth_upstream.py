"""An MCP server behind OAuth that is its own authorization server, on 127.0.0.1:argv[1]. Every authorization is
granted at once (there is no person to ask) and gets tokens of its own: ``at-1``, ``at-2`` ... in order; the
token ``at-gateway`` is valid from the start (the gateway's own login, written into its home by the test). The
tool ``whoami`` answers with the access token the call came with."""

import os
import secrets
import sys
import threading
import time
from typing import Any

from mcp.server.auth.middleware.auth_context import get_access_token
from mcp.server.auth.provider import AccessToken, AuthorizationCode, AuthorizationParams, construct_redirect_uri
from mcp.server.auth.settings import AuthSettings, ClientRegistrationOptions
from mcp.server.mcpserver import MCPServer
from mcp.shared.auth import OAuthClientInformationFull, OAuthToken

PORT = int(sys.argv[1])
URL = f"http://127.0.0.1:{PORT}"


class Provider:
    def __init__(self) -> None:
        self.clients: dict[str, OAuthClientInformationFull] = {}
        self.codes: dict[str, AuthorizationCode] = {}
        self.tokens = {"at-gateway": AccessToken(token="at-gateway", client_id="gateway", scopes=[])}
        self.issued = 0

    async def get_client(self, client_id: str) -> OAuthClientInformationFull | None:
        return self.clients.get(client_id)

    async def register_client(self, client_info: OAuthClientInformationFull) -> None:
        assert client_info.client_id is not None
        self.clients[client_info.client_id] = client_info

    async def authorize(self, client: OAuthClientInformationFull, params: AuthorizationParams) -> str:
        code = AuthorizationCode(
            code=secrets.token_hex(8),
            scopes=params.scopes or [],
            expires_at=time.time() + 300,
            client_id=client.client_id or "",
            code_challenge=params.code_challenge,
            redirect_uri=params.redirect_uri,
            redirect_uri_provided_explicitly=params.redirect_uri_provided_explicitly,
            resource=params.resource,
        )
        self.codes[code.code] = code
        return construct_redirect_uri(str(params.redirect_uri), code=code.code, state=params.state)

    async def load_authorization_code(self, client: Any, code: str) -> AuthorizationCode | None:
        return self.codes.get(code)

    async def exchange_authorization_code(self, client: Any, code: AuthorizationCode) -> OAuthToken:
        del self.codes[code.code]
        self.issued += 1
        token = f"at-{self.issued}"
        self.tokens[token] = AccessToken(token=token, client_id=code.client_id, scopes=code.scopes)
        return OAuthToken(access_token=token, token_type="Bearer", expires_in=3600, refresh_token=f"rt-{self.issued}")

    async def load_refresh_token(self, client: Any, refresh_token: str) -> None:
        return None

    async def exchange_refresh_token(self, client: Any, refresh_token: Any, scopes: list[str]) -> OAuthToken:
        raise NotImplementedError

    async def load_access_token(self, token: str) -> AccessToken | None:
        return self.tokens.get(token)

    async def revoke_token(self, token: Any) -> None:
        return None


app = MCPServer(
    "upstream",
    auth_server_provider=Provider(),
    auth=AuthSettings(
        issuer_url=URL,
        resource_server_url=None,
        client_registration_options=ClientRegistrationOptions(enabled=True),
    ),
)


@app.tool()
def whoami() -> str:
    """The access token this call came with."""
    token = get_access_token()
    return token.token if token is not None else "nobody"


def orphaned(parent: int) -> None:  # stop by itself when the test that started it is gone
    while os.getppid() == parent:
        time.sleep(1)
    os._exit(0)


threading.Thread(target=orphaned, args=(os.getppid(),), daemon=True).start()
app.run("streamable-http", host="127.0.0.1", port=PORT)
