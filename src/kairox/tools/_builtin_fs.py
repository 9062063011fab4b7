"""``fs.read``, ``fs.write``, ``fs.edit`` and ``fs.list``: files of the workspace, paths resolved against it."""

import fnmatch
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from kairox.errors import ToolCallError
from kairox.tools._gitignore import compile_glob, walk_files
from kairox.tools._model import ToolResult

BINARY_SNIFF_BYTES = 8192

Unreadable = Callable[[Path], str | None]
"""Why a file met inside a folder must be left out (``CallContext.unreadable``), or None."""
ReadText = Callable[[Path], str]
WriteText = Callable[[Path, str], None]
"""A front end's own reading and writing of a file (an editor's buffers), called from the tool's worker thread."""


def refusal(unreadable: Unreadable | None, path: Path) -> str | None:
    # the one resolution of every tool's paths (``kairox.policy.resolve_path`` runs it too): the kernel's walk,
    # so /proc/self/cwd/... and /proc/self/root/... spellings are the file they reach
    return None if unreadable is None else unreadable(Path(os.path.realpath(str(path))))


def left_out_note(tool: str, reasons: list[str]) -> str:
    """The note that says how many files were left out because rules keep them from being read, and by which rules."""
    rules = "; ".join(sorted(set(reasons)))
    return f"[{tool}: {len(reasons)} file(s) left out: reading them is denied or needs approval ({rules})]"


def workspace_path(value: Any, workspace: Path, tool: str) -> Path:
    if not isinstance(value, str) or not value.strip():
        raise ToolCallError(tool=tool, reason="`path` must be a non-empty string")
    path = Path(os.path.expanduser(value))
    return path if path.is_absolute() else workspace / path


def looks_binary(data: bytes) -> bool:
    return b"\0" in data[:BINARY_SNIFF_BYTES]


def read_file(
    args: dict[str, Any],
    workspace: Path,
    *,
    max_bytes: int,
    unreadable: Unreadable | None = None,
    read: ReadText | None = None,
) -> ToolResult:
    path = workspace_path(args.get("path"), workspace, "fs.read")
    reason = refusal(unreadable, path)
    if reason is not None:  # the policy passed the name; the file behind it is one the rules hide (a hard link)
        raise ToolCallError(
            tool="fs.read",
            reason=f"{path} may not be read: {reason}",
            hint="read it by the name the rule covers, where the rule decides (an ask rule asks)",
        )
    if read is not None:  # the front end's view of the file: an editor's buffer, saved or not
        data = read(path).encode("utf-8")[: max_bytes + 1]
    elif not path.exists():
        raise ToolCallError(tool="fs.read", reason=f"{path} does not exist", hint="`fs.list` shows what is there")
    elif path.is_dir():
        raise ToolCallError(tool="fs.read", reason=f"{path} is a folder", hint="use fs.list for folders")
    elif not path.is_file():  # a named pipe or a device: opening it could wait forever
        raise ToolCallError(tool="fs.read", reason=f"{path} is not a regular file")
    else:
        with path.open("rb") as handle:
            data = handle.read(max_bytes + 1)
    if looks_binary(data):
        size = path.stat().st_size
        return ToolResult.error(f"{path} looks like a binary file ({size} bytes); fs.read only returns text")
    cut = len(data) > max_bytes
    text = data[:max_bytes].decode("utf-8", errors="replace")
    lines = text.splitlines(keepends=True)
    if cut and lines and not lines[-1].endswith("\n"):
        lines.pop()  # a partial last line would mislead an edit
    total = len(lines)
    start = int(args.get("start_line") or 1)
    end = args.get("end_line")
    stop = total if end is None else min(int(end), total)
    if start < 1 or start > max(total, 1):
        raise ToolCallError(tool="fs.read", reason=f"start_line {start} is outside the file ({total} lines)")
    selected = "".join(lines[start - 1 : stop])
    note = ""
    if cut:
        note = f"\n[fs.read: only the first {max_bytes} bytes were read; ask for a line range to see more]"
    # the structured form carries the text itself: hosts that show only structuredContent show the file
    structured: dict[str, Any] = {
        "path": str(path),
        "content": selected,
        "start_line": start,
        "end_line": stop,
        "total_lines": total,
        "truncated": cut,
    }
    if note:
        structured["note"] = note.strip()
    return ToolResult.text(selected + note, structured=structured)


