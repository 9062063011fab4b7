"""``search.ripgrep``: ``rg --json`` when it is installed, a Python search of the same files otherwise."""

import asyncio
import base64
import contextlib
import fnmatch
import json
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kairox.errors import ToolCallError
from kairox.tools._builtin_fs import Unreadable, left_out_note, looks_binary, refusal, workspace_path
from kairox.tools._gitignore import compile_glob, walk_files
from kairox.tools._model import ToolResult

_MAX_LINE = 400


@dataclass(frozen=True, slots=True)
class Match:
    path: str
    line: int
    text: str


def _shown(path: Path, workspace: Path) -> str:
    try:
        return str(path.relative_to(workspace))
    except ValueError:
        return str(path)


async def search(
    args: dict[str, Any], workspace: Path, *, rg: str | None, default_max: int, unreadable: Unreadable | None = None
) -> ToolResult:
    pattern = args.get("pattern")
    if not isinstance(pattern, str) or not pattern:
        raise ToolCallError(tool="search.ripgrep", reason="`pattern` must be a non-empty string")
    root = workspace_path(args.get("path") or ".", workspace, "search.ripgrep")
    if not root.exists():
        raise ToolCallError(tool="search.ripgrep", reason=f"{root} does not exist")
    limit = int(args.get("max_results") or default_max)
    left_out: dict[str, str] = {}
    if rg is not None:
        matches, more = await _with_rg(rg, pattern, root, args, limit, _Filter(unreadable, left_out))
        engine = "rg"
    else:
        real = Path(os.path.realpath(root)), Path(os.path.realpath(workspace))
        matches, more = await asyncio.to_thread(
            _with_python, pattern, real[0], args, limit, real[1], _Filter(unreadable, left_out)
        )
        engine = "python"
    lines = [f"{_shown(Path(m.path), workspace)}:{m.line}: {m.text}" for m in matches]
    notes = [] if lines else ["(no matches)"]
    if more:
        notes.append(f"[search.ripgrep: stopped after {limit} matches; narrow the pattern, path or glob]")
    if left_out:
        notes.append(left_out_note("search.ripgrep", list(left_out.values())))
    structured: dict[str, Any] = {
        "engine": engine,
        "matches": [{"path": _shown(Path(m.path), workspace), "line": m.line, "text": m.text} for m in matches],
        "truncated": more,
    }
    if notes:
        structured["notes"] = notes
    return ToolResult.text("\n".join([*lines, *notes]), structured=structured)


@dataclass(slots=True)
class _Filter:
    """Leaves out files the rules keep from being read, remembering each one once with its rule."""

    unreadable: Unreadable | None
    left_out: dict[str, str]

    def keeps(self, path: str) -> bool:
        if path in self.left_out:
            return False
        reason = refusal(self.unreadable, Path(path))
        if reason is None:
            return True
        self.left_out[path] = reason
        return False


def _rg_text(field: Any) -> str:
    """rg's ``{"text": ...}``, or ``{"bytes": base64}`` for a name or line that is not UTF-8 (decoded the way
    Python names such files, so the read rules see the real path)."""
    if not isinstance(field, dict):
        return ""
    if isinstance(field.get("text"), str):
        return str(field["text"])
    raw = field.get("bytes")
    if isinstance(raw, str):
        try:
            return os.fsdecode(base64.b64decode(raw))
        except (ValueError, UnicodeDecodeError):
            return ""
    return ""


async def _with_rg(
    rg: str, pattern: str, root: Path, args: dict[str, Any], limit: int, keep: _Filter
) -> tuple[list[Match], bool]:
    argv = [rg, "--json", "--no-require-git", "--no-config", "--sort", "path"]
    if args.get("ignore_case"):
        argv.append("--ignore-case")
    if args.get("fixed_strings"):
        argv.append("--fixed-strings")
    if isinstance(args.get("glob"), str):
        argv += ["--glob", args["glob"]]
    argv += ["-e", pattern, "--", str(root)]
    proc = await asyncio.create_subprocess_exec(
        *argv, stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE
    )
    assert proc.stdout is not None and proc.stderr is not None
    matches: list[Match] = []
    more = False
    try:
        while line := await proc.stdout.readline():
            message = json.loads(line)
            if message.get("type") != "match":
                continue
            data = message["data"]
            text = _rg_text(data["lines"])
            path = _rg_text(data["path"])
            if not keep.keeps(path):
                continue
            if len(matches) >= limit:
                more = True
                break
            matches.append(Match(path=path, line=int(data["line_number"]), text=text.rstrip("\n")[:_MAX_LINE]))
        if more:
            proc.kill()
        errors = (await proc.stderr.read()).decode(errors="replace").strip()
        code = await proc.wait()
    finally:
        if proc.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                proc.kill()
            await proc.wait()
    if not more and code == 2 and not matches:
        raise ToolCallError(tool="search.ripgrep", reason=errors or "rg failed")
    return matches, more


def _with_python(
    pattern: str, root: Path, args: dict[str, Any], limit: int, workspace: Path, keep: _Filter
) -> tuple[list[Match], bool]:
    flags = re.IGNORECASE if args.get("ignore_case") else 0
    try:
        regex = re.compile(re.escape(pattern) if args.get("fixed_strings") else pattern, flags)
    except re.error as exc:
        raise ToolCallError(tool="search.ripgrep", reason=f"bad regular expression: {exc}") from exc
    glob = args.get("glob")
    glob_regex = compile_glob(glob) if isinstance(glob, str) and "/" in glob else None
    if root.is_file():
        files = [root]
    else:
        files = []
        for rel in walk_files(root, ignore_root=workspace):
            if isinstance(glob, str):
                name_ok = glob_regex.match(rel) if glob_regex else fnmatch.fnmatchcase(rel.rsplit("/", 1)[-1], glob)
                if not name_ok:
                    continue
            # like rg: links are not followed while walking, and only regular files are read (a pipe would block)
            if not (root / rel).is_symlink() and (root / rel).is_file():
                files.append(root / rel)
    matches: list[Match] = []
    for file in files:
        if not keep.keeps(os.fspath(file)):
            continue
        try:
            data = file.read_bytes()
        except OSError:
            continue
        if looks_binary(data):
            continue
        for number, line in enumerate(data.decode("utf-8", errors="replace").splitlines(), start=1):
            if regex.search(line):
                if len(matches) >= limit:
                    return matches, True
                matches.append(Match(path=os.fspath(file), line=number, text=line[:_MAX_LINE]))
    return matches, False
