"""Every loader of outside input, with a strategy for its input and a check that it never crashes.

Shared by the fuzz tests (``tests/fuzz``, a few hundred examples each in CI) and ``bench/fuzz_long.py`` (10^5
inputs). A check writes its input where the loader reads it, runs the loader as Kairox does and asserts that
the outcome is data (a result and diagnostics), never an exception; a hostile input must come back as a
diagnostic that names its file (and line, where the loader knows one).
"""

import asyncio
import json
import shutil
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import mcp_types
from hypothesis import strategies as st

from kairox._rpc._framing import FramingProblem, MessageReader
from kairox.config import LspServerConfig, resolve_config
from kairox.config._mcp_json import read_mcp_json
from kairox.dap._session import evaluation, frame_record, scope_records, variable_records
from kairox.errors import Severity
from kairox.lsp._client import LspClient
from kairox.lsp._render import diagnostics as lsp_diagnostics
from kairox.lsp._render import hover_text, locations, rename_preview
from kairox.lsp._symbols import flatten_symbols
from kairox.mcp._content import WireError, result_from_wire, tools_page
from kairox.mcp._schemas import schema_problem
from kairox.plugins import PluginOrigin, load_plugin
from kairox.plugins._catalog import read_marketplace
from kairox.skills._parse import parse_skill_text

# --- building blocks ----------------------------------------------------------------------------------------

SCALARS = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=False)
    | st.text(max_size=20)
    | st.sampled_from(["", "\x00", "../../etc", "/etc/passwd", "${KAIROX_PLUGIN_ROOT}/x", "a\x00b", "é", "\ufeff"])
)
JSON = st.recursive(
    SCALARS,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=12), inner, max_size=4),
    max_leaves=20,
)
DEPTH = st.sampled_from([63, 64, 65, 100, 400, 3000])
DIGITS = st.sampled_from([4299, 4300, 4301, 5000])


def deep(depth: int, opening: str = "[") -> str:
    closing = "]" if opening == "[" else "}"
    if opening == "{":
        return '{"a":' * depth + "1" + closing * depth
    return opening * depth + closing * depth


@st.composite
def json_text(draw: st.DrawFn, shape: st.SearchStrategy[Any] = JSON) -> str:
    """JSON of ``shape``, sometimes with a hostile fragment spliced in, sometimes cut or with a stray byte."""
    value = draw(shape)
    text = json.dumps(value, indent=draw(st.sampled_from([None, 2])))
    how = draw(st.sampled_from(["plain", "plain", "deep", "deep_object", "digits", "nul", "cut", "byte"]))
    if how in ("deep", "deep_object", "digits", "nul") and isinstance(value, dict):
        fragment = {
            "deep": lambda: deep(draw(DEPTH)),
            "deep_object": lambda: deep(draw(DEPTH), "{"),
            "digits": lambda: "9" * draw(DIGITS),
            "nul": lambda: json.dumps("./a\x00b"),
        }[how]()
        key = draw(st.sampled_from(sorted(value) or ["x"]))
        replaced = dict(value, **{key: "@@HOSTILE@@"})
        text = json.dumps(replaced, indent=2).replace('"@@HOSTILE@@"', fragment)
    elif how == "cut" and text:
        text = text[: draw(st.integers(0, len(text) - 1))]
    elif how == "byte":
        at = draw(st.integers(0, len(text)))
        text = text[:at] + draw(st.sampled_from(["\x00", "{", "]", ",", '"', "\\", "\n"])) + text[at:]
    return text


