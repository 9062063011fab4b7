"""One configured server's transport, for a front end that speaks MCP to it itself (``kairox proxy``): a stdio server
started as the manager starts one (confined under its profile, in its own process group, stderr to its log), or a
remote server's HTTP transport with its headers, bearer token and OAuth tokens."""

import os
from contextlib import AsyncExitStack
from pathlib import Path
from typing import TYPE_CHECKING

from kairox.errors import McpStartupError
from kairox.mcp._files import server_file_stem
from kairox.mcp._native import StdioChannel
from kairox.mcp._sources import ConfiguredServer, server_confiner
from kairox.mcp._stdio import ChildStdioTransport
from kairox.mcp._transports import StartError, open_remote, open_stdio

if TYPE_CHECKING:
    from mcp.client import Transport

    from kairox.tools import SandboxSettings


async def open_server_transport(
    stack: AsyncExitStack, server: ConfiguredServer, *, workspace: Path, home: Path, sandbox: "SandboxSettings"
) -> "Transport":
    """The SDK transport of ``server``; ``stack`` stops the process (stdio) or closes the HTTP client."""
    config = server.config
    try:
        if config.transport == "stdio":
            confine = server_confiner({server.name: server}, sandbox=sandbox, workspace=workspace, home=home)
            child, _ = await open_stdio(
                stack,
                config,
                environ=os.environ,
                workspace=workspace,
                base_dir=server.base_dir,
                log_path=home / "logs" / "mcp" / f"{server_file_stem(server.name)}.log",
                confinement=confine(server.name, config),
            )
            return ChildStdioTransport(StdioChannel(child))
        from kairox.mcp._oauth import oauth_provider, token_path

        auth = None
        if config.url is not None and (config.oauth or token_path(home, server.name).exists()):
            auth = oauth_provider(server.name, config.url, home=home)
        return await open_remote(stack, config, environ=os.environ, auth=auth)
    except StartError as exc:
        raise McpStartupError(server.name, str(exc)) from exc
