"""An editor for ``kairox acp``, on the ACP Python SDK's client side: it records every update, answers permission
requests as the test says, and serves reads and writes from buffers of its own (as an editor's unsaved ones)."""

import asyncio
import contextlib
import os
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from acp import schema, spawn_agent_process
from tests.agent._support import make_workspace
from tests.agent.conftest import MODEL_KEY

BIN = Path(sys.executable).parent


class Editor:
    """The client side: ``answers`` are option kinds (or "cancel") taken in order for the permission requests."""

    def __init__(self, *, buffers: dict[str, str] | None = None, answers: list[str] | None = None) -> None:
        self.buffers = dict(buffers or {})
        self.written: dict[str, str] = {}
        self.answers = list(answers or [])
        self.asked: list[schema.RequestPermissionRequest] = []
        self.updates: list[Any] = []
        self.on_update: Any = None
        self.terminals: dict[str, asyncio.subprocess.Process] = {}
        self.outputs: dict[str, str] = {}
        self.released: list[str] = []
        self.initialized: Any = None

    async def request_permission(
        self, options: list[schema.PermissionOption], session_id: str, tool_call: schema.ToolCallUpdate, **_: Any
    ) -> schema.RequestPermissionResponse:
        self.asked.append(schema.RequestPermissionRequest(session_id=session_id, tool_call=tool_call, options=options))
        answer = self.answers.pop(0) if self.answers else "cancel"
        chosen = next((o for o in options if o.kind == answer), None)
        if chosen is None:
            return schema.RequestPermissionResponse(outcome=schema.DeniedOutcome(outcome="cancelled"))
        return schema.RequestPermissionResponse(
            outcome=schema.AllowedOutcome(outcome="selected", option_id=chosen.option_id)
        )

    async def session_update(self, session_id: str, update: Any, **_: Any) -> None:
        self.updates.append(update)
        if self.on_update is not None:
            await self.on_update(update)

    async def read_text_file(self, path: str, session_id: str, **_: Any) -> schema.ReadTextFileResponse:
        if path in self.buffers:
            return schema.ReadTextFileResponse(content=self.buffers[path])
        return schema.ReadTextFileResponse(content=Path(path).read_text(encoding="utf-8"))

    async def write_text_file(self, content: str, path: str, session_id: str, **_: Any) -> None:
        self.written[path] = self.buffers[path] = content

    async def create_terminal(
        self, command: str, session_id: str, args: list[str] | None = None, cwd: str | None = None, **_: Any
    ) -> schema.CreateTerminalResponse:
        """A real terminal: the command runs here, its output kept (stdout and stderr together)."""
        process = await asyncio.create_subprocess_exec(
            command, *(args or []), cwd=cwd, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT
        )
        self.terminals[str(process.pid)] = process
        return schema.CreateTerminalResponse(terminal_id=str(process.pid))

    async def wait_for_terminal_exit(self, session_id: str, terminal_id: str, **_: Any) -> Any:
        process = self.terminals[terminal_id]
        self.outputs[terminal_id] = (await process.stdout.read()).decode() if process.stdout else ""
        return schema.WaitForTerminalExitResponse(exit_code=await process.wait())

    async def terminal_output(self, session_id: str, terminal_id: str, **_: Any) -> Any:
        return schema.TerminalOutputResponse(output=self.outputs.get(terminal_id, ""), truncated=False)

    async def kill_terminal(self, session_id: str, terminal_id: str, **_: Any) -> None:
        with contextlib.suppress(ProcessLookupError):
            self.terminals[terminal_id].kill()

    async def release_terminal(self, session_id: str, terminal_id: str, **_: Any) -> None:
        await self.kill_terminal(session_id, terminal_id)
        self.released.append(terminal_id)

    def on_connect(self, conn: Any) -> None:
        pass

    def of(self, kind: str) -> list[Any]:
        return [u for u in self.updates if u.session_update == kind]

    def text(self, kind: str = "agent_message_chunk") -> str:
        return "".join(u.content.text for u in self.of(kind))

    async def commands(self) -> list[str]:
        """The slash commands announced (they follow ``session/new``'s answer)."""
        with anyio.fail_after(20):
            while not self.of("available_commands_update"):
                await anyio.sleep(0.05)
        return [c.name for c in self.of("available_commands_update")[-1].available_commands]


CAPABILITIES = schema.ClientCapabilities(fs=schema.FileSystemCapabilities(read_text_file=True, write_text_file=True))


@contextlib.asynccontextmanager
async def running(
    editor: Editor, cwd: Path, *, capabilities: schema.ClientCapabilities = CAPABILITIES, key: str = MODEL_KEY
) -> AsyncIterator[tuple[Any, Any]]:
    """``kairox acp`` started as an editor starts it, initialized (the answer in ``editor.initialized``); yields the
    connection and the process."""
    env = {**os.environ, "KAIROX_TEST_MODEL_KEY": key, "PATH": f"{BIN}{os.pathsep}{os.environ['PATH']}"}
    async with spawn_agent_process(editor, sys.executable, "-m", "kairox", "acp", env=env, cwd=cwd) as (conn, proc):
        editor.initialized = await conn.initialize(protocol_version=1, client_capabilities=capabilities)
        yield conn, proc


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    return make_workspace(tmp_path / "repo")
