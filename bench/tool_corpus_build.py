"""Build the tool-search corpus (tests/search/corpus/tools.jsonl) from real MCP servers' tool definitions.

Sources, each a fact (a tool's name, description and parameters) as its server publishes it:

- ``--local FILE``: ``kairox tools list --json`` of a workspace running the servers the project installs
  (server-everything, the catalog's filesystem and memory servers, a language server, a debug adapter), which
  also lists Kairox's own built-in, LSP and DAP tools;
- ``--github-mcp-server DIR``: a checkout of github/github-mcp-server; its ``pkg/github/__toolsnaps__/*.snap``
  files are the exact tool definitions the server sends;
- ``--playwright-mcp DIR``: a checkout of microsoft/playwright-mcp; its README's generated tool list;
- ``--fastmcp NAME=DIR[:NAMESPACE]``: Python servers written with FastMCP (``@mcp.tool``): the decorated
  functions' names, docstrings and ``Field(description=...)`` parameters, read with ``ast`` (nothing is run).

Run: .venv/bin/python bench/tool_corpus_build.py --local tools.json --github-mcp-server DIR ... > corpus.jsonl
"""

import argparse
import ast
import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

Tool = dict[str, Any]


def _git_files(repo: Path, pattern: str) -> list[str]:
    out = subprocess.run(
        ["git", "-C", str(repo), "ls-files", pattern], capture_output=True, text=True, check=True
    ).stdout
    if not out.strip():  # a bare mirror: read the tree of HEAD
        out = subprocess.run(
            ["git", "-C", str(repo), "ls-tree", "-r", "--name-only", "HEAD"], capture_output=True, text=True, check=True
        ).stdout
        regex = re.compile("^" + re.escape(pattern).replace(r"\*\*/", "(.*/)?").replace(r"\*", "[^/]*") + "$")
        return [line for line in out.splitlines() if regex.match(line)]
    return out.splitlines()


def _git_show(repo: Path, path: str) -> str:
    return subprocess.run(
        ["git", "-C", str(repo), "show", f"HEAD:{path}"], capture_output=True, text=True, check=True
    ).stdout


def local_tools(path: Path) -> list[Tool]:
    listing = json.loads(path.read_text(encoding="utf-8"))
    out = []
    for tool in listing["tools"]:
        origin = tool["origin"] or "kairox"
        name = tool["name"].split("__", 2)[-1] if tool["source"] == "mcp" else tool["name"]
        server = origin if tool["source"] == "mcp" else f"kairox-{tool['source']}"
        source = "kairox" if tool["source"] != "mcp" or name in ("list_resources", "read_resource") else f"npm:{origin}"
        out.append(
            {
                "server": server,
                "name": name,
                "description": tool["description"],
                "input_schema": tool["input_schema"],
                "source": source,
            }
        )
    return out


def github_tools(repo: Path) -> list[Tool]:
    out = []
    for path in sorted(_git_files(repo, "pkg/github/__toolsnaps__/*.snap")):
        snap = json.loads(_git_show(repo, path))
        out.append(
            {
                "server": "github",
                "name": snap["name"],
                "description": snap.get("description", ""),
                "input_schema": snap.get("inputSchema", {}),
                "source": "github/github-mcp-server",
            }
        )
    return out


_PW_TOOL = re.compile(r"^- \*\*(\w+)\*\*\n((?:  .*\n)+)", re.M)
_PW_PARAM = re.compile(r"^    - `(\w+)` \((\w+)(, optional)?\): (.*)$", re.M)


def playwright_tools(repo: Path) -> list[Tool]:
    readme = _git_show(repo, "README.md")
    out = []
    for match in _PW_TOOL.finditer(readme):
        body = match.group(2)
        description = re.search(r"^  - Description: (.*)$", body, re.M)
        title = re.search(r"^  - Title: (.*)$", body, re.M)
        properties: dict[str, Any] = {}
        required = []
        for name, kind, optional, text in _PW_PARAM.findall(body):
            properties[name] = {"type": kind, "description": text}
            if not optional:
                required.append(name)
        schema: dict[str, Any] = {"type": "object", "properties": properties}
        if required:
            schema["required"] = required
        out.append(
            {
                "server": "playwright",
                "name": match.group(1),
                "title": title.group(1) if title else "",
                "description": description.group(1) if description else "",
                "input_schema": schema,
                "source": "microsoft/playwright-mcp",
            }
        )
    return list({t["name"]: t for t in out}.values())


_TYPES = {
    "str": "string",
    "int": "integer",
    "float": "number",
    "bool": "boolean",
    "list": "array",
    "List": "array",
    "dict": "object",
    "Dict": "object",
}


