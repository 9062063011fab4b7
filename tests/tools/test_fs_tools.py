"""fs.read, fs.write, fs.edit and fs.list on real files."""

import os
import stat
from pathlib import Path

import pytest

from kairox.errors import ToolCallError
from kairox.tools import BuiltinSettings, BuiltinToolProvider, CallContext, ToolResult


async def call(
    ws: Path, name: str, arguments: dict[str, object], settings: BuiltinSettings | None = None
) -> ToolResult:
    return await BuiltinToolProvider(settings).call_tool(name, arguments, CallContext(call_id="t", workspace=ws))


@pytest.mark.anyio
async def test_read_returns_a_line_range(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("one\ntwo\nthree\nfour\n")
    result = await call(tmp_path, "fs.read", {"path": "a.txt", "start_line": 2, "end_line": 3})
    assert result == ToolResult.text(
        "two\nthree\n",
        structured={
            "path": str(tmp_path / "a.txt"),
            "content": "two\nthree\n",
            "start_line": 2,
            "end_line": 3,
            "total_lines": 4,
            "truncated": False,
        },
    )


@pytest.mark.anyio
async def test_read_refuses_binary_files(tmp_path: Path) -> None:
    (tmp_path / "img.bin").write_bytes(b"\x89PNG\0\0\x01")
    result = await call(tmp_path, "fs.read", {"path": "img.bin"})
    assert result == ToolResult.error(
        f"{tmp_path / 'img.bin'} looks like a binary file (7 bytes); fs.read only returns text"
    )


@pytest.mark.anyio
async def test_read_stops_at_the_size_cap_on_a_whole_line(tmp_path: Path) -> None:
    (tmp_path / "big.txt").write_text("".join(f"line {i}\n" for i in range(1000)))
    result = await call(tmp_path, "fs.read", {"path": "big.txt"}, BuiltinSettings(read_max_bytes=30))
    assert (
        result.text_content() == "line 0\nline 1\nline 2\nline 3\n\n[fs.read: only the first 30 bytes "
        "were read; ask for a line range to see more]"
    )
    assert result.structured is not None and result.structured["truncated"] is True


@pytest.mark.anyio
async def test_read_of_a_missing_file_says_what_to_do(tmp_path: Path) -> None:
    with pytest.raises(ToolCallError) as caught:
        await call(tmp_path, "fs.read", {"path": "nope.txt"})
    assert (
        str(caught.value)
        == f"fs.read failed: {tmp_path / 'nope.txt'} does not exist\n  hint: `fs.list` shows what is there"
    )


@pytest.mark.anyio
async def test_write_creates_parents_and_reports_bytes(tmp_path: Path) -> None:
    result = await call(tmp_path, "fs.write", {"path": "a/b/c.txt", "content": "héllo"})
    assert (tmp_path / "a/b/c.txt").read_text() == "héllo"
    assert result == ToolResult.text(
        f"created {tmp_path / 'a/b/c.txt'} (6 bytes)",
        structured={"path": str(tmp_path / "a/b/c.txt"), "bytes": 6, "created": True},
    )


@pytest.mark.anyio
async def test_edit_replaces_a_unique_match(tmp_path: Path) -> None:
    (tmp_path / "m.py").write_text("x = 1\ny = 2\n")
    result = await call(tmp_path, "fs.edit", {"path": "m.py", "old_string": "y = 2", "new_string": "y = 3"})
    assert (tmp_path / "m.py").read_text() == "x = 1\ny = 3\n"
    assert result.text_content() == f"edited {tmp_path / 'm.py'}: 1 replacement(s)"


@pytest.mark.anyio
async def test_edit_refuses_a_non_unique_match_and_leaves_the_file(tmp_path: Path) -> None:
    (tmp_path / "m.py").write_text("a = 1\na = 1\n")
    result = await call(tmp_path, "fs.edit", {"path": "m.py", "old_string": "a = 1", "new_string": "a = 2"})
    assert result == ToolResult.error(
        f"fs.edit: old_string occurs 2 times in {tmp_path / 'm.py'}; add "
        "surrounding lines to make it unique, or set replace_all to true"
    )
    assert (tmp_path / "m.py").read_text() == "a = 1\na = 1\n"
    await call(tmp_path, "fs.edit", {"path": "m.py", "old_string": "a = 1", "new_string": "a = 2", "replace_all": True})
    assert (tmp_path / "m.py").read_text() == "a = 2\na = 2\n"


@pytest.mark.anyio
async def test_edit_of_missing_text_is_an_error(tmp_path: Path) -> None:
    (tmp_path / "m.py").write_text("a\n")
    before = (tmp_path / "m.py").stat().st_mtime_ns
    result = await call(tmp_path, "fs.edit", {"path": "m.py", "old_string": "b", "new_string": "c"})
    assert result == ToolResult.error(
        f"fs.edit: old_string was not found in {tmp_path / 'm.py'}; read the file and copy the text exactly"
    )
    # the refused file is left exactly as it was: same text, not rewritten
    assert (tmp_path / "m.py").read_text() == "a\n"
    assert (tmp_path / "m.py").stat().st_mtime_ns == before


def _tree(root: Path) -> None:
    for rel in (
        "src/app.py",
        "src/util/helpers.py",
        "src/util/data.json",
        "build/out.py",
        "notes.log",
        "keep.log",
        "README.md",
        ".git/config",
        "docs/.gitignore",
        "docs/a.md",
        "docs/tmp.md",
    ):
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(rel)
    (root / ".gitignore").write_text("build/\n*.log\n!keep.log\n")
    (root / "docs/.gitignore").write_text("tmp.md\n")


@pytest.mark.anyio
async def test_list_respects_gitignore_and_skips_git(tmp_path: Path) -> None:
    _tree(tmp_path)
    result = await call(tmp_path, "fs.list", {})
    assert result.structured is not None
    assert result.structured["files"] == [
        ".gitignore",
        "README.md",
        "keep.log",
        "docs/.gitignore",
        "docs/a.md",
        "src/app.py",
        "src/util/data.json",
        "src/util/helpers.py",
    ]


@pytest.mark.anyio
async def test_list_filters_by_name_or_path_glob(tmp_path: Path) -> None:
    _tree(tmp_path)
    by_name = await call(tmp_path, "fs.list", {"pattern": "*.py"})
    by_path = await call(tmp_path, "fs.list", {"pattern": "src/**/*.json"})
    everything = await call(tmp_path, "fs.list", {"pattern": "*.py", "respect_gitignore": False})
    assert by_name.text_content() == "src/app.py\nsrc/util/helpers.py"
    assert by_path.text_content() == "src/util/data.json"
    assert everything.text_content() == "build/out.py\nsrc/app.py\nsrc/util/helpers.py"


@pytest.mark.anyio
async def test_listing_a_subfolder_applies_the_workspaces_gitignore(tmp_path: Path) -> None:
    (tmp_path / "src" / "cache").mkdir(parents=True)
    (tmp_path / "src" / "a.py").write_text("")
    (tmp_path / "src" / "debug.log").write_text("")
    (tmp_path / "src" / "cache" / "x.py").write_text("")
    (tmp_path / ".gitignore").write_text("*.log\nsrc/cache/\n")
    result = await call(tmp_path, "fs.list", {"path": "src"})
    assert result.text_content() == "a.py"


@pytest.mark.anyio
@pytest.mark.timeout(20)
async def test_a_named_pipe_is_refused_instead_of_blocking_the_host(tmp_path: Path) -> None:
    # opening a FIFO waits for a writer forever: the tools must not block the event loop (or a worker thread) on it
    os.mkfifo(tmp_path / "pipe")
    (tmp_path / "a.txt").write_text("needle\n")
    for name, arguments in (("fs.read", {"path": "pipe"}), ("fs.write", {"path": "pipe", "content": "x"})):
        with pytest.raises(ToolCallError) as caught:
            await call(tmp_path, name, arguments)
        assert caught.value.reason == f"{tmp_path / 'pipe'} is not a regular file"
    # the refused write left the pipe as it was: not replaced by a regular file
    assert stat.S_ISFIFO((tmp_path / "pipe").lstat().st_mode)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.txt", "pipe"]
    found = await call(tmp_path, "search.ripgrep", {"pattern": "needle"}, BuiltinSettings(ripgrep=None))
    assert found.text_content() == "a.txt:1: needle"
