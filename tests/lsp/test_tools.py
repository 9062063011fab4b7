"""The lsp.* tools against real jedi-language-server and python-lsp-server on a small fixture package."""

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any, NamedTuple

import pytest
from tests._rpc._procs import processes_in
from tests.lsp._fixtures import BROKEN, GREETING, MAIN, SERVERS, write_project

from kairox.errors import ToolCallError
from kairox.events import RecordingSink
from kairox.lsp import LspServerRunning, LspToolProvider
from kairox.tools import Access, CallContext, ToolResult, ToolSource

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(60)]


class Served(NamedTuple):
    """A started language server and the project it serves: the read-only tests share one per server (``served``)."""

    name: str
    provider: LspToolProvider
    project: Path

    async def ask(self, *calls: tuple[str, dict[str, Any]]) -> list[ToolResult]:
        context = CallContext(call_id="t", workspace=self.project)
        return [await self.provider.call_tool(name, args, context) for name, args in calls]


async def call(project: Path, server: str, *calls: tuple[str, dict[str, Any]]) -> list[ToolResult]:
    """``calls`` to a server of their own, started for them and stopped after."""
    async with LspToolProvider({server: SERVERS[server]()}, workspace=project) as provider:
        return await Served(server, provider, project).ask(*calls)


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="module", params=sorted(SERVERS))
async def served(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Served]:
    project = write_project(tmp_path_factory.mktemp("served") / "proj")
    name = str(request.param)
    async with LspToolProvider({name: SERVERS[name]()}, workspace=project) as provider:
        served = Served(name, provider, project)
        await served.ask(("lsp.document_symbols", {"path": "pkg/main.py"}))  # started before a test counts processes
        yield served
    assert processes_in(project.resolve()) == []


async def test_tools_are_read_only_lsp_tools_and_list_without_starting_a_server(project: Path) -> None:
    sink = RecordingSink()
    async with LspToolProvider({"jedi": SERVERS["jedi"]()}, workspace=project, events=sink) as provider:
        specs = await provider.list_tools()
    assert [s.name for s in specs] == [
        "lsp.definition",
        "lsp.references",
        "lsp.hover",
        "lsp.document_symbols",
        "lsp.workspace_symbols",
        "lsp.implementation",
        "lsp.call_hierarchy",
        "lsp.diagnostics",
        "lsp.rename",
    ]
    assert {(s.source, s.permission.access, s.origin) for s in specs} == {(ToolSource.LSP, Access.READ, "lsp")}
    assert sink.events == []


async def test_definition_of_a_call_site_gives_the_defining_file_and_line(served: Served) -> None:
    (result,) = await served.ask(("lsp.definition", {"path": "pkg/main.py", "line": 4, "column": 7}))
    assert result.text_content() == "pkg/greeting.py:15:5: def make(name: str) -> Greeter:"
    assert result.structured == {
        "server": served.name,
        "locations": [
            {
                "path": "pkg/greeting.py",
                "line": 15,
                "column": 5,
                "end_line": 15,
                "end_column": 9,
                "text": "def make(name: str) -> Greeter:",
            }
        ],
    }


async def test_references_find_every_use_with_character_columns_on_a_non_ascii_line(served: Served) -> None:
    (result,) = await served.ask(("lsp.references", {"path": "pkg/greeting.py", "line": 10, "column": 9}))
    assert result.text_content().splitlines() == [
        'pkg/greeting.py:10:9: def greet(self, punctuation: str = "!") -> str:',
        'pkg/main.py:3:33: g = Greeter("wörld 🎉"); print(g.greet())',
        'pkg/main.py:4:17: print(make("x").greet("?"))',
    ]


async def test_a_position_after_non_ascii_text_reaches_the_right_name(served: Served) -> None:
    # column 33 is the "g" of greet, after an emoji that takes two UTF-16 code units
    (result,) = await served.ask(("lsp.definition", {"path": "pkg/main.py", "line": 3, "column": 33}))
    assert result.text_content() == 'pkg/greeting.py:10:9: def greet(self, punctuation: str = "!") -> str:'


