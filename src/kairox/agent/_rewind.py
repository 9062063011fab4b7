"""Rewind (A6): before a turn changes anything, what it could change is recorded, so the files can be put back as
they were before that turn (and, when asked, the conversation cut back to it).

Before the first call of a turn that may change files (a write, a command, an external tool): where the workspace
is a git repository, a snapshot of every file git would see (``.gitignore`` respected), so what shell commands
changed is covered too; and before each write by Kairox's own tools, the files it names. Contents are kept by
digest under ``$KAIROX_HOME/checkpoints/<workspace>/`` (never in the repository: no branch, no commit, no ref), one
JSON-lines file per session. What no snapshot can undo (a push, a network call, files outside the workspace that a
command changed, what an MCP server did) is listed with the rewind."""

import hashlib
import json
import os
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kairox._util._filestate import state_of
from kairox.agent._messages import Message, Role
from kairox.errors import KairoxError
from kairox.tools import walk_files

LARGE = 20 << 20
"""Files larger than this are not kept (the rewind names them)."""
MAX_FILES = 20_000
"""A workspace with more files than this gets no whole snapshot: only Kairox's own writes are recorded."""


def _folder(path: Path) -> Path:
    path.mkdir(parents=True, exist_ok=True, mode=0o700)
    return path


@dataclass(frozen=True, kw_only=True, slots=True)
class RewindPlan:
    """What rewinding a session to before ``turn`` does: files put back, files removed, what it cannot undo."""

    session_id: str
    turn: int
    prompt: str
    restore: tuple[tuple[str, str], ...] = ()
    """``(path, digest)``: files put back as they were."""
    remove: tuple[str, ...] = ()
    """Files made since, removed."""
    irreversible: tuple[str, ...] = ()
    messages: int | None = None
    """How many messages the conversation keeps when it is rewound too."""

    def text(self) -> str:
        lines = [f"turn {self.turn}: {self.prompt!r}"]
        lines += [f"  put back  {p}" for p, _ in self.restore] + [f"  remove    {p}" for p in self.remove]
        if not (self.restore or self.remove):
            lines.append("  no file to put back: the files are as they were before this turn")
        lines += [f"  cannot be put back: {note}" for note in self.irreversible]
        return "\n".join(lines)


def conversation_cut(messages: list[Message], plan: RewindPlan) -> int:
    """How many messages stay when the conversation goes back to before ``plan.turn``; ``KairoxError`` when it
    cannot (the turn was compacted away, or it is not in this conversation)."""
    keep = plan.messages
    turn = messages[keep] if keep is not None and keep < len(messages) else None
    if keep is None or turn is None or turn.role is not Role.USER or not turn.text.startswith(plan.prompt):
        raise KairoxError(
            f"the conversation no longer holds turn {plan.turn} as it was (compacted or rewound since)",
            hint="rewind the files only",
        )
    return keep