def write_file(args: dict[str, Any], workspace: Path, *, write: WriteText | None = None) -> ToolResult:
    path = workspace_path(args.get("path"), workspace, "fs.write")
    content = args.get("content")
    if not isinstance(content, str):
        raise ToolCallError(tool="fs.write", reason="`content` must be a string")
    if path.is_dir():
        raise ToolCallError(tool="fs.write", reason=f"{path} is a folder")
    if path.exists() and not path.is_file():
        raise ToolCallError(tool="fs.write", reason=f"{path} is not a regular file")
    existed = path.exists()
    if write is not None:
        write(path, content)
    else:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(content, encoding="utf-8")
    size = len(content.encode("utf-8"))
    verb = "replaced" if existed else "created"
    return ToolResult.text(
        f"{verb} {path} ({size} bytes)", structured={"path": str(path), "bytes": size, "created": not existed}
    )


def edit_file(
    args: dict[str, Any],
    workspace: Path,
    *,
    unreadable: Unreadable | None = None,
    read: ReadText | None = None,
    write: WriteText | None = None,
) -> ToolResult:
    path = workspace_path(args.get("path"), workspace, "fs.edit")
    reason = refusal(unreadable, path)
    if reason is not None:  # refused before reading: "found" / "not found" would tell what the file holds
        raise ToolCallError(tool="fs.edit", reason=f"{path} may not be read ({reason}), so it cannot be edited")
    old, new = args.get("old_string"), args.get("new_string")
    if not isinstance(old, str) or not old:
        raise ToolCallError(tool="fs.edit", reason="`old_string` must be a non-empty string")
    if not isinstance(new, str):
        raise ToolCallError(tool="fs.edit", reason="`new_string` must be a string")
    if read is None and not path.is_file():
        raise ToolCallError(tool="fs.edit", reason=f"{path} is not a file")
    text = path.read_text(encoding="utf-8") if read is None else read(path)
    count = text.count(old)
    replace_all = bool(args.get("replace_all", False))
    if count == 0:
        return ToolResult.error(f"fs.edit: old_string was not found in {path}; read the file and copy the text exactly")
    if count > 1 and not replace_all:
        return ToolResult.error(
            f"fs.edit: old_string occurs {count} times in {path}; add surrounding lines to make it unique, "
            "or set replace_all to true"
        )
    edited = text.replace(old, new) if replace_all else text.replace(old, new, 1)
    if write is not None:
        write(path, edited)
    else:
        path.write_text(edited, encoding="utf-8")
    replaced = count if replace_all else 1
    return ToolResult.text(
        f"edited {path}: {replaced} replacement(s)", structured={"path": str(path), "replacements": replaced}
    )


def list_files(
    args: dict[str, Any], workspace: Path, *, max_entries: int, unreadable: Unreadable | None = None
) -> ToolResult:
    root = Path(os.path.realpath(workspace_path(args.get("path") or ".", workspace, "fs.list")))
    if not root.is_dir():
        raise ToolCallError(tool="fs.list", reason=f"{root} is not a folder")
    pattern = args.get("pattern") or "**"
    gitignore = bool(args.get("respect_gitignore", True))
    matched: list[str] = []
    left_out: list[str] = []
    more = False
    for rel in walk_files(root, respect_gitignore=gitignore, ignore_root=Path(os.path.realpath(workspace))):
        if pattern != "**" and not _glob_match(rel, pattern):
            continue
        reason = refusal(unreadable, root / rel)
        if reason is not None:
            left_out.append(reason)
            continue
        if len(matched) >= max_entries:
            more = True
            break
        matched.append(rel)
    notes = [] if matched else ["(no files)"]
    if more:
        notes.append(f"[fs.list: stopped after {max_entries} entries; narrow `pattern` or `path`]")
    if left_out:
        notes.append(left_out_note("fs.list", left_out))
    structured: dict[str, Any] = {"root": str(root), "files": matched, "truncated": more}
    if notes:
        structured["notes"] = notes
    return ToolResult.text("\n".join([*matched, *notes]), structured=structured)


def _glob_match(rel: str, pattern: str) -> bool:
    """``*.py`` matches names anywhere; a pattern with ``/`` matches the path from the listed folder."""
    if "/" not in pattern:
        return fnmatch.fnmatchcase(rel.rsplit("/", 1)[-1], pattern)
    return compile_glob(pattern).match(rel) is not None
