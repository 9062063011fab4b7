"""Symbols: flattening a server's document symbols, and resolving a dotted name (``Greeter.greet``) to the
position of its identifier through document symbols, workspace symbols, or a scan of the workspace."""

import os
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kairox._util._json import json_dict, json_int
from kairox.lsp._client import LspClient
from kairox.lsp._errors import LspLocationError
from kairox.lsp._files import read_text
from kairox.lsp._text import display_path, matches_pattern, path_to_uri, relative_real, uri_to_path

SYMBOL_KINDS = {
    1: "file", 2: "module", 3: "namespace", 4: "package", 5: "class", 6: "method", 7: "property", 8: "field",
    9: "constructor", 10: "enum", 11: "interface", 12: "function", 13: "variable", 14: "constant", 15: "string",
    16: "number", 17: "boolean", 18: "array", 19: "object", 20: "key", 21: "null", 22: "enum_member",
    23: "struct", 24: "event", 25: "operator", 26: "type_parameter",
}  # fmt: skip

_SKIPPED_DIRS = {".git", ".hg", ".svn", ".venv", "venv", "node_modules", "__pycache__", ".mypy_cache", ".tox"}
_SCAN_LIMIT = 40


@dataclass(frozen=True, kw_only=True, slots=True)
class FoundSymbol:
    """A symbol with the server position (0-based line, server code units) of its identifier."""

    name: str
    qualified: tuple[str, ...]
    kind: str
    uri: str
    line: int
    character: int
    detail: str = ""
    depth: int = 0


def _identifier_at(lines: list[str], name: str, start: dict[str, Any], end: dict[str, Any] | None) -> tuple[int, int]:
    """Where ``name`` is written inside a range that covers a whole definition (``class Greeter: ...``)."""
    line0, char0 = max(0, json_int(start.get("line"))), max(0, json_int(start.get("character")))
    last = json_int(end.get("line"), line0) if end else line0
    pattern = re.compile(rf"(?<![\w]){re.escape(name)}(?![\w])")
    for number in range(line0, min(last, line0 + 50) + 1):
        line = lines[number] if number < len(lines) else ""
        match = pattern.search(line, char0 if number == line0 else 0)
        if match:
            return number, match.start()
    return line0, char0


def flatten_symbols(client: LspClient, uri: str, result: Any) -> list[FoundSymbol]:
    """Document symbols (hierarchical ``DocumentSymbol`` or flat ``SymbolInformation``) as a flat list.

    Characters are still in the server's encoding; for flat symbols they point at the identifier.
    """
    found: list[FoundSymbol] = []
    lines = client.lines_of(uri)

    def walk(items: list[Any], parents: tuple[str, ...]) -> None:
        for item in items:
            if not isinstance(item, dict) or not isinstance(item.get("name"), str):
                continue
            name, kind = item["name"], SYMBOL_KINDS.get(json_int(item.get("kind")), "symbol")
            if "selectionRange" in item or "range" in item:
                start = json_dict(json_dict(item.get("selectionRange") or item.get("range")).get("start"))
                line, character = max(0, json_int(start.get("line"))), max(0, json_int(start.get("character")))
                qualified = (*parents, name)
                item_uri = uri
            else:
                location = json_dict(item.get("location"))
                found_uri = location.get("uri")
                item_uri = found_uri if isinstance(found_uri, str) else uri
                rng = json_dict(location.get("range"))
                item_lines = lines if item_uri == uri else client.lines_of(item_uri)
                end = rng.get("end")
                line, character = _identifier_at(
                    item_lines, name, json_dict(rng.get("start")), end if isinstance(end, dict) else None
                )
                container = str(item.get("containerName") or "")
                containers = [p for p in re.split(r"[.:]+", container) if p]
                if containers and containers[-1] == name:  # some servers put the symbol in its own container
                    containers.pop()
                qualified = (*containers, name)
            found.append(
                FoundSymbol(
                    name=name,
                    qualified=qualified,
                    kind=kind,
                    uri=item_uri,
                    line=line,
                    character=character,
                    detail=str(item.get("detail") or ""),
                    depth=len(parents),
                )
            )
            children = item.get("children")
            if isinstance(children, list):
                walk(children, (*parents, name))

    walk(result if isinstance(result, list) else [], ())
    return found


