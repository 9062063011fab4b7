"""Repository layouts the history check must read as git does (attack corpus, class 13): a ``.git`` that is a
symlink to the repository folder (as some multi-repository tools lay projects out), in the workspace or in a folder
below it, and a ref that only another worktree of the repository sees (``refs/bisect/*``, ``refs/worktree/*``).
With ``fs.read(**/.env)`` denied and the ``.env`` committed once, no git command in the sandbox prints it. Real git
repositories in temp folders, real bwrap, the real registry."""

import os
import subprocess
from pathlib import Path

import pytest
from tests.helpers import git
from tests.registry._support import settings
from tests.security._support import workspace

from kairox.policy import NonInteractiveApprover, Rule
from kairox.registry import build_registry
from kairox.tools import ToolCall

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(60)]

OLD = "OLD-6f20c9d1-secret"
"""What ``.env`` held once, only in the history (``.env`` holds something else now, or is gone)."""
PLAIN = "PLAIN-tracked-text"
DENY_ENV = Rule(action="deny", pattern="fs.read(**/.env)", layer="user", file="kairox.toml", line=1)


def held_once(tree: Path) -> str:
    """A repository in ``tree`` whose history held ``.env`` (added, then removed); returns that commit's id."""
    git(tree, "init", "-q", "-b", "main")
    (tree / "notes.txt").write_text(PLAIN + "\n")
    git(tree, "add", ".")
    git(tree, "commit", "-qm", "first")
    (tree / ".env").write_text(OLD + "\n")
    git(tree, "add", "-f", ".env")
    git(tree, "commit", "-qm", "add .env")
    held = git(tree, "rev-parse", "HEAD")
    git(tree, "rm", "-q", "--cached", ".env")
    git(tree, "commit", "-qm", "drop .env")
    (tree / ".env").write_text("NOW=other\n")
    return held


def symlinked(tree: Path, store: Path) -> None:
    """Moves ``tree``'s repository folder to ``store`` and leaves ``.git`` as a symlink to it."""
    (tree / ".git").rename(store)
    (tree / ".git").symlink_to(os.path.relpath(store, tree))


async def run(ws: Path, command: str) -> str:
    registry = await build_registry(settings(ws, DENY_ENV), approver=NonInteractiveApprover())
    result = await registry.call(ToolCall(name="shell.exec", arguments={"command": command}))
    return result.text_content()


@pytest.mark.parametrize("store", ["in the workspace", "outside it"])
async def test_a_symlinked_git_folder_keeps_its_history_hidden(tmp_path: Path, store: str) -> None:
    ws = workspace(tmp_path)
    held = held_once(ws)
    symlinked(ws, ws / "repo.git" if store == "in the workspace" else tmp_path / "repo.git")
    assert git(ws, "show", f"{held}:.env") == OLD  # git reads the repository through the link

    text = await run(ws, f"git log -p --all | cat; git show {held}:.env; cat notes.txt")

    assert OLD not in text, text
    assert PLAIN in text, text  # it ran
    assert f"the history of the git repository at {ws} is hidden" in text, text


async def test_a_nested_repository_with_a_symlinked_git_folder_keeps_its_history_hidden(tmp_path: Path) -> None:
    ws = workspace(tmp_path)
    sub = ws / "vendor" / "lib"
    sub.mkdir(parents=True)
    held = held_once(sub)
    symlinked(sub, ws / "vendor" / "lib.git")

    text = await run(ws, f"cd vendor/lib && git log -p --all | cat; git show {held}:.env; cat notes.txt")

    assert OLD not in text, text
    assert PLAIN in text, text
    assert f"the history of the git repository at {sub} is hidden" in text, text


@pytest.mark.parametrize("ref", ["refs/bisect/bad", "refs/worktree/kept"])
@pytest.mark.parametrize("workspace_is", ["the main worktree", "a linked worktree"])
async def test_a_ref_only_another_worktree_sees_keeps_the_history_hidden(
    tmp_path: Path, ref: str, workspace_is: str
) -> None:
    main = workspace(tmp_path)
    git(main, "init", "-q", "-b", "main")
    (main / "notes.txt").write_text(PLAIN + "\n")
    git(main, "add", ".")
    git(main, "commit", "-qm", "first")
    linked = tmp_path / "linked"
    git(main, "worktree", "add", "-q", str(linked))
    holder, ws = (linked, main) if workspace_is == "the main worktree" else (main, linked)
    git(holder, "checkout", "-q", "-b", "tmp")
    (holder / ".env").write_text(OLD + "\n")
    git(holder, "add", "-f", ".env")
    git(holder, "commit", "-qm", "add .env")
    held = git(holder, "rev-parse", "HEAD")
    git(holder, "update-ref", ref, held)  # a per-worktree ref: `git bisect` in that worktree leaves such ones
    git(holder, "checkout", "-q", "--detach", "HEAD~1")
    git(holder, "branch", "-qD", "tmp")
    git(main, "reflog", "expire", "--expire=now", "--all")
    (holder / ".env").unlink(missing_ok=True)
    assert git(ws, "rev-list", "--all", "--reflog").split() == [git(ws, "rev-parse", "HEAD")]  # not seen from here

    text = await run(ws, f"git show {held}:.env; git log -p --all | cat; cat notes.txt")

    assert OLD not in text, text
    assert PLAIN in text, text
    assert f"the history of the git repository at {ws} is hidden" in text, text


