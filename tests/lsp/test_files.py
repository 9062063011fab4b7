"""Files as the lsp.* tools see them: paths resolved like ``os.path.realpath``, texts kept by their status and read
again whenever the status changed or had not settled, so an edit on disk is always seen."""

import os
from pathlib import Path

import anyio
import pytest
from tests.lsp._fixtures import jedi_config

from kairox._util._filestate import SETTLE_NS, file_state
from kairox.errors import ToolCallError
from kairox.lsp import LspToolProvider
from kairox.lsp._files import MAX_TEXT_BYTES, disk_text, locate, read_text
from kairox.tools import CallContext

LIBRARY = """def make() -> int:
    return 1


def mako() -> int:
    return 2
"""
CALLER = "from lib import make, mako\n\nprint(make())\n"
OTHER_CALLER = "from lib import make, mako\n\nprint(mako())\n"  # the same size: only the status's times differ


def rewrite_in_place(path: Path, text: str) -> None:
    """Write ``text`` over ``path`` (same inode) and put its modification time back, as a write within one
    time-stamp tick looks: only the change time may tell."""
    before = path.stat()
    path.write_text(text)
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    root = tmp_path.resolve()
    (root / "dir" / "sub").mkdir(parents=True)
    (root / "dir" / "sub" / "file.py").write_text("x = 1\n")
    (root / "to-sub").symlink_to(root / "dir" / "sub")
    (root / "dir" / "relative").symlink_to("sub/file.py")
    (root / "dir" / "up").symlink_to(root)
    (root / "dangling").symlink_to(root / "missing")
    (root / "loop-a").symlink_to(root / "loop-b")
    (root / "loop-b").symlink_to(root / "loop-a")
    (root / "wörld dir").mkdir()
    (root / "wörld dir" / "a b.py").write_text("")
    return root


def test_locate_gives_the_resolved_path_with_the_status_of_the_file_it_reaches(tree: Path) -> None:
    real, state = locate(f"{tree}/to-sub/file.py")
    target = os.stat(tree / "dir" / "sub" / "file.py")
    assert real == f"{tree}/dir/sub/file.py"
    assert state.regular
    assert state.key == (target.st_dev, target.st_ino, target.st_size, target.st_mtime_ns, target.st_ctime_ns)
    assert not locate(f"{tree}/dir")[1].regular
    for missing in ("dangling", "missing"):
        with pytest.raises(FileNotFoundError):
            locate(f"{tree}/{missing}")


def test_a_status_younger_than_the_settling_time_is_not_trusted_even_when_it_has_not_changed(tmp_path: Path) -> None:
    path = tmp_path / "a.py"
    path.write_text(CALLER)
    os.utime(path, ns=(0, 0))  # an old modification time: the change time is still now
    fresh, again = file_state(str(path)), file_state(str(path))
    assert fresh.key == again.key
    assert not fresh.settled
    assert not fresh.same_file_as(again)  # a write within the same tick could have kept this status
    assert file_state(str(path), settle_ns=0).same_file_as(again)


def test_a_file_that_cannot_be_read_is_an_empty_text_and_read_once_it_exists(tmp_path: Path) -> None:
    path = tmp_path / "late.py"
    assert disk_text(str(path)) == ""
    path.write_text("late = True\n")
    assert disk_text(str(path)) == "late = True\n"
    rewrite_in_place(path, "late = 1\n")
    assert disk_text(str(path)) == "late = 1\n"


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path.resolve()
    (root / "lib.py").write_text(LIBRARY)
    (root / "main.py").write_text(CALLER)
    return root


DEFINITION = {"path": "main.py", "line": 3, "column": 7}


@pytest.mark.anyio
@pytest.mark.timeout(60)
async def test_an_edit_right_after_a_call_is_seen_by_the_next_call(workspace: Path) -> None:
    context = CallContext(call_id="t", workspace=workspace)
    async with LspToolProvider({"jedi": jedi_config()}, workspace=workspace) as provider:
        first = await provider.call_tool("lsp.definition", DEFINITION, context)
        rewrite_in_place(workspace / "main.py", OTHER_CALLER)
        rewrite_in_place(workspace / "lib.py", LIBRARY.replace("mako() -> int", "mako() -> str"))
        second = await provider.call_tool("lsp.definition", DEFINITION, context)
    assert first.text_content() == "lib.py:1:5: def make() -> int:"
    assert second.text_content() == "lib.py:5:5: def mako() -> str:"


