"""Server replies as text a model reads (``path:line:col: the line``) and as structured content, with
1-based lines and character columns."""

import difflib
import os
import re
from typing import Any

from kairox._util._json import JsonObject, json_dict, json_int, json_list
from kairox.lsp._client import LspClient
from kairox.lsp._symbols import FoundSymbol
from kairox.lsp._text import shown_real, split_lines, to_model_column, uri_to_path

MAX_ITEMS = 200
_INT_LIMIT = 2**31 - 1
"""The largest position ``json_int`` keeps as it is."""
_SEVERITIES = {1: "error", 2: "warning", 3: "information", 4: "hint"}


class Files:
    """The lines and shown paths of the files one reply names, each looked up once per reply."""

    def __init__(self, client: LspClient) -> None:
        self.client = client
        self._lines: dict[str, list[str]] = {}
        self._real: dict[str, str] = {}
        self._root = str(client.workspace)  # resolved when the client was made

    def lines(self, uri: str) -> list[str]:
        lines = self._lines.get(uri)
        if lines is None:
            lines = self._lines[uri] = self.client.lines_of(uri)
        return lines

    def real(self, uri: str) -> str:
        """The file ``uri`` names, symlinks resolved."""
        real = self._real.get(uri)
        if real is None:
            real = self._real[uri] = os.path.realpath(str(uri_to_path(uri)))
        return real

    def shown(self, uri: str) -> str:
        """The file ``uri`` names as the model sees it: workspace-relative inside the workspace."""
        return shown_real(self.real(uri), self._root)


def position(client: LspClient, lines: list[str], pos: Any) -> tuple[int, int]:
    """A server ``Position`` as the model's (line, column), both 1-based, in the text of ``lines``."""
    pos = json_dict(pos)
    line, character = pos.get("line"), pos.get("character")
    if type(line) is not int or not 0 <= line <= _INT_LIMIT:  # the usual case needs no conversion
        line = max(0, json_int(line))
    if type(character) is not int or not 0 <= character <= _INT_LIMIT:
        character = max(0, json_int(character))
    text = lines[line] if line < len(lines) else ""
    return line + 1, to_model_column(text, character, client.position_encoding)


def locations(client: LspClient, result: Any, files: Files | None = None) -> list[JsonObject]:
    """``Location``, ``Location[]`` or ``LocationLink[]`` as ``{path, line, column, end_line, end_column, text}``."""
    items = result if isinstance(result, list) else [result] if isinstance(result, dict) else []
    files = files or Files(client)
    out: list[JsonObject] = []
    for item in items:
        if not isinstance(item, dict):
            continue
        uri = item.get("targetUri") or item.get("uri")
        rng = item.get("targetSelectionRange") or item.get("range")
        if not isinstance(uri, str) or not isinstance(rng, dict):
            continue
        lines = files.lines(uri)
        line, column = position(client, lines, rng.get("start"))
        end_line, end_column = position(client, lines, rng.get("end"))
        out.append(
            {
                "path": files.shown(uri),
                "line": line,
                "column": column,
                "end_line": end_line,
                "end_column": end_column,
                "text": lines[line - 1].strip() if line <= len(lines) else "",
            }
        )
    return out


def location_lines(items: list[JsonObject]) -> list[str]:
    lines = [f"{i['path']}:{i['line']}:{i['column']}: {i['text']}" for i in items[:MAX_ITEMS]]
    if len(items) > MAX_ITEMS:
        lines.append(f"... and {len(items) - MAX_ITEMS} more")
    return lines


def hover_text(result: Any) -> str:
    if not isinstance(result, dict):
        return ""
    contents = result.get("contents")
    parts = contents if isinstance(contents, list) else [contents]
    texts: list[str] = []
    for part in parts:
        if isinstance(part, str):
            texts.append(part)
        elif isinstance(part, dict) and isinstance(part.get("value"), str):
            language = part.get("language")
            texts.append(f"```{language}\n{part['value']}\n```" if language else part["value"])
    return "\n\n".join(t.strip() for t in texts if t.strip())


def symbols(client: LspClient, found: list[FoundSymbol]) -> list[JsonObject]:
    files = Files(client)
    out: list[JsonObject] = []
    for symbol in found:
        lines = files.lines(symbol.uri)
        line, column = position(client, lines, {"line": symbol.line, "character": symbol.character})
        out.append(
            {
                "name": symbol.name,
                "qualified_name": ".".join(symbol.qualified),
                "kind": symbol.kind,
                "path": files.shown(symbol.uri),
                "line": line,
                "column": column,
                "depth": symbol.depth,
                "detail": symbol.detail,
            }
        )
    return out


def symbol_lines(items: list[JsonObject], *, with_path: bool) -> list[str]:
    lines = []
    for item in items[:MAX_ITEMS]:
        where = f"{item['path']}:{item['line']}:{item['column']}" if with_path else f"{item['line']}:{item['column']}"
        lines.append(f"{'  ' * int(item['depth'])}{item['kind']} {item['qualified_name']}  {where}")
    if len(items) > MAX_ITEMS:
        lines.append(f"... and {len(items) - MAX_ITEMS} more")
    return lines