async def test_hover_returns_the_signature_and_the_docstring(served: Served) -> None:
    (result,) = await served.ask(("lsp.hover", {"path": "pkg/greeting.py", "line": 10, "column": 9}))
    text = result.text_content()
    assert 'greet(self, punctuation: str = "!") -> str' in text.replace('str="!"', 'str = "!"')
    assert "Return a greeting for the name." in text


async def test_document_symbols_list_the_classes_and_functions(served: Served) -> None:
    (result,) = await served.ask(("lsp.document_symbols", {"path": "pkg/greeting.py"}))
    assert result.structured is not None
    symbols = {(s["kind"], s["qualified_name"], s["line"], s["column"]) for s in result.structured["symbols"]}
    assert {
        ("class", "Greeter", 4, 7),
        ("method", "Greeter.__init__", 7, 9),
        ("method", "Greeter.greet", 10, 9),
        ("function", "make", 15, 5),
    } <= symbols


async def test_workspace_symbols_work_where_the_server_supports_them(served: Served) -> None:
    (result,) = await served.ask(("lsp.workspace_symbols", {"query": "Greeter"}))
    if served.name == "jedi":
        assert result.text_content() == "class pkg.greeting.Greeter  pkg/greeting.py:4:7"
    else:
        assert result.structured == {"server": "pylsp", "supported": False, "message": result.text_content()}
        assert result.text_content().startswith("pylsp does not support workspace symbols;")


async def test_a_file_with_an_undefined_name_yields_that_diagnostic_from_pylsp(project: Path) -> None:
    (result,) = await call(project, "pylsp", ("lsp.diagnostics", {"path": "pkg/broken.py"}))
    assert result.text_content() == "pkg/broken.py:2:26: error: undefined name 'undefined_name' [pyflakes]"


async def test_jedi_reports_syntax_errors_as_diagnostics(project: Path) -> None:
    # jedi-language-server checks syntax only; an undefined name is not one of its diagnostics
    (project / "pkg" / "syntax.py").write_text("def broken(:\n    pass\n")
    (result,) = await call(project, "jedi", ("lsp.diagnostics", {"path": "pkg/syntax.py"}))
    assert result.structured is not None
    assert [(d["path"], d["line"], d["severity"]) for d in result.structured["diagnostics"]][:1] == [
        ("pkg/syntax.py", 1, "error")
    ]


async def test_diagnostics_follow_edits_on_disk(project: Path) -> None:
    context = CallContext(call_id="t", workspace=project)
    async with LspToolProvider({"pylsp": SERVERS["pylsp"]()}, workspace=project) as provider:
        before = await provider.call_tool("lsp.diagnostics", {"path": "pkg/broken.py"}, context)
        (project / "pkg" / "broken.py").write_text("def total(values):\n    return sum(values)\n")
        after = await provider.call_tool("lsp.diagnostics", {"path": "pkg/broken.py"}, context)
    assert before.structured is not None and len(before.structured["diagnostics"]) == 1
    assert after.text_content() == "No problems reported in pkg/broken.py."


async def test_rename_returns_edits_for_every_use_and_writes_nothing(served: Served) -> None:
    (result,) = await served.ask(("lsp.rename", {"symbol": "Greeter.greet", "new_name": "salute"}))
    assert result.text_content().splitlines() == [
        "Preview: renaming to 'salute' changes 3 line(s) in 2 file(s); nothing was written.",
        'pkg/greeting.py:10: - def greet(self, punctuation: str = "!") -> str:',
        'pkg/greeting.py:10: + def salute(self, punctuation: str = "!") -> str:',
        'pkg/main.py:3: - g = Greeter("wörld 🎉"); print(g.greet())',
        'pkg/main.py:3: + g = Greeter("wörld 🎉"); print(g.salute())',
        'pkg/main.py:4: - print(make("x").greet("?"))',
        'pkg/main.py:4: + print(make("x").salute("?"))',
    ]
    assert result.structured is not None and result.structured["applied"] is False
    assert (served.project / "pkg" / "greeting.py").read_text(encoding="utf-8") == GREETING
    assert (served.project / "pkg" / "main.py").read_text(encoding="utf-8") == MAIN
    assert (served.project / "pkg" / "broken.py").read_text(encoding="utf-8") == BROKEN


