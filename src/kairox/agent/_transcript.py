"""Transcripts: one JSON-lines file per session under ``$KAIROX_HOME/sessions/``, written line by line as the
session goes (a crash loses at most the line being written). The first line describes the session; then come
``event`` and ``message`` lines, a ``compaction`` line where older turns were replaced by their summary (a
resume starts from the summary and the messages the line says were kept), and a ``rewind`` line where the
conversation went back to an earlier turn.
Arguments named like credentials and the provider's key are redacted."""

import json
import secrets
import threading
import time
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import IO, Any

from kairox._util._files import open_private
from kairox.agent._events import AssistantTextDelta, AssistantThoughtDelta, ModelSwitched, UserMessageSubmitted
from kairox.agent._messages import Message, Role, ToolResultPart
from kairox.config import SecretScrubber
from kairox.errors import KairoxError
from kairox.events import Event, event_to_json

FORMAT = 1


class SessionNotFoundError(KairoxError):
    """No transcript with that id (or none for this workspace)."""


def sessions_dir(home: Path) -> Path:
    return home / "sessions"


def new_session_id() -> str:
    return time.strftime("%Y%m%d-%H%M%S") + "-" + secrets.token_hex(3)


class Transcript:
    """Appends a session's events and messages to its file; also an ``EventSink``."""

    def __init__(self, path: Path, *, hidden: Iterable[str] = (), scrubber: SecretScrubber | None = None) -> None:
        """``hidden``: values never written (a model's key); ``scrubber``: the configuration's known secrets, which
        a tool call's arguments or result may quote (``SecretScrubber.for_config``)."""
        self.path = path
        self.session_id = path.stem
        self.hidden = tuple(s for s in hidden if len(s) >= 8)
        self._scrubber = scrubber or SecretScrubber()
        self._scrubber.add(*self.hidden)
        self._file: IO[str] = open_private(path, "a", encoding="utf-8")
        self._lock = threading.Lock()

    def hide(self, *secrets: str) -> None:
        """Never write these values either (the key of a model switched to mid-session)."""
        kept = tuple(v for v in secrets if len(v) >= 8)
        self.hidden += kept
        self._scrubber.add(*kept)

    @classmethod
    def create(
        cls,
        home: Path,
        *,
        workspace: Path,
        model: str,
        provider: str,
        hidden: Iterable[str] = (),
        scrubber: SecretScrubber | None = None,
        folder: Path | None = None,
        session_id: str | None = None,
        **more: str,
    ) -> "Transcript":
        """A new transcript in ``sessions_dir(home)`` (a subagent's: in ``folder``, its header says whose it is)."""
        session_id = session_id or new_session_id()
        path = (folder or sessions_dir(home)) / f"{session_id}.jsonl"
        transcript = cls(path, hidden=hidden, scrubber=scrubber)
        transcript._write(
            {
                "type": "session",
                "format": FORMAT,
                "id": session_id,
                "workspace": str(workspace),
                "model": model,
                "provider": provider,
                **more,
            }
        )
        return transcript

    def _write(self, record: dict[str, Any]) -> None:
        line = json.dumps(
            {"ts": round(time.time(), 6), **self._scrubber.scrub(record, by_key=True)}, ensure_ascii=False, default=str
        )
        with self._lock:
            if not self._file.closed:
                self._file.write(line + "\n")
                self._file.flush()

    def emit(self, event: Event) -> None:
        # the message holds them (text, reasoning); a subagent's are in its own transcript
        if isinstance(getattr(event, "inner", event), AssistantTextDelta | AssistantThoughtDelta):
            return
        self._write({"type": "event", **event_to_json(event)})

    def message(self, message: Message) -> None:
        self._write({"type": "message", "message": message.to_json()})

    def compaction(self, summary: Message, *, kept: int) -> None:
        """The conversation from here on is ``summary`` and the last ``kept`` messages before this line."""
        self._write({"type": "compaction", "kept": kept, "message": summary.to_json()})

    def rewind(self, keep: int) -> None:
        """The conversation from here on is its first ``keep`` messages (``/rewind`` with the conversation)."""
        self._write({"type": "rewind", "keep": keep})

    def close(self) -> None:
        with self._lock:
            self._file.close()


@dataclass(frozen=True, kw_only=True, slots=True)
class SessionInfo:
    id: str
    path: Path
    workspace: str
    model: str
    provider: str
    created: float
    updated: float
    turns: int
    first_prompt: str

    def to_json(self) -> dict[str, Any]:
        return {**asdict(self), "path": str(self.path)}


def _records(path: Path) -> list[dict[str, Any]]:
    records = []
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        try:
            record = json.loads(line)
        except json.JSONDecodeError:  # the last line of a crashed session may be cut
            continue
        if isinstance(record, dict):
            records.append(record)
    return records


