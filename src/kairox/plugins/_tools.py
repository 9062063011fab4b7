"""Plugin command tools: the command gets the arguments as JSON on stdin and prints the result.

Each call runs in the policy's sandbox (narrowed by the plugin's manifest), with an allow-listed environment,
a timeout and a cap on what it may print.
"""

import asyncio
import contextlib
import hashlib
import json
import os
import shlex
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path

from kairox._rpc._process import ChildProcess, child_environment
from kairox._util._decode import decode_json
from kairox._util._json import JsonObject
from kairox._util._names import normalize_tool_name
from kairox.errors import SandboxUnavailableError, ToolCallError, ToolNotFoundError
from kairox.plugins._manifest import PluginPermissions
from kairox.plugins._model import PluginTool
from kairox.plugins._permissions import narrower_sandbox
from kairox.sandbox import SETUP_ATTEMPTS, SandboxSettings, check_sandbox, sandboxed_argv, vanished_before_start
from kairox.tools import Access, CallContext, PermissionProfile, ToolProvider, ToolResult, ToolSource, ToolSpec

OUTPUT_CAP_BYTES = 1_000_000
DEFAULT_TOOL_TIMEOUT_SEC = 120.0
_MAX_NAME = 64


async def read_capped(stream: asyncio.StreamReader, cap: int) -> bytes:
    """Everything up to EOF, but at most ``cap + 1`` bytes (one more says "there was more")."""
    chunks: list[bytes] = []
    size = 0
    while size <= cap:
        chunk = await stream.read(65_536)
        if not chunk:
            break
        chunks.append(chunk)
        size += len(chunk)
    return b"".join(chunks)[: cap + 1]


def plugin_tool_name(plugin: str, tool: str) -> str:
    """``<plugin>__<tool>``, normalised to ``[A-Za-z0-9_-]``, at most 64 characters (stable hash when cut)."""
    full = f"{normalize_tool_name(plugin)}__{normalize_tool_name(tool)}"
    if len(full) <= _MAX_NAME:
        return full
    digest = hashlib.sha256(f"{plugin}\0{tool}".encode()).hexdigest()[:8]
    return f"{full[: _MAX_NAME - 9]}_{digest}"


def narrowed_sandbox(sandbox: SandboxSettings, permissions: PluginPermissions) -> SandboxSettings:
    """The call's sandbox, narrowed by the manifest (never widened)."""
    return replace(
        sandbox,
        mode=narrower_sandbox(sandbox.mode, permissions.sandbox_policy),
        network_access=sandbox.network_access and permissions.network_access is not False,
        allowed_domains=None if permissions.network_access is False else sandbox.allowed_domains,
    )