def _json_type(node: ast.expr | None) -> str:
    if isinstance(node, ast.Name):
        return _TYPES.get(node.id, "string")
    if isinstance(node, ast.Subscript):
        base = node.value
        if isinstance(base, ast.Name) and base.id in ("Optional", "Annotated"):
            inner = node.slice.elts[0] if isinstance(node.slice, ast.Tuple) else node.slice
            return _json_type(inner)
        if isinstance(base, ast.Name):
            return _TYPES.get(base.id, "string")
    if isinstance(node, ast.BinOp):  # X | None
        return _json_type(node.left)
    return "string"


def _field_description(node: ast.expr | None) -> str | None:
    if isinstance(node, ast.Call) and getattr(node.func, "id", getattr(node.func, "attr", "")) == "Field":
        for keyword in node.keywords:
            if keyword.arg == "description":
                try:
                    value = ast.literal_eval(keyword.value)
                except ValueError:
                    return None
                return value if isinstance(value, str) else None
    return None


def _docstring_summary(doc: str) -> str:
    """The docstring up to its Args/Returns section: what the server's FastMCP sends as the description
    once the parameters are described in the schema."""
    head = re.split(r"\n\s*(Args|Arguments|Parameters|Returns|Raises|Example|Examples)\s*:", doc, maxsplit=1)[0]
    return " ".join(head.split())


def fastmcp_tools(server: str, repo: Path, namespace: str, source: str, pattern: str = "**/*.py") -> list[Tool]:
    out = []
    for path in _git_files(repo, pattern):
        if "/tests/" in f"/{path}" or not path.endswith(".py"):
            continue
        text = _git_show(repo, path)
        if ".tool(" not in text:
            continue
        try:
            tree = ast.parse(text)
        except SyntaxError:
            continue
        for node in ast.walk(tree):
            if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                continue
            decorator = next(
                (
                    d
                    for d in node.decorator_list
                    if isinstance(d, ast.Call) and getattr(d.func, "attr", getattr(d.func, "id", "")) == "tool"
                ),
                None,
            )
            if decorator is None:
                continue
            name, description = node.name, None
            for keyword in decorator.keywords:
                if (
                    keyword.arg in ("name", "description")
                    and isinstance(keyword.value, ast.Constant)
                    and isinstance(keyword.value.value, str)
                ):
                    if keyword.arg == "name":
                        name = keyword.value.value
                    else:
                        description = keyword.value.value
            description = description or _docstring_summary(ast.get_docstring(node) or "")
            properties: dict[str, Any] = {}
            required = []
            args = node.args.args + node.args.kwonlyargs
            defaults: list[ast.expr | None] = (
                [None] * (len(node.args.args) - len(node.args.defaults))
                + list(node.args.defaults)
                + list(node.args.kw_defaults)
            )
            for arg, default in zip(args, defaults, strict=True):
                if arg.arg in ("self", "ctx", "context") or (
                    isinstance(arg.annotation, ast.Name) and arg.annotation.id == "Context"
                ):
                    continue
                annotation = arg.annotation
                text_of = None
                if (
                    isinstance(annotation, ast.Subscript)
                    and isinstance(annotation.value, ast.Name)
                    and annotation.value.id == "Annotated"
                ):
                    parts = annotation.slice.elts if isinstance(annotation.slice, ast.Tuple) else [annotation.slice]
                    text_of = next((d for d in (_field_description(p) for p in parts[1:]) if d), None)
                text_of = text_of or _field_description(default)
                prop: dict[str, Any] = {"type": _json_type(annotation)}
                if text_of:
                    prop["description"] = text_of
                properties[arg.arg] = prop
                if default is None:
                    required.append(arg.arg)
            schema: dict[str, Any] = {"type": "object", "properties": properties}
            if required:
                schema["required"] = required
            full = f"{namespace}_{name}" if namespace else name
            if description:
                out.append(
                    {
                        "server": server,
                        "name": full,
                        "description": description,
                        "input_schema": schema,
                        "source": source,
                    }
                )
    return list({t["name"]: t for t in out}.values())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--local", type=Path)
    parser.add_argument("--github-mcp-server", type=Path)
    parser.add_argument("--playwright-mcp", type=Path)
    parser.add_argument("--fastmcp", action="append", default=[], help="SERVER=DIR:NAMESPACE:SOURCE:GLOB")
    args = parser.parse_args()
    tools: list[Tool] = []
    if args.local:
        tools += local_tools(args.local)
    if args.github_mcp_server:
        tools += github_tools(args.github_mcp_server)
    if args.playwright_mcp:
        tools += playwright_tools(args.playwright_mcp)
    for spec in args.fastmcp:
        server, rest = spec.split("=", 1)
        directory, namespace, source, pattern = rest.split(":", 3)
        tools += fastmcp_tools(server, Path(directory), namespace, source, pattern)
    seen: set[tuple[str, str]] = set()
    for tool in tools:
        key = (tool["server"], tool["name"])
        if key in seen:
            continue
        seen.add(key)
        sys.stdout.write(json.dumps(tool, ensure_ascii=False, sort_keys=True) + "\n")


if __name__ == "__main__":
    main()