def diagnostics(client: LspClient, uri: str, items: list[JsonObject]) -> list[JsonObject]:
    files = Files(client)
    lines = files.lines(uri)
    path = files.shown(uri)
    out: list[JsonObject] = []
    for item in items:
        if not isinstance(item, dict):
            continue
        rng = json_dict(item.get("range"))
        line, column = position(client, lines, rng.get("start"))
        code = item.get("code")
        out.append(
            {
                "path": path,
                "line": line,
                "column": column,
                "severity": _SEVERITIES.get(json_int(item.get("severity"), 1), "error"),
                "message": str(item.get("message", "")),
                "source": item.get("source"),
                "code": code if isinstance(code, str | int) else None,
            }
        )
    return sorted(out, key=lambda d: (d["line"], d["column"]))


def diagnostic_lines(items: list[JsonObject]) -> list[str]:
    lines = []
    for d in items:
        origin = "/".join(str(p) for p in (d["source"], d["code"]) if p)
        lines.append(
            f"{d['path']}:{d['line']}:{d['column']}: {d['severity']}: {d['message']}"
            + (f" [{origin}]" if origin else "")
        )
    return lines


def _offset(plain: list[str], lines: list[str], pos: Any, client: LspClient) -> int:
    line, column = position(client, plain, pos)
    return sum(len(lines[i]) for i in range(min(line - 1, len(lines)))) + column - 1


def _apply(client: LspClient, text: str, edits: list[JsonObject]) -> str:
    lines = split_lines(text, keepends=True)
    plain = [line.rstrip("\r\n") for line in lines]
    spans = []
    for edit in edits:
        rng = json_dict(edit.get("range"))
        spans.append(
            (
                _offset(plain, lines, rng.get("start"), client),
                _offset(plain, lines, rng.get("end"), client),
                str(edit.get("newText", "")),
            )
        )
    for start, end, new in sorted(spans, key=lambda s: (s[0], s[1]), reverse=True):
        text = text[:start] + new + text[end:]
    return text


def rename_preview(client: LspClient, edit: Any) -> list[JsonObject]:
    """A ``WorkspaceEdit`` as per-file line changes ``{path, changes: [{line, old, new}]}``; nothing is written."""
    per_uri: dict[str, list[JsonObject]] = {}
    if isinstance(edit, dict):
        for uri, edits in json_dict(edit.get("changes")).items():
            per_uri.setdefault(uri, []).extend(e for e in json_list(edits) if isinstance(e, dict))
        for change in json_list(edit.get("documentChanges")):
            if isinstance(change, dict) and isinstance(change.get("textDocument"), dict):
                uri = change["textDocument"].get("uri")
                if isinstance(uri, str):
                    per_uri.setdefault(uri, []).extend(e for e in json_list(change.get("edits")) if isinstance(e, dict))
    shown = Files(client)
    files: list[JsonObject] = []
    for uri, edits in sorted(per_uri.items()):
        old = client.text_of(uri)
        new = _apply(client, old, edits)
        old_lines, new_lines = split_lines(old), split_lines(new)
        changes: list[JsonObject] = []
        matcher = difflib.SequenceMatcher(a=old_lines, b=new_lines, autojunk=False)
        for tag, a1, a2, b1, b2 in matcher.get_opcodes():
            if tag == "equal":
                continue
            for offset in range(max(a2 - a1, b2 - b1)):
                changes.append(
                    {
                        "line": a1 + offset + 1,
                        "old": old_lines[a1 + offset] if a1 + offset < a2 else None,
                        "new": new_lines[b1 + offset] if b1 + offset < b2 else None,
                    }
                )
        if changes:
            files.append({"path": shown.shown(uri), "changes": changes})
    return files


def rename_lines(files: list[JsonObject]) -> list[str]:
    lines = []
    for file in files:
        for change in file["changes"]:
            if change["old"] is not None:
                lines.append(f"{file['path']}:{change['line']}: - {change['old'].strip()}")
            if change["new"] is not None:
                lines.append(f"{file['path']}:{change['line']}: + {change['new'].strip()}")
    return lines


_TRACE_LINE = re.compile(r"^\s*(at\s|File \"|Traceback \(most recent call last\)|\^+$|~+$)")


def server_error_text(message: str, limit: int = 300) -> str:
    """What a server's error says, without its stack trace: the lines before the first frame (a Python traceback
    gives its last line, the exception), on one line, at most ``limit`` characters."""
    lines = [line.strip() for line in message.splitlines() if line.strip()]
    if lines and lines[0].startswith("Traceback"):
        lines = [line for line in lines if not _TRACE_LINE.match(line)][-1:]
    kept: list[str] = []
    for line in lines:
        if _TRACE_LINE.match(line):
            break
        kept.append(line)
    text = " ".join(kept) or "no message"
    return text if len(text) <= limit else text[: limit - 1] + "…"
