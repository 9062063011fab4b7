"""The LSP tools as the model sees them: names, descriptions, input schemas, permission profile."""

from kairox._util._json import JsonObject
from kairox.tools import Access, PermissionProfile, ToolAnnotations, ToolSource, ToolSpec, object_schema

LSP_PERMISSION = PermissionProfile(access=Access.READ, path_args=("path",))
"""Every LSP tool only reads: ``lsp.rename`` returns edits as a preview and writes nothing."""

_FILE: JsonObject = {"type": "string", "description": "File path, relative to the workspace or absolute."}
_LOCATION: dict[str, JsonObject] = {
    "path": _FILE,
    "line": {"type": "integer", "minimum": 1, "description": "1-based line in `path`."},
    "column": {
        "type": "integer",
        "minimum": 1,
        "description": "1-based character column on `line`; default: the first non-blank character.",
    },
    "symbol": {
        "type": "string",
        "description": "A symbol name instead of a position, e.g. `Greeter.greet`; with `path`, looked up there.",
    },
}
_LOCATION_HELP = " Give `path` + `line` (+ `column`), or `symbol` (optionally with `path`)."


def _spec(name: str, description: str, properties: dict[str, JsonObject], required: list[str]) -> ToolSpec:
    return ToolSpec(
        name=name,
        description=description,
        input_schema=object_schema(properties, required),
        source=ToolSource.LSP,
        permission=LSP_PERMISSION,
        origin="lsp",
        annotations=ToolAnnotations(read_only_hint=True, destructive_hint=False, open_world_hint=False),
    )


def lsp_tool_specs() -> list[ToolSpec]:
    return [
        _spec(
            "lsp.definition",
            "Where the symbol at a location is defined (path:line:col and the line)." + _LOCATION_HELP,
            dict(_LOCATION),
            [],
        ),
        _spec(
            "lsp.references",
            "Every use of the symbol at a location across the workspace." + _LOCATION_HELP,
            {
                **_LOCATION,
                "include_declaration": {
                    "type": "boolean",
                    "description": "Also list the declaration itself (default true).",
                },
            },
            [],
        ),
        _spec(
            "lsp.hover",
            "Signature, type and documentation of the symbol at a location." + _LOCATION_HELP,
            dict(_LOCATION),
            [],
        ),
        _spec(
            "lsp.document_symbols",
            "Classes, functions and other symbols of a file, nested, with their positions.",
            {"path": _FILE},
            ["path"],
        ),
        _spec(
            "lsp.workspace_symbols",
            "Symbols anywhere in the workspace whose name matches a query (where the server supports it).",
            {
                "query": {"type": "string", "description": "Name or part of a name."},
                "server": {
                    "type": "string",
                    "description": "Language server to ask; default: the first one.",
                },
            },
            ["query"],
        ),
        _spec(
            "lsp.implementation",
            "Implementations of the interface, abstract method or class at a location." + _LOCATION_HELP,
            dict(_LOCATION),
            [],
        ),
        _spec(
            "lsp.call_hierarchy",
            "Who calls the function at a location (incoming) or what it calls (outgoing)." + _LOCATION_HELP,
            {
                **_LOCATION,
                "direction": {
                    "type": "string",
                    "enum": ["incoming", "outgoing"],
                    "description": "incoming (callers, default) or outgoing (callees).",
                },
            },
            [],
        ),
        _spec(
            "lsp.diagnostics",
            "Errors and warnings the language server reports for a file (undefined names, syntax errors ...).",
            {"path": _FILE},
            ["path"],
        ),
        _spec(
            "lsp.rename",
            "Preview of renaming the symbol at a location: every line that would change, in every file. "
            "Writes nothing; apply the edits with fs.edit." + _LOCATION_HELP,
            {**_LOCATION, "new_name": {"type": "string", "description": "The new name."}},
            ["new_name"],
        ),
    ]