PATHS = (
    st.sampled_from(["./skills", "skills", "./commands", "./hooks/hooks.json", "./.mcp.json", "./missing"]) | SCALARS
)
PLUGIN_MANIFEST = st.fixed_dictionaries(
    {},
    optional={
        "name": st.sampled_from(["p", "good-plugin", "", ".hidden", "a/b"]) | SCALARS,
        "version": st.sampled_from(["1.0.0", "x"]) | SCALARS,
        "description": SCALARS,
        "skills": PATHS | st.lists(PATHS, max_size=3),
        "commands": PATHS | st.lists(PATHS, max_size=3),
        "agents": PATHS,
        "hooks": PATHS | JSON,
        "mcpServers": PATHS | st.dictionaries(st.text(max_size=8), JSON, max_size=3),
        "lspServers": PATHS | JSON,
        "tools": st.lists(
            st.fixed_dictionaries({"name": SCALARS, "command": SCALARS}, optional={"args": JSON}), max_size=2
        )
        | JSON,
        "permissions": JSON,
        "compatibility": JSON,
        "trust": SCALARS,
    },
)
SERVER_ENTRY = st.fixed_dictionaries(
    {},
    optional={
        "command": SCALARS,
        "args": st.lists(SCALARS, max_size=3) | SCALARS,
        "env": st.dictionaries(st.text(max_size=6), SCALARS, max_size=2) | SCALARS,
        "url": SCALARS,
        "type": st.sampled_from(["stdio", "http", "sse", "streamable_http", "x"]) | SCALARS,
        "headers": JSON,
        "max_tools": SCALARS,
    },
)
MCP_JSON = (
    st.fixed_dictionaries({"mcpServers": st.dictionaries(st.text(max_size=10), SERVER_ENTRY | JSON, max_size=3)}) | JSON
)
HOOK_ENTRY = st.fixed_dictionaries({}, optional={"type": SCALARS, "command": SCALARS, "timeout": SCALARS})
HOOKS_JSON = (
    st.fixed_dictionaries(
        {},
        optional={
            "hooks": st.dictionaries(
                st.sampled_from(["PreToolUse", "PostToolUse", "SessionStart", "Stop", "x"]) | st.text(max_size=8),
                st.lists(
                    st.fixed_dictionaries(
                        {}, optional={"matcher": SCALARS, "hooks": st.lists(HOOK_ENTRY, max_size=2) | JSON}
                    ),
                    max_size=2,
                )
                | JSON,
                max_size=3,
            ),
            "description": SCALARS,
        },
    )
    | JSON
)
MARKETPLACE = (
    st.fixed_dictionaries(
        {},
        optional={
            "name": SCALARS,
            "owner": JSON,
            "plugins": st.lists(
                st.fixed_dictionaries({}, optional={"name": SCALARS, "source": SCALARS | JSON, "version": SCALARS}),
                max_size=3,
            )
            | JSON,
        },
    )
    | JSON
)

TOML_VALUES = st.sampled_from(
    ['"text"', "1", "true", "[1, 2]", "{ a = 1 }", "[[[1]]]", '"a\\u0000b"', "1979-05-27", "inf", "0x10", '"""x\ny"""']
)
TOML_KEYS = st.sampled_from(
    [
        "model",
        "policy.approval_policy",
        "policy.rules.allow",
        "mcp_servers.a.command",
        "mcp_servers.a.args",
        "mcp_servers.a.max_tools",
        "plugins.paths",
        "skills.dirs",
        "hooks.pre_tool_use",
        "tools.output_limit_chars",
        "lsp_servers.x.command",
        "profile",
        "x.y.z",
        '"quoted key"',
    ]
)


@st.composite
def toml_text(draw: st.DrawFn) -> str:
    lines = [f"{draw(TOML_KEYS)} = {draw(TOML_VALUES)}" for _ in range(draw(st.integers(0, 5)))]
    if draw(st.booleans()):
        lines.insert(draw(st.integers(0, len(lines))), f"[{draw(TOML_KEYS)}]")
    how = draw(st.sampled_from(["plain", "deep", "deep_table", "dotted", "digits", "noise", "text"]))
    if how == "deep":
        lines.append(f"deep = {deep(draw(DEPTH))}")
    elif how == "deep_table":
        depth = draw(DEPTH)
        lines.append("deep = " + "{ a = " * depth + "1" + " }" * depth)
    elif how == "dotted":
        lines.append("a." * draw(DEPTH) + "b = 1")
    elif how == "digits":
        lines.append(f"big = {'9' * draw(DIGITS)}")
    elif how == "noise":
        lines.insert(draw(st.integers(0, len(lines))), draw(st.text(max_size=30)))
    elif how == "text":
        return draw(st.text(max_size=200))
    return "\n".join(lines) + "\n"


