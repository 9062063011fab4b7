"""search.ripgrep: the real rg and the Python fallback find the same lines."""

import shutil
from pathlib import Path

import pytest

from kairox.errors import ToolCallError
from kairox.tools import BuiltinSettings, BuiltinToolProvider, CallContext, ToolResult

RG = shutil.which("rg")
ENGINES = [
    pytest.param(RG, id="rg", marks=pytest.mark.skipif(RG is None, reason="ripgrep is not installed")),
    pytest.param(None, id="python"),
]


async def search(ws: Path, arguments: dict[str, object], rg: str | None) -> ToolResult:
    provider = BuiltinToolProvider(BuiltinSettings(ripgrep=rg))
    return await provider.call_tool("search.ripgrep", arguments, CallContext(call_id="t", workspace=ws))


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    files = {
        "src/a.py": "def alpha():\n    return 1\n",
        "src/b.py": "ALPHA = 2\n",
        "docs/guide.md": "alpha and beta\n",
        "build/gen.py": "alpha generated\n",
        "blob.bin": "alpha\0binary",
    }
    for rel, text in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    (tmp_path / ".gitignore").write_text("build/\n")
    return tmp_path


@pytest.mark.anyio
@pytest.mark.parametrize("rg", ENGINES)
async def test_finds_matching_lines_outside_ignored_and_binary_files(tree: Path, rg: str | None) -> None:
    result = await search(tree, {"pattern": "alpha"}, rg)
    assert result.text_content() == "docs/guide.md:1: alpha and beta\nsrc/a.py:1: def alpha():"
    assert result.structured is not None and result.structured["engine"] == ("rg" if rg else "python")


@pytest.mark.anyio
@pytest.mark.parametrize("rg", ENGINES)
async def test_glob_case_and_limit(tree: Path, rg: str | None) -> None:
    result = await search(tree, {"pattern": "alpha", "glob": "*.py", "ignore_case": True, "max_results": 1}, rg)
    assert (
        result.text_content()
        == "src/a.py:1: def alpha():\n[search.ripgrep: stopped after 1 matches; narrow the pattern, path or glob]"
    )


@pytest.mark.anyio
@pytest.mark.parametrize("rg", ENGINES)
async def test_no_match_is_not_an_error(tree: Path, rg: str | None) -> None:
    assert (await search(tree, {"pattern": "zeta"}, rg)).text_content() == "(no matches)"


@pytest.mark.anyio
@pytest.mark.parametrize("rg", ENGINES)
async def test_bad_regex_is_reported(tree: Path, rg: str | None) -> None:
    with pytest.raises(ToolCallError) as caught:
        await search(tree, {"pattern": "(unclosed"}, rg)
    assert caught.value.tool == "search.ripgrep"
    assert "(unclosed" in caught.value.reason or "missing )" in caught.value.reason


@pytest.mark.anyio
@pytest.mark.parametrize("rg", ENGINES)
async def test_searching_a_subfolder_applies_the_workspaces_gitignore(tree: Path, rg: str | None) -> None:
    (tree / "src" / "gen").mkdir()
    (tree / "src" / "gen" / "out.py").write_text("alpha\n")
    (tree / ".gitignore").write_text("build/\nsrc/gen/\n")
    result = await search(tree, {"pattern": "alpha", "path": "src"}, rg)
    assert result.text_content() == "src/a.py:1: def alpha():"
