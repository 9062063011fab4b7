"""A question across files asked of a cold server (the first call after start) sees the whole project: the
workspace's files of the server's languages are opened and the loading it reports waited for, with the real
typescript-language-server and basedpyright; a bound that cuts the project short says the answer may be
incomplete, and a server that failed says so instead of "no symbols"."""

import re
import sys
from pathlib import Path

import pytest
from tests.lsp._fixtures import HERE, basedpyright_config, jedi_config, typescript_config

from kairox.config import LspServerConfig
from kairox.errors import ToolCallError
from kairox.lsp import LspToolProvider
from kairox.tools import CallContext

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(120)]

TS_FILES = {
    "tsconfig.json": '{"compilerOptions": {"strict": true, "module": "commonjs"}, "include": ["src"]}\n',
    "src/greeting.ts": "export function greet(name: string): string {\n  return 'Hello, ' + name;\n}\n",
    "src/main.ts": "import { greet } from './greeting';\n\nconsole.log(greet('world'));\n",
    "src/util/shout.ts": (
        "import { greet } from '../greeting';\n\n"
        "export const shout = (name: string): string => greet(name).toUpperCase();\n"
    ),
}
PY_FILES = {
    "pkg/__init__.py": "",
    "pkg/greeting.py": 'def greet(name: str) -> str:\n    return "Hello, " + name\n',
    "pkg/main.py": 'from pkg.greeting import greet\n\nprint(greet("world"))\n',
    "pkg/util/__init__.py": "",
    "pkg/util/shout.py": (
        "from pkg.greeting import greet\n\n\ndef shout(name: str) -> str:\n    return greet(name).upper()\n"
    ),
}
SERVERS = {
    "typescript": (typescript_config, TS_FILES, "src/greeting.ts", 17),
    "basedpyright": (basedpyright_config, PY_FILES, "pkg/greeting.py", 5),
}


def make_project(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text, encoding="utf-8")
    return root


def uses(files: dict[str, str], word: str) -> list[tuple[str, int, str]]:
    """Every (file, 1-based line, text) of the source files where ``word`` appears, in path order."""
    return [
        (name, number, line)
        for name, text in sorted(files.items())
        if not name.endswith(".json")
        for number, line in enumerate(text.splitlines(), 1)
        if re.search(rf"\b{word}\b", line)
    ]


@pytest.mark.parametrize("server", sorted(SERVERS))
async def test_a_rename_preview_on_a_cold_server_finds_every_caller(tmp_path: Path, server: str) -> None:
    config, files, definition, column = SERVERS[server]
    root = make_project(tmp_path / "proj", files)
    async with LspToolProvider({server: config()}, workspace=root) as provider:
        result = await provider.call_tool(
            "lsp.rename",
            {"path": definition, "line": 1, "column": column, "new_name": "welcome"},
            CallContext(call_id="t", workspace=root),
        )
    changed = uses(files, "greet")
    assert {name for name, _, _ in changed} == {definition, *(n for n in files if "main" in n or "shout" in n)}
    expected = [f"Preview: renaming to 'welcome' changes {len(changed)} line(s) in 3 file(s); nothing was written."]
    for name, number, line in changed:
        renamed = re.sub(r"\bgreet\b", "welcome", line)
        expected += [f"{name}:{number}: - {line.strip()}", f"{name}:{number}: + {renamed.strip()}"]
    assert result.text_content().splitlines() == expected
    assert result.structured is not None and "complete" not in result.structured


@pytest.mark.parametrize("server", sorted(SERVERS))
async def test_references_on_a_cold_server_list_the_callers_in_other_files(tmp_path: Path, server: str) -> None:
    config, files, definition, column = SERVERS[server]
    root = make_project(tmp_path / "proj", files)
    async with LspToolProvider({server: config()}, workspace=root) as provider:
        result = await provider.call_tool(
            "lsp.references",
            {"path": definition, "line": 1, "column": column},
            CallContext(call_id="t", workspace=root),
        )
    assert result.structured is not None
    found = {(item["path"], item["line"]) for item in result.structured["locations"]}
    # every line that names it, the imports and the declaration included
    assert found == {(name, number) for name, number, _ in uses(files, "greet")}
    assert "may be incomplete" not in result.text_content()


@pytest.mark.parametrize("server", sorted(SERVERS))
async def test_workspace_symbols_before_any_file_is_open(tmp_path: Path, server: str) -> None:
    config, files, _definition, _column = SERVERS[server]
    root = make_project(tmp_path / "proj", files)
    async with LspToolProvider({server: config()}, workspace=root) as provider:
        result = await provider.call_tool(
            "lsp.workspace_symbols", {"query": "shout"}, CallContext(call_id="t", workspace=root)
        )
    assert result.structured is not None
    symbols = [(s["name"], s["path"]) for s in result.structured["symbols"]]
    shout = next(name for name in files if "shout" in name and not name.endswith("__init__.py"))
    assert ("shout", shout) in symbols, result.text_content()
    assert not result.text_content().startswith("No symbols match")


async def test_a_project_larger_than_the_bound_says_the_answer_may_be_incomplete(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import kairox.lsp._provider as provider_module

    monkeypatch.setattr(provider_module, "_PROJECT_FILES", 2)
    root = make_project(tmp_path / "proj", PY_FILES)
    async with LspToolProvider({"jedi": jedi_config()}, workspace=root) as provider:
        result = await provider.call_tool(
            "lsp.references",
            {"path": "pkg/greeting.py", "line": 1, "column": 5},
            CallContext(call_id="t", workspace=root),
        )
    assert result.text_content().splitlines()[-1] == (
        "(only the first 2 files of the workspace were opened in jedi: the answer may be incomplete; ask again shortly)"
    )
    assert result.structured is not None and result.structured["complete"] is False


async def test_a_caller_written_after_the_first_question_is_found_by_the_next(tmp_path: Path) -> None:
    root = make_project(tmp_path / "proj", PY_FILES)
    where = {"path": "pkg/greeting.py", "line": 1, "column": 5}
    context = CallContext(call_id="t", workspace=root)
    async with LspToolProvider({"jedi": jedi_config()}, workspace=root) as provider:
        before = await provider.call_tool("lsp.references", where, context)
        # main.py was opened for the first question: its new text is sent before the next one
        (root / "pkg" / "main.py").write_text(PY_FILES["pkg/main.py"] + 'print(greet("again"))\n', encoding="utf-8")
        after = await provider.call_tool("lsp.references", where, context)
    assert before.structured is not None and after.structured is not None
    lines = {(item["path"], item["line"]) for item in after.structured["locations"]}
    assert lines - {(item["path"], item["line"]) for item in before.structured["locations"]} == {("pkg/main.py", 4)}


async def test_workspace_symbols_of_a_server_that_fails_to_start_say_it_failed(tmp_path: Path) -> None:
    root = make_project(tmp_path / "proj", PY_FILES)
    config = LspServerConfig(
        command=sys.executable, args=[str(HERE.parent / "servers" / "crash_at_start.py")], file_patterns=["*.py"]
    )
    async with LspToolProvider({"broken": config}, workspace=root) as provider:
        with pytest.raises(ToolCallError) as caught:
            await provider.call_tool(
                "lsp.workspace_symbols", {"query": "greet"}, CallContext(call_id="t", workspace=root)
            )
    assert caught.value.reason.startswith("language server 'broken' did not start:")
    assert "No symbols" not in str(caught.value)