async def test_a_ref_another_worktree_makes_between_two_commands_hides_the_history_from_the_next(
    tmp_path: Path,
) -> None:
    ws = workspace(tmp_path)
    git(ws, "init", "-q", "-b", "main")
    (ws / "notes.txt").write_text(PLAIN + "\n")
    git(ws, "add", ".")
    git(ws, "commit", "-qm", "first")
    linked = tmp_path / "linked"
    git(ws, "worktree", "add", "-q", "--detach", str(linked))
    (linked / ".env").write_text(OLD + "\n")
    git(linked, "add", "-f", ".env")
    git(linked, "commit", "-qm", "add .env")
    held = git(linked, "rev-parse", "HEAD")
    git(linked, "checkout", "-q", "--detach", "HEAD~1")
    git(ws, "reflog", "expire", "--expire=now", "--all")
    git(linked, "reflog", "expire", "--expire=now", "--all")  # unreachable: a stored object no name leads to
    registry = await build_registry(settings(ws, DENY_ENV), approver=NonInteractiveApprover())
    first = await registry.call(ToolCall(name="shell.exec", arguments={"command": "git log --oneline | cat"}))
    assert not first.is_error and "first" in first.text_content(), first.text_content()
    git(linked, "update-ref", "refs/bisect/bad", held)  # only that worktree's own ref changes

    after = await registry.call(
        ToolCall(name="shell.exec", arguments={"command": f"git show {held}:.env; cat notes.txt"})
    )

    text = after.text_content()
    assert OLD not in text and PLAIN in text, text
    assert f"the history of the git repository at {ws} is hidden" in text, text


@pytest.mark.parametrize("gone", ["deinit", "rm"])
async def test_a_submodule_no_longer_checked_out_keeps_its_history_hidden(tmp_path: Path, gone: str) -> None:
    source = tmp_path / "lib-source"
    source.mkdir()
    held = held_once(source)
    ws = workspace(tmp_path)
    git(ws, "init", "-q", "-b", "main")
    (ws / "notes.txt").write_text(PLAIN + "\n")
    git(ws, "add", ".")
    git(ws, "commit", "-qm", "first")
    git(ws, "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(source), "lib")
    git(ws, "commit", "-qm", "add lib")
    if gone == "deinit":
        git(
            ws, "submodule", "--quiet", "deinit", "--force", "lib"
        )  # its work tree is emptied, its repository stays in .git/modules
    else:
        git(ws, "rm", "-qf", "lib")
        git(ws, "commit", "-qm", "drop lib")
    lib = "git --git-dir=.git/modules/lib --work-tree=."  # its configured work tree may be gone
    assert git(ws, "--git-dir=.git/modules/lib", "--work-tree=.", "show", f"{held}:.env") == OLD

    text = await run(ws, f"{lib} log -p --all | cat; {lib} show {held}:.env; cat notes.txt")

    assert OLD not in text, text
    assert PLAIN in text, text
    assert f"the history of the git repository at {ws / 'lib'} is hidden" in text, text


@pytest.mark.parametrize("converts", ["core.autocrlf", ".gitattributes"])
async def test_a_hidden_file_stored_with_its_line_ends_converted_keeps_the_history_hidden(
    tmp_path: Path, converts: str
) -> None:
    ws = workspace(tmp_path)
    git(ws, "init", "-q", "-b", "main")
    if converts == "core.autocrlf":
        git(ws, "config", "core.autocrlf", "input")
    else:
        (ws / ".gitattributes").write_text("* text=auto\n")
    (ws / "notes.txt").write_text(PLAIN + "\n")
    git(ws, "add", ".")
    git(ws, "commit", "-qm", "first")
    (ws / ".env").write_bytes(f"{OLD}\r\nMORE=1\r\n".encode())  # written on another system
    git(ws, "add", "-f", ".env")
    git(ws, "reset", "-q")  # no name left; the blob, with LF line ends, stays in the store
    blobs = (
        "for o in $(git cat-file --batch-all-objects --batch-check='%(objecttype) "
        "%(objectname)' | sed -n 's/^blob //p'); do git cat-file -p $o; done"
    )
    assert (
        OLD
        in subprocess.run(["bash", "-c", blobs], cwd=ws, capture_output=True, text=True, timeout=60, check=True).stdout
    )

    text = await run(ws, f"{blobs}; cat notes.txt; git log -1 >/dev/null")  # the last fails: the note is told

    assert OLD not in text, text
    assert PLAIN in text, text
    assert f"the history of the git repository at {ws} is hidden" in text, text