@pytest.mark.parametrize("tool", ["lsp.definition", "lsp.references", "lsp.hover"])
async def test_addressing_by_symbol_name_gives_the_same_answer_as_by_position(served: Served, tool: str) -> None:
    by_position, by_name, by_name_in_file = await served.ask(
        (tool, {"path": "pkg/greeting.py", "line": 10, "column": 9}),
        (tool, {"symbol": "Greeter.greet"}),
        (tool, {"symbol": "Greeter.greet", "path": "pkg/greeting.py"}),
    )
    assert by_name == by_position
    assert by_name_in_file == by_position


async def test_an_unknown_symbol_is_a_tool_error_naming_it(project: Path) -> None:
    with pytest.raises(ToolCallError) as caught:
        await call(project, "jedi", ("lsp.definition", {"symbol": "Greeter.wave", "path": "pkg/greeting.py"}))
    assert caught.value.message == "lsp.definition failed: no symbol 'Greeter.wave' in pkg/greeting.py"
    assert caught.value.hint is not None and "Greeter.greet" in caught.value.hint


async def test_a_file_no_server_matches_is_a_tool_error(project: Path) -> None:
    (project / "notes.txt").write_text("hello\n")
    with pytest.raises(ToolCallError) as caught:
        await call(project, "jedi", ("lsp.hover", {"path": "notes.txt", "line": 1}))
    assert caught.value.message == "lsp.hover failed: no language server is configured for notes.txt"


async def test_servers_start_on_first_use_of_a_matching_file_only(project: Path) -> None:
    sink = RecordingSink()
    context = CallContext(call_id="t", workspace=project)
    configs = {"jedi": SERVERS["jedi"](), "other": SERVERS["pylsp"](file_patterns=["*.pyx"])}
    async with LspToolProvider(configs, workspace=project, events=sink) as provider:
        await provider.call_tool("lsp.hover", {"path": "pkg/main.py", "line": 1}, context)
        await provider.call_tool("lsp.hover", {"path": "pkg/main.py", "line": 3}, context)
        statuses = {s["server"]: s["status"] for s in provider.status()}
    assert statuses == {"jedi": "ready", "other": "stopped"}
    assert [type(e).__name__ for e in sink.events] == [
        "LspServerStarting",
        "LspServerRunning",
        "LspServerStopped",
    ]
    assert sink.of_type(LspServerRunning)[0].server == "jedi"


async def test_lines_are_counted_as_servers_count_them_past_a_form_feed(project: Path, server_name: str) -> None:
    # Python's str.splitlines also breaks at \f, \v and \u2028; LSP breaks only at \n, \r\n and \r
    (project / "pkg" / "paged.py").write_text(
        'SEP = "a\u2028b"\n\x0c\nfrom pkg.greeting import make\n\nprint(make("y"))\n', encoding="utf-8"
    )
    definition, references = await call(
        project,
        server_name,
        ("lsp.definition", {"path": "pkg/paged.py", "line": 5, "column": 7}),
        ("lsp.references", {"path": "pkg/greeting.py", "line": 15, "column": 5}),
    )
    assert definition.text_content() == "pkg/greeting.py:15:5: def make(name: str) -> Greeter:"
    assert sorted(line for line in references.text_content().splitlines() if "paged.py" in line) == [
        "pkg/paged.py:3:26: from pkg.greeting import make",
        'pkg/paged.py:5:7: print(make("y"))',
    ]