YAML_VALUES = st.sampled_from(
    [
        "plain",
        "'quoted'",
        '"dq"',
        "[a, b]",
        "{a: 1}",
        "&a [*a]",
        "*missing",
        "a: b: c",
        "|\n  block",
        "!!python/object:os.system x",
        "2020-01-01",
        "0x1F",
        "~",
        "- a\n- b",
    ]
)


@st.composite
def skill_text(draw: st.DrawFn) -> str:
    keys = ["name", "description", "allowed-tools", "metadata", "arguments", "when_to_use", "x"]
    lines = [f"{draw(st.sampled_from(keys))}: {draw(YAML_VALUES)}" for _ in range(draw(st.integers(0, 5)))]
    how = draw(st.sampled_from(["plain", "deep", "deep_map", "digits", "aliases", "noise", "text"]))
    if how == "deep":
        lines.append(f"deep: {deep(draw(DEPTH))}")
    elif how == "deep_map":
        lines.append("deep: " + "{a: " * draw(DEPTH) + "1" + "}" * draw(DEPTH))
    elif how == "digits":
        lines.append(f"big: {'9' * draw(DIGITS)}")
    elif how == "aliases":
        lines += [
            'a: &a ["x","x","x","x","x","x","x","x","x"]',
            "b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]",
            "c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]",
            "d: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]",
            "e: [*d,*d,*d,*d,*d,*d,*d,*d,*d]",
        ]
    elif how == "noise":
        lines.insert(draw(st.integers(0, len(lines))), draw(st.text(max_size=30)))
    elif how == "text":
        return draw(st.text(max_size=200))
    fence = draw(st.sampled_from(["---", "---", "--- ", "...", ""]))
    return "---\n" + "\n".join(lines) + f"\n{fence}\nBody.\n"


# --- checks ---------------------------------------------------------------------------------------------------


def _reset(folder: Path) -> Path:
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    return folder


def _hostile(text: str) -> bool:
    """Whether ``text`` holds a fragment past the limits: it sits one level down, so 64 more levels are too many."""
    return "[" * 64 in text or '{"a":' * 64 in text or "{ a = " * 64 in text or "9" * 4301 in text


_PATH_FIELDS = ("skills", "commands", "agents", "hooks", "mcpServers", "lspServers")


def _nul_in_path_field(text: str) -> bool:
    """Whether a path field of a (readable) manifest names a path with a NUL byte."""
    if _hostile(text):
        return False
    try:
        data = json.loads(text)
    except ValueError:
        return False
    if not isinstance(data, dict):
        return False
    for field in _PATH_FIELDS:
        value = data.get(field)
        paths = (
            [value]
            if isinstance(value, str)
            else value
            if field in ("skills", "commands") and isinstance(value, list)
            else []
        )
        if any(isinstance(path, str) and "\x00" in path for path in paths):
            return True
    return False


def check_toml_config(text: str, scratch: Path) -> None:
    workspace = _reset(scratch / "ws")
    (workspace / ".git").mkdir()
    (workspace / "kairox.toml").write_text(text, encoding="utf-8")
    home = _reset(scratch / "home")
    resolved = resolve_config(
        workspace, env={"KAIROX_HOME": str(home), "KAIROX_SYSTEM_CONFIG": str(home / "none.toml")}
    )
    for problem in resolved.problems:
        assert problem.file and problem.message
    if _hostile(text) or "a." * 64 in text:
        assert any(p.file == str(workspace / "kairox.toml") and p.line for p in resolved.problems), resolved.problems


def check_frontmatter(text: str, scratch: Path) -> None:
    path = scratch / "skill" / "SKILL.md"
    outcome = parse_skill_text(text, path)
    assert outcome.skill is not None or any(
        d.severity is Severity.ERROR and d.source == str(path) for d in outcome.diagnostics
    )


def _plugin_folder(scratch: Path) -> Path:
    root = _reset(scratch / "plugin")
    (root / ".claude-plugin").mkdir()
    (root / "skills" / "s").mkdir(parents=True)
    (root / "skills" / "s" / "SKILL.md").write_text("---\nname: s\ndescription: a skill\n---\nbody\n")
    return root