def split_symbol(name: str) -> tuple[str, ...]:
    parts = tuple(p for p in re.split(r"\.|::|#", name.strip()) if p)
    if not parts:
        raise LspLocationError(f"symbol name {name!r} is empty", hint="give a name such as `Greeter.greet`")
    return parts


def _best(symbols: list[FoundSymbol], parts: tuple[str, ...]) -> FoundSymbol | None:
    matches = [s for s in symbols if s.name == parts[-1] and s.qualified[-len(parts) :] == parts]
    if not matches:
        return None
    # prefer the shortest qualified path (the symbol itself, not a same-named member deeper down)
    return min(matches, key=lambda s: (len(s.qualified), s.line))


async def document_symbols(client: LspClient, path: Path) -> list[FoundSymbol]:
    document = await client.sync_document(path)
    result = await client.request("textDocument/documentSymbol", {"textDocument": {"uri": document.uri}})
    return flatten_symbols(client, document.uri, result)


def _candidate_files(root: Path, patterns: list[str], word: str, readable: Callable[[Path], bool]) -> Iterator[Path]:
    pattern = re.compile(rf"\b{re.escape(word)}\b")
    seen = 0
    for folder, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d not in _SKIPPED_DIRS and not d.startswith("."))
        for name in sorted(files):
            path = Path(folder) / name
            relative = relative_real(os.path.realpath(path), os.path.realpath(root))
            if patterns and not any(matches_pattern(relative, p) for p in patterns):
                continue
            if not readable(path):  # a file the read rules forbid is neither read nor shown to the server
                continue
            try:
                if pattern.search(read_text(str(path))):  # a regular file only: a FIFO would hold the loop
                    seen += 1
                    yield path
            except OSError:
                continue
            if seen >= _SCAN_LIMIT:
                return


async def resolve_symbol(
    client: LspClient, name: str, file: Path | None, *, readable: Callable[[Path], bool] = lambda _: True
) -> FoundSymbol:
    """The position of the identifier of ``name`` (``Greeter.greet``), in ``file`` or anywhere in the workspace.

    Files for which ``readable`` is False (the read rules) are never opened on the server.
    """
    parts = split_symbol(name)
    if file is not None:
        symbols = await document_symbols(client, file)
        found = _best(symbols, parts)
        if found is None:
            names = sorted({".".join(s.qualified) for s in symbols})[:20]
            raise LspLocationError(
                f"no symbol {name!r} in {display_path(file, client.workspace)}",
                hint="symbols there: " + (", ".join(names) if names else "none"),
            )
        return found
    searched: set[str] = set()
    if client.supports("workspaceSymbolProvider"):
        result = await client.request("workspace/symbol", {"query": parts[-1]})
        for item in result if isinstance(result, list) else []:
            location = item.get("location") if isinstance(item, dict) else None
            if item.get("name") != parts[-1] or not isinstance(location, dict) or "uri" not in location:
                continue
            uri = location["uri"]
            if uri in searched or not readable(uri_to_path(uri)):
                continue
            searched.add(uri)
            found = _best(await document_symbols(client, uri_to_path(uri)), parts)
            if found is not None:
                return found
    for path in _candidate_files(client.workspace, list(client.config.file_patterns), parts[-1], readable):
        if path_to_uri(path) in searched:
            continue
        found = _best(await document_symbols(client, path), parts)
        if found is not None:
            return found
    raise LspLocationError(
        f"no symbol {name!r} found in the workspace by language server {client.name!r}",
        hint="check the spelling, or give `path` (and `line`/`column`) instead",
    )