def read_session(path: Path) -> tuple[SessionInfo, list[Message]]:
    records = _records(path)
    header = records[0] if records and records[0].get("type") == "session" else {}
    messages: list[Message] = []
    prompts = []
    for record in records:
        if record.get("type") == "message":
            try:
                messages.append(Message.from_json(record.get("message")))
            except (ValueError, KeyError, TypeError):
                continue
        elif record.get("type") == "compaction":
            try:
                summary, kept = Message.from_json(record.get("message")), int(record.get("kept", 0))
            except (ValueError, KeyError, TypeError):
                continue
            messages = [summary, *(messages[len(messages) - kept :] if 0 < kept <= len(messages) else ())]
        elif record.get("type") == "rewind" and isinstance(record.get("keep"), int):
            messages = messages[: record["keep"]]
        elif record.get("type") == "event" and record.get("event") == UserMessageSubmitted.__name__:
            prompts.append(str(record.get("text", "")))
        elif record.get("type") == "event" and record.get("event") == ModelSwitched.__name__:
            header = {**header, "model": record.get("model", ""), "provider": record.get("provider", "")}
    info = SessionInfo(
        id=path.stem,
        path=path,
        workspace=str(header.get("workspace", "")),
        model=str(header.get("model", "")),
        provider=str(header.get("provider", "")),
        created=float(header.get("ts", path.stat().st_mtime)),
        updated=path.stat().st_mtime,
        turns=len(prompts),
        first_prompt=(prompts[0] if prompts else "")[:200],
    )
    return info, consistent(messages)


NOT_RUN = "not run: the session ended before this call ran"
"""The result a tool call gets when its session stopped (a crash, a kill) before the call's result was recorded."""


def consistent(messages: list[Message]) -> list[Message]:
    """The messages as a valid conversation: every tool call answered in the message right after the one that
    made it. A call whose result was never recorded (the session stopped mid-call, then went on after a resume)
    gets a result saying it did not run, in its place, wherever it lies; results that answer no call there are
    left out. The calls stay, so the model still sees what it asked for and that it never got the answer."""
    fixed: list[Message] = []
    index = 0
    while index < len(messages):
        message = messages[index]
        index += 1
        if message.role is Role.TOOL:
            continue  # a result not right after its call (answered above, or its call is gone)
        fixed.append(message)
        if message.role is not Role.ASSISTANT or not message.tool_calls:
            continue
        following = messages[index] if index < len(messages) else None
        given = (
            {r.call_id: r for r in following.tool_results}
            if following is not None and following.role is Role.TOOL
            else {}
        )
        if following is not None and following.role is Role.TOOL:
            index += 1
        results = tuple(
            given.get(c.id) or ToolResultPart(call_id=c.id, name=c.name, text=NOT_RUN, is_error=True)
            for c in message.tool_calls
        )
        fixed.append(Message(role=Role.TOOL, tool_results=results))
    return fixed


def subagent_history(path: Path) -> list[tuple[str, str, tuple[dict[str, Any], ...]]]:
    """The subagents of the session written to ``path`` (their transcripts lie in the folder of its name): for each,
    the ``task`` call that ran it, its id and its tool calls (``{"id", "tool", "arguments"}``)."""
    found = []
    for child in sorted(path.with_suffix("").glob("*.jsonl")):
        header = next(iter(_records(child)), {})
        messages = read_session(child)[1]
        calls = tuple({"id": c.id, "tool": c.name, "arguments": c.arguments} for m in messages for c in m.tool_calls)
        found.append((str(header.get("parent_call_id", "")), child.stem, calls))
    return found


def list_sessions(home: Path, *, workspace: Path | None = None) -> list[SessionInfo]:
    """Every session, most recently updated last; only ``workspace``'s when given."""
    folder = sessions_dir(home)
    if not folder.is_dir():
        return []
    found = [read_session(path)[0] for path in folder.glob("*.jsonl")]
    if workspace is not None:
        found = [s for s in found if s.workspace == str(workspace)]
    return sorted(found, key=lambda s: (s.updated, s.id))


def find_session(home: Path, session_id: str) -> Path:
    folder = sessions_dir(home)
    exact = folder / f"{session_id}.jsonl"
    if exact.is_file():
        return exact
    matches = sorted(folder.glob(f"{session_id}*.jsonl")) if folder.is_dir() and session_id else []
    if len(matches) == 1:
        return matches[0]
    raise SessionNotFoundError(
        f"no session {session_id!r} in {folder}" if not matches else f"{session_id!r} matches {len(matches)} sessions",
        hint="`kairox sessions list` shows the sessions and their ids",
    )