class Checkpoints:
    """The checkpoints of one session of one workspace."""

    def __init__(self, home: Path, workspace: Path, session_id: str) -> None:
        self.workspace = workspace
        self.root = home / "checkpoints" / hashlib.sha256(str(workspace).encode()).hexdigest()[:16]
        self.file = self.root / f"{session_id}.jsonl"
        self.session_id = session_id
        self.git = (workspace / ".git").exists()
        self._turn = 0
        self._seen: set[str] = set()
        self._tree_taken = True

    # --- recording ------------------------------------------------------------------------------------------

    def begin(self, turn: int, messages: int, prompt: str) -> None:
        """A turn starts with ``messages`` messages in the conversation."""
        self._turn, self._seen, self._tree_taken = turn, set(), not self.git
        self._write({"turn": turn, "messages": messages, "prompt": prompt[:300]})

    def before_change(self, paths: Iterable[Path], note: str | None) -> None:
        """Before a call that may change files: the snapshot (once a turn), then the files it names."""
        record: dict[str, Any] = {"turn": self._turn}
        if not self._tree_taken:
            self._tree_taken = True
            record["tree"] = self._snapshot()
            if record["tree"] is None:
                big = f"what commands changed in the workspace (more than {MAX_FILES} files: no snapshot)"
                note = f"{note}; {big}" if note else big
        files = {}
        for path in paths:
            key = self._key(path)
            if key not in self._seen and not path.is_dir():
                self._seen.add(key)
                files[key] = self._keep(path)
        if files:
            record["files"] = files
        if note:
            record["irreversible"] = note
        if len(record) > 1:
            self._write(record)

    def rewound(self, turn: int) -> None:
        """The conversation went back to before ``turn``: its checkpoints and later ones are spent."""
        self._write({"rewound": turn})

    def _write(self, record: dict[str, Any]) -> None:
        _folder(self.root)
        handle = os.open(self.file, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        with os.fdopen(handle, "a", encoding="utf-8") as out:
            out.write(json.dumps(record, ensure_ascii=False) + "\n")

    def _key(self, path: Path) -> str:
        absolute = path if path.is_absolute() else self.workspace / path
        try:
            return absolute.relative_to(self.workspace).as_posix()
        except ValueError:
            return str(absolute)

    def _keep(self, path: Path, known: dict[str, list[Any]] | None = None, *, store: bool = True) -> str | None:
        """The file's content kept by digest (``x:`` before it when executable; with ``store`` false only the
        digest); None when there is none; ``-`` when it is not kept (too large, a link, unreadable)."""
        path = path if path.is_absolute() else self.workspace / path
        now = time.time_ns()
        try:
            info = os.lstat(path)
        except FileNotFoundError:
            return None
        except OSError:
            return "-"
        if not os.path.isfile(path) or os.path.islink(path) or info.st_size > LARGE:
            return "-"
        # a digest is known by the file's status only once that status had settled (kairox._util._filestate)
        state = state_of(info, now)
        mark = list(state.key)
        cached = None if known is None else known.get(self._key(path))
        if cached is not None and cached[:5] == mark:
            return str(cached[5])
        try:
            data = path.read_bytes()
        except OSError:
            return "-"
        digest = ("x:" if info.st_mode & 0o100 else "") + hashlib.sha256(data).hexdigest()
        blob = self._blob(digest)
        if store and not blob.exists():
            _folder(blob.parent)
            temp = blob.with_suffix(".tmp")
            temp.write_bytes(data)
            temp.chmod(0o600)
            temp.replace(blob)
        if known is not None and state.settled:
            known[self._key(path)] = [*mark, digest]
        return digest

    def _blob(self, digest: str) -> Path:
        name = digest.removeprefix("x:")
        return self.root / "objects" / name[:2] / name[2:]

    def _snapshot(self) -> dict[str, str] | None:
        """Every file of the workspace git would see, by digest (unchanged files by their last known status)."""
        index = self.root / "index.json"
        try:
            known: dict[str, list[Any]] = json.loads(index.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            known = {}
        tree: dict[str, str] = {}
        for count, name in enumerate(walk_files(self.workspace), 1):
            if count > MAX_FILES:
                return None
            digest = self._keep(self.workspace / name, known)
            if digest is not None:
                tree[name] = digest
        _folder(self.root)
        index.write_text(json.dumps({k: v for k, v in known.items() if k in tree}), encoding="utf-8")
        index.chmod(0o600)
        return tree

    # --- rewinding ------------------------------------------------------------------------------------------

    def turns(self) -> list[dict[str, Any]]:
        """The session's turns that can still be rewound, oldest first, each with what was recorded in it."""
        turns: dict[int, dict[str, Any]] = {}
        try:
            lines = self.file.read_text(encoding="utf-8").splitlines()
        except FileNotFoundError:
            return []
        for line in lines:
            try:
                record = json.loads(line)
            except ValueError:
                continue
            if "rewound" in record:
                turns = {t: v for t, v in turns.items() if t < int(record["rewound"])}
                continue
            turn = turns.setdefault(int(record["turn"]), {"turn": int(record["turn"]), "files": {}, "notes": []})
            if "messages" in record:
                turn.update(messages=record["messages"], prompt=record.get("prompt", ""))
            if "tree" in record and "tree" not in turn:
                turn["tree"] = record["tree"]
            for key, digest in (record.get("files") or {}).items():
                turn["files"].setdefault(key, digest)
            if record.get("irreversible"):
                turn["notes"].append(record["irreversible"])
        return [turns[t] for t in sorted(turns)]

    def plan(self, turn: int | None = None) -> RewindPlan:
        """What rewinding to before ``turn`` (default: the latest) would do."""
        turns = self.turns()
        if not turns:
            raise KairoxError(f"session {self.session_id} has no turn to rewind", hint="`kairox sessions list`")
        chosen = turns[-1] if turn is None else next((t for t in turns if t["turn"] == turn), None)
        if chosen is None:
            known = ", ".join(str(t["turn"]) for t in turns)
            raise KairoxError(f"session {self.session_id} has no turn {turn} to rewind", hint=f"its turns: {known}")
        later = [t for t in turns if t["turn"] >= chosen["turn"]]
        seen_now = set(walk_files(self.workspace)) if any("tree" in t for t in later) else set()
        target: dict[str, str | None] = {}
        for record in later:
            tree = record.get("tree")
            if isinstance(tree, dict):  # what git saw before that turn: the rest of what it sees now was made since
                for key in (*tree, *seen_now, *record["files"]):
                    if key in tree or key in seen_now:
                        target.setdefault(key, tree.get(key))
            for key, digest in record["files"].items():
                target.setdefault(key, digest)
        restore: list[tuple[str, str]] = []
        remove: list[str] = []
        notes = [note for t in later for note in t["notes"]]
        for key, digest in sorted(target.items()):
            now = self._keep(Path(key), store=False)
            if digest == "-":
                notes.append(f"{key}: not kept (a link, unreadable or over {LARGE >> 20} MB)")
            elif digest is None and now is not None:
                remove.append(key)
            elif digest is not None and digest != now:
                restore.append((key, digest))
        return RewindPlan(
            session_id=self.session_id,
            turn=chosen["turn"],
            prompt=str(chosen.get("prompt", "")),
            restore=tuple(restore),
            remove=tuple(remove),
            irreversible=tuple(dict.fromkeys(notes)),
            messages=chosen.get("messages"),
        )

    def apply(self, plan: RewindPlan) -> None:
        """Put the files back as ``plan`` says."""
        for key in plan.remove:
            Path(self.workspace / key).unlink(missing_ok=True)
        for key, digest in plan.restore:
            path = self.workspace / key
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(self._blob(digest).read_bytes())
            mode = path.stat().st_mode
            path.chmod(mode | 0o111 if digest.startswith("x:") else mode & ~0o111)


def session_checkpoints(home: Path, workspace: Path, session: str | None) -> tuple[Checkpoints, Path]:
    """The checkpoints and transcript of ``session`` (an id or its start), or of the workspace's latest session."""
    from kairox.agent._transcript import SessionNotFoundError, find_session, list_sessions

    if session is None:
        found = list_sessions(home, workspace=workspace)
        if not found:
            raise SessionNotFoundError(f"no session in {workspace}", hint="`kairox run PROMPT` starts one")
        path = found[-1].path
    else:
        path = find_session(home, session)
    return Checkpoints(home, workspace, path.stem), path


def rewind_transcript(checkpoints: Checkpoints, path: Path, plan: RewindPlan, *, conversation: bool) -> int | None:
    """Rewind a session that is not running: the files, and with ``conversation`` its transcript, so a resume
    goes on from before the turn. Returns how many messages the conversation keeps."""
    from kairox.agent._transcript import Transcript, read_session

    keep = conversation_cut(read_session(path)[1], plan) if conversation else None
    checkpoints.apply(plan)
    if keep is not None:
        transcript = Transcript(path)
        transcript.rewind(keep)
        transcript.close()
        checkpoints.rewound(plan.turn)
    return keep