def check_plugin_manifest(text: str, scratch: Path) -> None:
    root = _plugin_folder(scratch)
    manifest = root / ".claude-plugin" / "plugin.json"
    manifest.write_text(text, encoding="utf-8")
    plugin, diagnostics = load_plugin(root, origin=PluginOrigin.PATH)
    assert plugin is not None or any(d.severity is Severity.ERROR and d.source for d in diagnostics), diagnostics
    if _nul_in_path_field(text):
        assert plugin is None and any(d.source == str(manifest) and d.line for d in diagnostics), diagnostics
    if _hostile(text):
        assert any(d.source == str(manifest) and d.line for d in diagnostics), diagnostics


def check_plugin_contents(text: str, scratch: Path, file: str) -> None:
    """``hooks/hooks.json`` or ``.mcp.json`` inside a plugin (the plugin itself is fine)."""
    root = _plugin_folder(scratch)
    (root / ".claude-plugin" / "plugin.json").write_text('{"name": "p"}')
    target = root / file
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(text, encoding="utf-8")
    plugin, diagnostics = load_plugin(root, origin=PluginOrigin.PATH)
    assert plugin is not None or diagnostics
    if _hostile(text):
        assert any(d.source == str(target) and d.line for d in diagnostics), diagnostics


def check_hooks_json(text: str, scratch: Path) -> None:
    check_plugin_contents(text, scratch, "hooks/hooks.json")


def check_plugin_mcp_json(text: str, scratch: Path) -> None:
    check_plugin_contents(text, scratch, ".mcp.json")


def check_marketplace(text: str, scratch: Path) -> None:
    root = _reset(scratch / "market")
    file = root / ".claude-plugin" / "marketplace.json"
    file.parent.mkdir()
    file.write_text(text, encoding="utf-8")
    marketplace, diagnostics = read_marketplace(file)
    assert marketplace is not None or diagnostics
    if _hostile(text):
        assert marketplace is None and any(d.source == str(file) and d.line for d in diagnostics), diagnostics


def check_mcp_json(text: str, scratch: Path) -> None:
    path = _reset(scratch / "ws") / ".mcp.json"
    path.write_text(text, encoding="utf-8")
    loaded = read_mcp_json(path)
    for diagnostic in loaded.diagnostics:
        assert diagnostic.source == str(path)
    if _hostile(text):
        assert loaded.servers == {} and any(d.line for d in loaded.diagnostics), loaded.diagnostics


# --- server replies -------------------------------------------------------------------------------------------

TOOL = st.fixed_dictionaries(
    {"name": st.text(max_size=8) | SCALARS},
    optional={
        "description": SCALARS,
        "inputSchema": JSON
        | st.sampled_from(
            [
                {"type": "object", "$defs": {"n": {"$ref": "#/$defs/n"}}, "properties": {"a": {"$ref": "#/$defs/n"}}},
                {"type": "object", "allOf": [{"$ref": "#"}]},
                {"type": "object", "properties": {"a": {"$ref": "#/properties/a"}}},
                {"type": "object", "properties": {"kids": {"type": "array", "items": {"$ref": "#"}}}},
                {"type": "object", "properties": {"a": {"$ref": "#/x/~1/%25"}}},
                {"type": "object", "$ref": "#anchor", "$anchor": "anchor"},
            ]
        ),
        "annotations": JSON,
        "outputSchema": JSON,
        "execution": JSON,
    },
)
TOOL_PAGE = (
    st.fixed_dictionaries({"tools": st.lists(TOOL | JSON, max_size=4) | JSON}, optional={"nextCursor": SCALARS}) | JSON
)
CALL_RESULT = st.fixed_dictionaries(
    {
        "content": st.lists(
            st.fixed_dictionaries(
                {"type": st.sampled_from(["text", "image", "audio", "resource", "resource_link", "x"])},
                optional={
                    "text": SCALARS,
                    "data": SCALARS,
                    "mimeType": SCALARS,
                    "uri": SCALARS,
                    "resource": JSON,
                    "name": SCALARS,
                },
            ),
            max_size=3,
        )
    },
    optional={"isError": SCALARS, "structuredContent": JSON},
)


