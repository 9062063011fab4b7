"""What the editor does for a session: it answers the gate's asks (``session/request_permission``), and, where it
offers them, reads and writes files (its buffers, saved or not) and runs commands in its terminal. The gate has
decided every call before any of this runs; the command line is the confined one Kairox would run itself."""

from pathlib import Path
from typing import TYPE_CHECKING

import anyio
from acp import helpers, schema

from kairox.acp._updates import EditorUpdates, tool_call
from kairox.policy import ApprovalAnswer, ApprovalRequest
from kairox.runtime import ApprovalScope, approval_choices
from kairox.tools import HostCommand, ToolHost

if TYPE_CHECKING:
    from acp.interfaces import Client

_OPTION_KINDS: dict[ApprovalScope, schema.PermissionOptionKind] = {
    ApprovalScope.ONCE: "allow_once",
    ApprovalScope.SESSION: "allow_always",
    ApprovalScope.ALWAYS: "allow_always",
    ApprovalScope.DENY: "reject_once",
}
REFUSE = "reject-always"
EDITOR_TIMEOUT_SEC = 60.0
"""How long a file read or write waits for the editor."""


class EditorApprover:
    """Each ask becomes a permission request with Kairox's choices (allow once, for the session, always; reject once)
    and "reject always", which refuses that tool without asking for the rest of the session. The editor's answer is
    the person's; no answer (cancelled, or the editor gone) is a denial."""

    def __init__(self, conn: "Client", updates: EditorUpdates) -> None:
        self.conn, self.updates = conn, updates
        self.refused: set[str] = set()

    async def request_approval(self, request: ApprovalRequest) -> ApprovalAnswer:
        if request.tool in self.refused:
            return ApprovalAnswer.deny(f"{request.tool} was refused in the editor for the rest of this session")
        choices = [c for c in approval_choices(request) if not c.with_message]
        options = [
            schema.PermissionOption(option_id=str(i), name=c.label, kind=_OPTION_KINDS[c.scope])
            for i, c in enumerate(choices)
        ]
        options.append(
            schema.PermissionOption(
                option_id=REFUSE, name=f"reject always: refuse {request.tool} in this session", kind="reject_always"
            )
        )
        call_id = request.call_id or f"ask-{request.tool}"
        shown = tool_call(call_id, request.tool, dict(request.arguments), self.updates.workspace)
        call = helpers.update_tool_call(
            call_id,
            title=None if request.call_id else shown.title,  # a model's call keeps the title it was announced with
            kind=shown.kind,
            raw_input=dict(request.arguments),
            content=[*(shown.content or []), helpers.tool_content(helpers.text_block(request.reason))],
        )
        try:
            response = await self.conn.request_permission(
                session_id=self.updates.session_id, tool_call=call, options=options
            )
        except Exception as exc:
            return ApprovalAnswer.deny(f"not approved: the editor gave no answer ({exc})")
        outcome = response.outcome
        if not isinstance(outcome, schema.AllowedOutcome):
            return ApprovalAnswer.deny("not approved: the question was cancelled in the editor")
        if outcome.option_id == REFUSE:
            self.refused.add(request.tool)
            return ApprovalAnswer.deny(f"{request.tool} was refused in the editor for the rest of this session")
        if not outcome.option_id.isdigit() or int(outcome.option_id) >= len(choices):
            return ApprovalAnswer.deny(
                f"not approved: the editor answered with an unknown option {outcome.option_id!r}"
            )
        return choices[int(outcome.option_id)].answer(message="not approved: rejected in the editor")


def editor_host(conn: "Client", updates: EditorUpdates, capabilities: schema.ClientCapabilities) -> ToolHost:
    """The built-in tools' file and terminal work done by the editor, as far as it offers it."""
    fs = capabilities.fs or schema.FileSystemCapabilities()

    async def read_text(path: Path) -> str:
        with anyio.fail_after(EDITOR_TIMEOUT_SEC):
            return (await conn.read_text_file(session_id=updates.session_id, path=str(path))).content

    async def write_text(path: Path, text: str) -> None:
        with anyio.fail_after(EDITOR_TIMEOUT_SEC):
            await conn.write_text_file(session_id=updates.session_id, path=str(path), content=text)

    async def run(command: HostCommand) -> tuple[int, str, int] | None:
        session = updates.session_id
        # the editor adds its own environment to a terminal's: `env -i` leaves only the scrubbed one Kairox passes
        argv = ["env", "-i", *(f"{k}={v}" for k, v in command.env.items()), *command.argv]
        terminal = await conn.create_terminal(
            session_id=session,
            command=argv[0],
            args=argv[1:],
            cwd=str(command.cwd),
            output_byte_limit=command.output_limit,
        )
        updates.terminals.add(command.call_id)
        updates.send(
            helpers.update_tool_call(command.call_id, content=[helpers.tool_terminal_ref(terminal.terminal_id)])
        )
        try:
            with anyio.move_on_after(command.timeout):
                status = await conn.wait_for_terminal_exit(session_id=session, terminal_id=terminal.terminal_id)
                output = await conn.terminal_output(session_id=session, terminal_id=terminal.terminal_id)
                text = output.output
                return (-1 if status.exit_code is None else status.exit_code), text, len(text) + output.truncated
            await conn.kill_terminal(session_id=session, terminal_id=terminal.terminal_id)
            return None
        finally:
            with anyio.CancelScope(shield=True), anyio.move_on_after(5):  # releasing kills what still runs
                await conn.release_terminal(session_id=session, terminal_id=terminal.terminal_id)

    return ToolHost(
        read_text=read_text if fs.read_text_file else None,
        write_text=write_text if fs.write_text_file else None,
        run=run if capabilities.terminal else None,
    )
