"""Operations every front end shares on a running ExtensionContext: restart, stop, start or add one MCP server,
turn a server or one of its tools on or off, restart a language server, turn a language or debug server on or off.
Each change that should last is written to the configuration layer that declares the server (or the file the
caller names), through the same writer ``kairox config set`` uses."""

from pathlib import Path
from typing import TYPE_CHECKING, Any

from kairox.config import Layer, McpServerConfig, ResolvedConfig, join_key, set_value, write_own
from kairox.errors import KairoxError

if TYPE_CHECKING:
    from kairox.mcp import McpServerManager, McpToolAdapter
    from kairox.runtime._context import ExtensionContext

_WRITABLE = (Layer.USER, Layer.PROJECT, Layer.LOCAL)


def server_layer_file(resolved: ResolvedConfig, section: str, name: str) -> Path:
    """The file of the layer that declares server ``name`` of ``section`` (``mcp_servers``): a change of the
    server is written there, next to its command, so the file stays valid on its own."""
    prefix = join_key((section, name))
    for key, origin in sorted(resolved.provenance.items()):
        if (key == prefix or key.startswith(prefix + ".")) and origin.layer in _WRITABLE and origin.file is not None:
            return origin.file
    found = resolved.origin(prefix)
    where = found.where() if found is not None else "a .mcp.json file or a plugin"
    raise KairoxError(
        f"{section}.{name} is not declared in a configuration file Kairox writes (it comes from {where})",
        hint=f"add [{prefix}] to kairox.toml to override it, or change it where it is declared",
    )


def _manager(context: "ExtensionContext", name: str) -> "McpServerManager":
    if context.mcp is None or name not in context.mcp.clients:
        known = ", ".join(context.mcp.clients) if context.mcp is not None else ""
        raise KairoxError(f"no running MCP server named {name!r}", hint=f"servers: {known or '(none)'}")
    return context.mcp


async def _sync_registry(context: "ExtensionContext", adapter: "McpToolAdapter") -> None:
    """Register a provider the registry has not seen, or list its tools again (a stopped server has none)."""
    specs = tuple(await adapter.list_tools())
    try:
        context.registry.replace_origin(adapter.origin, specs)
    except KairoxError:  # a server that was disabled or pending when the session began: first registration
        await context.registry.add_provider(adapter)


async def restart_mcp_server(context: "ExtensionContext", name: str) -> None:
    """Stop the server and start it again; the others keep running. Returns once it is Ready or Failed."""
    adapter = await _manager(context, name).restart(name)
    await _sync_registry(context, adapter)


async def stop_mcp_server(context: "ExtensionContext", name: str) -> None:
    manager = _manager(context, name)
    await manager.stop_one(name)
    if name in manager.adapters:
        await _sync_registry(context, manager.adapters[name])


async def start_mcp_server(context: "ExtensionContext", name: str) -> None:
    adapter = await _manager(context, name).start_one(name)
    await _sync_registry(context, adapter)


async def add_mcp_server(
    context: "ExtensionContext", name: str, config: McpServerConfig, *, base_dir: Path | None = None
) -> None:
    """Start a server that was not configured when the context was built (a catalog install)."""
    if context.mcp is None:
        raise KairoxError("this session started without MCP servers", hint="start a new session to add one")
    adapter = await context.mcp.add_one(name, config, base_dir=base_dir)
    await _sync_registry(context, adapter)


def _persist(
    resolved: ResolvedConfig,
    name: str,
    field: str,
    value: Any,
    *,
    file: Path | None = None,
    section: str = "mcp_servers",
) -> Path:
    file = file or server_layer_file(resolved, section, name)
    key = join_key((section, name, field))
    write_own(resolved, file, key, lambda: set_value(file, key, value))
    return file


async def set_mcp_server_enabled(
    context: "ExtensionContext", name: str, enabled: bool, *, file: Path | None = None
) -> Path:
    """Turn a server on (started now) or off (stopped now), and write ``enabled`` to its layer's file (or ``file``)."""
    manager = _manager(context, name)
    file = _persist(context.resolved, name, "enabled", enabled, file=file)
    client = manager.clients[name]
    await manager.reconfigure(name, client.config.model_copy(update={"enabled": enabled}))
    if enabled:
        await start_mcp_server(context, name)
    else:
        await stop_mcp_server(context, name)
    return file


async def set_mcp_tool_enabled(
    context: "ExtensionContext", server: str, tool: str, enabled: bool, *, file: Path | None = None
) -> Path:
    """Offer or hide one tool of a server (its ``disabled_tools``), now and in its layer's file (or ``file``)."""
    manager = _manager(context, server)
    config = manager.clients[server].config
    disabled = [t for t in config.disabled_tools or [] if t != tool] + ([] if enabled else [tool])
    file = _persist(context.resolved, server, "disabled_tools", disabled, file=file)
    await manager.reconfigure(server, config.model_copy(update={"disabled_tools": disabled}))
    adapter = manager.adapters.get(server)
    if adapter is not None:
        await _sync_registry(context, adapter)
    return file


def _lsp_server(context: "ExtensionContext", name: str) -> Any:
    if name not in context.lsp.servers:
        known = ", ".join(context.lsp.servers) or "(none running: disabled or waiting for trust)"
        raise KairoxError(f"no language server named {name!r} in this session", hint=f"servers: {known}")
    return context.lsp.servers[name]


async def restart_lsp_server(context: "ExtensionContext", name: str) -> None:
    """Stop the language server and start it again now (it otherwise starts on its first use)."""
    await _lsp_server(context, name).restart()


async def set_lsp_server_enabled(
    context: "ExtensionContext", name: str, enabled: bool, *, file: Path | None = None
) -> Path:
    """Write ``enabled`` to the layer that declares the language server (or ``file``); turning it off stops it now,
    turning it on takes effect from the next session (language servers are routed when the context is built)."""
    if name not in context.resolved.config.lsp_servers:
        raise KairoxError(f"no language server named {name!r} is configured", hint="`kairox lsp status` lists them")
    written = _persist(context.resolved, name, "enabled", enabled, file=file, section="lsp_servers")
    if not enabled and name in context.lsp.servers:
        await context.lsp.servers[name].stop()
    return written


def set_dap_server_enabled(context: "ExtensionContext", name: str, enabled: bool, *, file: Path | None = None) -> Path:
    """Write ``enabled`` to the layer that declares the debug adapter (or ``file``); a debug adapter runs per debug
    session, so the next ``dap.launch`` sees it."""
    if name not in context.resolved.config.dap_servers:
        raise KairoxError(f"no debug adapter named {name!r} is configured", hint="see [dap_servers] in kairox.toml")
    return _persist(context.resolved, name, "enabled", enabled, file=file, section="dap_servers")