class PluginToolProvider(ToolProvider):
    """The command tools of one plugin."""

    def __init__(
        self,
        plugin: str,
        tools: Iterable[PluginTool],
        *,
        permissions: PluginPermissions | None = None,
        host_env: Mapping[str, str] | None = None,
        output_cap: int = OUTPUT_CAP_BYTES,
    ) -> None:
        super().__init__()
        self.origin = f"plugin:{plugin}"
        self.plugin = plugin
        self.permissions = permissions or PluginPermissions()
        self._host_env = dict(host_env if host_env is not None else os.environ)
        self._output_cap = output_cap
        self._tools = {plugin_tool_name(plugin, t.declaration.name): t for t in tools}

    async def list_tools(self) -> Sequence[ToolSpec]:
        specs = []
        for name, tool in self._tools.items():
            declaration = tool.declaration
            specs.append(
                ToolSpec(
                    name=name,
                    description=declaration.description or f"{declaration.name} from plugin {self.plugin}",
                    input_schema=declaration.input_schema,
                    source=ToolSource.PLUGIN,
                    # a command can do anything its sandbox lets it: the policy holds it to execute access
                    permission=PermissionProfile(access=Access.EXECUTE, path_args=tuple(declaration.path_args)),
                    origin=self.plugin,
                    timeout_sec=declaration.timeout_sec,
                    meta={"plugin": self.plugin, "tool": declaration.name},
                )
            )
        return specs

    def _argv(self, tool: PluginTool) -> list[str]:
        declaration = tool.declaration
        command = declaration.command
        if Path(command).is_file():
            return [command, *declaration.args]
        return [*shlex.split(command), *declaration.args]

    async def _run_once(
        self,
        name: str,
        tool: PluginTool,
        argv: list[str],
        *,
        env: dict[str, str],
        cwd: Path,
        payload: bytes,
        timeout: float,
    ) -> tuple[bytes, int | None, str]:
        """Run the command once: what it printed, its exit code and its stderr."""
        try:
            async with ChildProcess(argv, env=env, cwd=cwd) as child:

                async def exchange() -> tuple[bytes, int | None]:
                    with contextlib.suppress(ConnectionError):
                        child.stdin.write(payload)
                        await child.stdin.drain()
                        child.stdin.close()
                    output = await read_capped(child.stdout, self._output_cap)
                    return output, await child.wait()

                try:
                    # one deadline for the whole call: a command may close its stdout and still linger
                    output, code = await asyncio.wait_for(exchange(), timeout)
                except TimeoutError:
                    raise ToolCallError(tool=name, reason=f"the command did not finish within {timeout:g} s") from None
                return output, code, child.stderr.text(2_000)
        except OSError as exc:
            raise ToolCallError(tool=name, reason=f"cannot run {tool.declaration.command!r}: {exc}") from exc

    async def call_tool(self, name: str, arguments: JsonObject, context: CallContext) -> ToolResult:
        tool = self._tools.get(name)
        if tool is None:
            raise ToolNotFoundError(name)
        sandbox = narrowed_sandbox(context.sandbox, self.permissions)
        root = str(tool.root)
        extra = {"KAIROX_PLUGIN_ROOT": root, "CLAUDE_PLUGIN_ROOT": root, "PLUGIN_ROOT": root, **tool.declaration.env}
        env = child_environment(self._host_env, extra=extra)
        timeout = tool.declaration.timeout_sec or DEFAULT_TOOL_TIMEOUT_SEC
        payload = json.dumps(arguments).encode()
        for attempt in range(1, SETUP_ATTEMPTS + 1):
            try:
                bwrap = check_sandbox(sandbox)
                argv = await asyncio.to_thread(
                    sandboxed_argv, self._argv(tool), sandbox, context.workspace, cwd=context.workspace, bwrap=bwrap
                )
            except SandboxUnavailableError as exc:
                raise ToolCallError(tool=name, reason=exc.message, hint=exc.hint) from exc
            output, code, stderr = await self._run_once(
                name, tool, argv, env=env, cwd=context.workspace, payload=payload, timeout=timeout
            )
            if attempt == SETUP_ATTEMPTS or not vanished_before_start(argv, code, output, stderr.encode()):
                break
        text = output[: self._output_cap].decode("utf-8", errors="replace")
        if len(output) > self._output_cap:
            text += f"\n[output cut at {self._output_cap} bytes]"
        if code != 0:
            detail = (stderr or text).strip()
            return ToolResult.error(f"{name} exited with code {code}" + (f": {detail}" if detail else ""))
        structured = None
        with contextlib.suppress(ValueError):
            decoded = decode_json(text)
            structured = decoded if isinstance(decoded, dict) else None
        return ToolResult.text(text, structured=structured)


def plugin_tool_providers(
    tools: Iterable[PluginTool], permissions: Mapping[str, PluginPermissions] | None = None
) -> list[PluginToolProvider]:
    """One provider per plugin for the routed command tools (``PluginRouting.tools``)."""
    by_plugin: dict[str, list[PluginTool]] = {}
    for tool in tools:
        by_plugin.setdefault(tool.plugin, []).append(tool)
    return [
        PluginToolProvider(name, items, permissions=(permissions or {}).get(name)) for name, items in by_plugin.items()
    ]