def check_mcp_tool_page(raw: Any, scratch: Path) -> None:
    del scratch
    if isinstance(raw, dict) and isinstance(raw.get("tools"), list):
        found, _cursor = tools_page(raw)
        assert len(found) == len(raw["tools"])
        for item, tool in zip(raw["tools"], found, strict=True):
            # a tool Kairox reads as well formed is one the SDK reads too: the light session is no more lenient
            if tool.problem is None or not tool.problem.startswith("the server listed it"):
                mcp_types.Tool.model_validate(item, by_name=False)
        for item in raw["tools"]:
            schema_problem(item.get("inputSchema") if isinstance(item, dict) else item)


def check_mcp_call_result(raw: Any, scratch: Path) -> None:
    del scratch
    try:
        result = result_from_wire(raw)
    except WireError:
        return  # the call ends as a tool error naming the malformed part
    result.text_content()
    if not any(isinstance(part, dict) and part.get("type", "text") not in _KNOWN_CONTENT for part in raw["content"]):
        # what Kairox accepts, the SDK accepts (Kairox alone keeps a block of an unknown type, as a note)
        mcp_types.CallToolResult.model_validate(raw, by_name=False)


_KNOWN_CONTENT = ("text", "image", "audio", "resource", "resource_link")


LSP_POSITION = st.fixed_dictionaries(
    {}, optional={"line": SCALARS | st.integers(-5, 10**30), "character": SCALARS | st.integers(-5, 10**30)}
)
LSP_RANGE = st.fixed_dictionaries({}, optional={"start": LSP_POSITION | SCALARS, "end": LSP_POSITION | SCALARS})
LSP_LOCATION = st.fixed_dictionaries(
    {},
    optional={
        "uri": st.sampled_from(["file:///nonexistent/a.py", "file://", "x", "file:///%00"]) | SCALARS,
        "range": LSP_RANGE | SCALARS,
        "targetUri": SCALARS,
        "targetSelectionRange": LSP_RANGE | SCALARS,
    },
)
LSP_SYMBOL: st.SearchStrategy[Any] = st.deferred(
    lambda: st.fixed_dictionaries(
        {"name": st.text(max_size=6) | SCALARS},
        optional={
            "kind": SCALARS | st.integers(-2, 40),
            "range": LSP_RANGE | SCALARS,
            "selectionRange": LSP_RANGE | SCALARS,
            "location": LSP_LOCATION | SCALARS,
            "children": st.lists(LSP_SYMBOL, max_size=2) | SCALARS,
        },
    )
)
LSP_REPLY = st.one_of(
    JSON,
    LSP_LOCATION,
    st.lists(LSP_LOCATION, max_size=3),
    st.lists(LSP_SYMBOL, max_size=3),
    st.fixed_dictionaries(
        {},
        optional={
            "contents": JSON | st.lists(st.fixed_dictionaries({"value": SCALARS}, optional={"language": SCALARS}))
        },
    ),
    st.fixed_dictionaries(
        {},
        optional={
            "changes": st.dictionaries(
                SCALARS.filter(lambda v: isinstance(v, str)),
                st.lists(JSON | st.fixed_dictionaries({"range": LSP_RANGE, "newText": SCALARS}), max_size=2) | JSON,
                max_size=2,
            )
            | JSON,
            "documentChanges": JSON,
        },
    ),
    st.lists(
        st.fixed_dictionaries(
            {},
            optional={
                "range": LSP_RANGE | SCALARS,
                "severity": SCALARS,
                "message": SCALARS,
                "source": SCALARS,
                "code": SCALARS,
            },
        ),
        max_size=3,
    ),
)


def _lsp_client(scratch: Path) -> LspClient:
    return LspClient("fuzz", LspServerConfig(command=sys.executable), workspace=scratch)


def check_lsp_reply(raw: Any, scratch: Path) -> None:
    client = _lsp_client(scratch)
    uri = (scratch / "a.py").as_uri()
    locations(client, raw)
    hover_text(raw)
    flatten_symbols(client, uri, raw)
    rename_preview(client, raw)
    lsp_diagnostics(client, uri, raw if isinstance(raw, list) else [])