@pytest.mark.anyio
@pytest.mark.timeout(60)
async def test_a_settled_file_is_served_from_memory_and_an_edit_of_it_is_still_seen(workspace: Path) -> None:
    context = CallContext(call_id="t", workspace=workspace)
    async with LspToolProvider({"jedi": jedi_config()}, workspace=workspace) as provider:
        await provider.call_tool("lsp.definition", DEFINITION, context)
        await anyio.sleep(SETTLE_NS / 1e9 + 0.2)  # the files' statuses settle
        await provider.call_tool("lsp.definition", DEFINITION, context)  # takes the settled statuses
        client = provider.servers["jedi"].client
        assert client is not None
        document = client.documents[(workspace / "main.py").as_uri()]
        state = document.state
        kept = await provider.call_tool("lsp.definition", DEFINITION, context)
        assert document.state == state and document.version == 1  # nothing was sent again
        rewrite_in_place(workspace / "main.py", OTHER_CALLER)
        rewrite_in_place(workspace / "lib.py", LIBRARY.replace("mako() -> int", "mako() -> str"))
        edited = await provider.call_tool("lsp.definition", DEFINITION, context)
    assert kept.text_content() == "lib.py:1:5: def make() -> int:"
    assert edited.text_content() == "lib.py:5:5: def mako() -> str:"
    assert document.version == 2


def no_secrets(path: Path) -> str | None:
    """Read rules as the registry hands them to a provider: why a resolved path may not be read."""
    return "denied by deny rule 'fs.read(secrets/**)'" if "secrets" in path.parts else None


@pytest.mark.anyio
@pytest.mark.timeout(60)
async def test_a_symlink_turned_to_a_file_that_may_not_be_read_is_refused_on_the_next_call(workspace: Path) -> None:
    (workspace / "secrets").mkdir()
    (workspace / "secrets" / "main.py").write_text(CALLER)
    (workspace / "entry.py").symlink_to(workspace / "main.py")
    context = CallContext(call_id="t", workspace=workspace, unreadable=no_secrets)
    arguments = {**DEFINITION, "path": "entry.py"}
    async with LspToolProvider({"jedi": jedi_config()}, workspace=workspace) as provider:
        allowed = await provider.call_tool("lsp.definition", arguments, context)
        (workspace / "entry.py").unlink()
        (workspace / "entry.py").symlink_to(workspace / "secrets" / "main.py")
        with pytest.raises(ToolCallError) as refused:
            await provider.call_tool("lsp.definition", arguments, context)
    assert allowed.text_content() == "lib.py:1:5: def make() -> int:"
    assert refused.value.reason == "secrets/main.py may not be read (denied by deny rule 'fs.read(secrets/**)')"


@pytest.mark.anyio
@pytest.mark.timeout(60)
async def test_a_definition_in_a_file_turned_unreadable_is_left_out_on_the_next_call(workspace: Path) -> None:
    (workspace / "secrets").mkdir()
    (workspace / "shown.py").symlink_to(workspace / "lib.py")
    (workspace / "main.py").write_text("from shown import make, mako\n\nprint(make())\n")
    context = CallContext(call_id="t", workspace=workspace, unreadable=no_secrets)
    async with LspToolProvider({"jedi": jedi_config()}, workspace=workspace) as provider:
        allowed = await provider.call_tool("lsp.definition", DEFINITION, context)
        os.replace(workspace / "lib.py", workspace / "secrets" / "lib.py")
        (workspace / "shown.py").unlink()
        (workspace / "shown.py").symlink_to(workspace / "secrets" / "lib.py")
        hidden = await provider.call_tool("lsp.definition", DEFINITION, context)
    assert allowed.text_content() == "lib.py:1:5: def make() -> int:"
    assert "def make" not in hidden.text_content()
    assert "left out" in hidden.text_content()


@pytest.mark.timeout(30)
def test_only_regular_files_within_the_limit_are_read(tmp_path: Path) -> None:
    """A path the model gives or a server names may be a FIFO (opening it would wait for a writer, holding the
    event loop), a device that never ends, a folder or a huge file: none is read, and none hangs."""
    os.mkfifo(tmp_path / "pipe.py")
    with open(tmp_path / "huge.py", "wb") as file:
        file.truncate(MAX_TEXT_BYTES + 1)
    (tmp_path / "folder.py").mkdir()
    (tmp_path / "plain.py").write_text("x = 1\n")
    refused = [tmp_path / "pipe.py", Path("/dev/zero"), tmp_path / "huge.py", tmp_path / "folder.py"]
    for path in refused:
        with pytest.raises(OSError):
            read_text(str(path))
    assert [disk_text(str(path)) for path in refused] == ["", "", "", ""]
    assert read_text(str(tmp_path / "plain.py")) == disk_text(str(tmp_path / "plain.py")) == "x = 1\n"


@pytest.mark.anyio
@pytest.mark.timeout(60)
async def test_a_fifo_in_the_workspace_neither_hangs_a_tool_nor_the_search_for_a_symbol(workspace: Path) -> None:
    from kairox.lsp._symbols import _candidate_files

    os.mkfifo(workspace / "aaa.py")  # walked first when a symbol is looked for file by file
    context = CallContext(call_id="t", workspace=workspace)
    async with LspToolProvider({"jedi": jedi_config()}, workspace=workspace) as provider:
        with pytest.raises(ToolCallError, match=r"aaa\.py"):
            await provider.call_tool("lsp.definition", {"path": "aaa.py", "line": 1, "column": 1}, context)
    assert list(_candidate_files(workspace, ["*.py"], "make", lambda _: True)) == [
        workspace / "lib.py",
        workspace / "main.py",
    ]