DAP_BODY = st.one_of(
    JSON,
    st.fixed_dictionaries(
        {},
        optional={
            "id": SCALARS,
            "name": SCALARS,
            "line": SCALARS,
            "column": SCALARS,
            "source": st.fixed_dictionaries({}, optional={"path": SCALARS, "name": SCALARS}) | SCALARS,
        },
    ),
    st.fixed_dictionaries(
        {},
        optional={
            "variables": st.lists(
                st.fixed_dictionaries(
                    {}, optional={"name": SCALARS, "value": SCALARS, "type": SCALARS, "variablesReference": SCALARS}
                ),
                max_size=3,
            )
            | JSON,
            "scopes": st.lists(
                st.fixed_dictionaries(
                    {}, optional={"name": SCALARS, "variablesReference": SCALARS, "expensive": SCALARS}
                ),
                max_size=3,
            )
            | JSON,
            "result": SCALARS,
            "type": SCALARS,
            "variablesReference": SCALARS,
        },
    ),
)


def check_dap_reply(raw: Any, scratch: Path) -> None:
    body = raw if isinstance(raw, dict) else {"value": raw}
    frame_record(body, scratch)
    variable_records(body)
    scope_records(body)
    evaluation(body)


@st.composite
def framed_bytes(draw: st.DrawFn) -> bytes:
    """What an LSP server or DAP adapter writes on stdout: frames, some broken, and noise."""
    out = b""
    for _ in range(draw(st.integers(1, 4))):
        how = draw(st.sampled_from(["frame", "frame", "noise", "bad_length", "negative", "huge", "deep", "digits"]))
        body = json.dumps(draw(JSON)).encode()
        if how == "frame":
            out += b"Content-Length: %d\r\n\r\n%s" % (len(body), body)
        elif how == "noise":
            out += draw(st.binary(max_size=40)) + b"\n"
        elif how == "bad_length":
            out += b"Content-Length: %d\r\n\r\n%s" % (max(0, len(body) + draw(st.integers(-5, 5))), body)
        elif how == "negative":
            out += b"Content-Length: -%d\r\n\r\n" % draw(st.integers(1, 100))
        elif how == "huge":
            out += b"Content-Length: 99999999999999\r\n\r\n" + body
        elif how == "deep":
            text = deep(draw(DEPTH)).encode()
            out += b"Content-Length: %d\r\n\r\n%s" % (len(text), text)
        else:
            text = b"9" * draw(DIGITS)
            out += b"Content-Length: %d\r\n\r\n%s" % (len(text), text)
    return out


def check_framing(data: bytes, scratch: Path) -> None:
    del scratch

    async def read_all() -> None:
        stream = asyncio.StreamReader()
        stream.feed_data(data)
        stream.feed_eof()
        reader = MessageReader(stream)
        for _ in range(100):
            message = await asyncio.wait_for(reader.read(), 5)
            if message is None:
                return
            if isinstance(message, FramingProblem):
                continue
            json.dumps(message)

    asyncio.run(read_all())


@dataclass(frozen=True)
class Loader:
    name: str
    inputs: st.SearchStrategy[Any]
    check: Callable[[Any, Path], None]


LOADERS = (
    Loader("toml_config", toml_text(), check_toml_config),
    Loader("skill_frontmatter", skill_text(), check_frontmatter),
    Loader("plugin_json", json_text(PLUGIN_MANIFEST), check_plugin_manifest),
    Loader("hooks_json", json_text(HOOKS_JSON), check_hooks_json),
    Loader("plugin_mcp_json", json_text(MCP_JSON), check_plugin_mcp_json),
    Loader("marketplace_json", json_text(MARKETPLACE), check_marketplace),
    Loader("mcp_json", json_text(MCP_JSON), check_mcp_json),
    Loader("mcp_tools_list", TOOL_PAGE, check_mcp_tool_page),
    Loader("mcp_call_result", CALL_RESULT | JSON, check_mcp_call_result),
    Loader("lsp_reply", LSP_REPLY, check_lsp_reply),
    Loader("dap_reply", DAP_BODY, check_dap_reply),
    Loader("rpc_framing", framed_bytes(), check_framing),
)
