"""What fs.read deny and ask rules hide from sandboxed commands: which paths, found how, and when nothing is done."""

import os
import subprocess
from pathlib import Path

from kairox.policy import Rule, read_mask
from kairox.sandbox import HiddenPaths


def hidden(ws: Path, *patterns: str, action: str = "deny", roots: tuple[Path, ...] = ()) -> HiddenPaths:
    mask = read_mask(
        tuple(Rule(action=action, pattern=p) for p in patterns), workspace=ws, home=ws.parent / "home", roots=roots
    )
    assert mask is not None
    return mask()


def tree(ws: Path, *names: str) -> None:
    for name in names:
        path = ws / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("x")


def test_no_read_rule_means_nothing_to_work_out(tmp_path: Path) -> None:
    rules = (
        Rule(action="deny", pattern="fs.write(secrets/**)"),
        Rule(action="allow", pattern="fs.read(secrets/**)"),
        Rule(action="deny", pattern="fs.read"),
    )
    assert read_mask(rules, workspace=tmp_path, home=tmp_path) is None


def test_a_folder_rule_hides_the_folder_whole_and_a_literal_path_itself(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    tree(ws, "secrets/a/b.txt", "id.txt", "keep.txt", "../home/.ssh/id_rsa")
    assert hidden(
        ws, "fs.read(secrets/**)", "fs.read(id.txt)", "fs.read(~/.ssh/**)", "fs.read(absent/**)"
    ) == HiddenPaths(files=(ws / "id.txt",), folders=(tmp_path / "home" / ".ssh", ws / "secrets"))


def test_globs_are_searched_below_their_folder_skipping_git_and_symlinks(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    tree(
        ws,
        "a/b/c/.env",
        ".env",
        "a/.env.example",
        ".git/x/.env",
        "config/one.key",
        "config/sub/two.key",
        "config/k.txt",
    )
    (ws / "link").symlink_to(ws / "a")
    (ws / "dir.env").mkdir()
    found = hidden(ws, "fs.read(**/.env)", "fs.read(config/*.key)", "fs.read(*.env)", action="ask")
    assert found == HiddenPaths(
        files=(ws / ".env", ws / "a" / "b" / "c" / ".env", ws / "config" / "one.key"), folders=(ws / "dir.env",)
    )


def test_name_globs_search_the_configured_roots_too(tmp_path: Path) -> None:
    ws, other = tmp_path / "ws", tmp_path / "other"
    tree(ws, "x.txt")
    tree(other, "deep/cert.pem")
    assert hidden(ws, "fs.read(*.pem)", roots=(ws, other)).files == (other / "deep" / "cert.pem",)


def git(where: Path, *args: str) -> None:
    subprocess.run(
        ["git", *args],
        cwd=where,
        capture_output=True,
        check=True,
        timeout=60,
        env={**os.environ, "GIT_CONFIG_GLOBAL": "/dev/null"},
    )


def commit(where: Path, *paths: str) -> None:
    git(where, "add", "-f", *paths)
    git(where, "-c", "user.name=t", "-c", "user.email=t@example.invalid", "commit", "-qm", "x")


def test_a_rule_hides_the_history_of_the_repositories_it_reaches(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    tree(ws, "secrets/key.txt", "old.pem", "vendor/lib/a.txt", "vendor/lib/lib.pem")
    git(ws / "vendor" / "lib", "init", "-q")  # a repository inside: reached by the name rule's search only
    commit(ws / "vendor" / "lib", "lib.pem")
    (ws / "vendor" / "lib" / "lib.pem").unlink()
    git(ws, "init", "-q")
    commit(ws, "secrets", "old.pem")  # each history holds what the rules hide
    (ws / "old.pem").unlink()
    (ws / ".git" / "COMMIT_EDITMSG").write_text("x")
    (ws / ".git" / "rr-cache").mkdir()
    git(tmp_path, "init", "-q", "--bare", "elsewhere.git")

    by_folder = read_mask((Rule(action="deny", pattern="fs.read(secrets/**)"),), workspace=ws, home=tmp_path / "home")
    by_name = read_mask((Rule(action="deny", pattern="fs.read(*.pem)"),), workspace=ws, home=tmp_path / "home")
    assert by_folder is not None and by_name is not None
    folder, name = by_folder.work_out(), by_name.work_out()

    assert folder.hidden.folders == (ws / ".git" / "objects", ws / ".git" / "rr-cache", ws / "secrets")
    assert folder.hidden.files == (ws / ".git" / "COMMIT_EDITMSG",)
    assert name.hidden.folders == (
        ws / ".git" / "objects",
        ws / ".git" / "rr-cache",
        ws / "vendor" / "lib" / ".git" / "objects",
    )
    why = folder.why(ws / ".git" / "objects" / "pack" / "x.pack")
    assert (
        why == f"{ws / '.git' / 'objects' / 'pack' / 'x.pack'} holds the history of the git repository "
        f"at {ws}, which is hidden because deny rule 'fs.read(secrets/**)' reaches it"
    )
    assert folder.why(ws / ".git" / "HEAD") is None and folder.why(ws / "vendor" / "lib" / "a.txt") is None


def test_a_linked_worktree_and_borrowed_stores_are_followed_to_the_shared_history(tmp_path: Path) -> None:
    main, ws, shared = tmp_path / "main", tmp_path / "ws", tmp_path / "shared"
    tree(main, "secrets/key.txt")
    git(main, "init", "-q")
    commit(main, "secrets")
    git(main, "worktree", "add", "-q", str(ws))
    git(tmp_path, "init", "-q", "--bare", str(shared))
    (main / ".git" / "objects" / "info" / "alternates").write_text(f"{shared / 'objects'}\n")

    found = hidden(ws, "fs.read(secrets/**)")

    assert found.folders == (main / ".git" / "objects", shared / "objects", ws / "secrets")


def test_other_names_of_hidden_files_are_hidden_with_them_or_refuse(tmp_path: Path) -> None:
    ws, other = tmp_path / "ws", tmp_path / "other"
    tree(ws, "secrets/key.txt", "secrets/deep/two.txt", "id.txt", "plain.txt")
    other.mkdir()
    os.link(ws / "secrets" / "key.txt", ws / "copy.txt")
    os.link(ws / "secrets" / "key.txt", other / "copy.txt")
    os.link(ws / "secrets" / "deep" / "two.txt", ws / "secrets" / "two-again.txt")  # both names hidden already
    os.link(ws / "id.txt", tmp_path / "away.txt")

    inside = hidden(ws, "fs.read(secrets/**)", roots=(ws, other))
    outside = hidden(ws, "fs.read(id.txt)")

    assert inside.files == (other / "copy.txt", ws / "copy.txt") and inside.problem is None
    assert outside.problem == (
        f"{ws / 'id.txt'} (deny rule 'fs.read(id.txt)') has 1 other "
        "name(s) outside the workspace and the writable roots "
        "(hard links), where a command could read it"
    )
    assert outside.hint is not None and "-samefile" in outside.hint


def test_past_the_limit_the_search_for_other_names_refuses(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    tree(ws, "secrets/key.txt", *(f"many/f{i}" for i in range(30)))
    os.link(ws / "secrets" / "key.txt", ws / "many" / "copy")
    mask = read_mask((Rule(action="deny", pattern="fs.read(secrets/**)"),), workspace=ws, home=tmp_path / "home")
    assert mask is not None
    mask.limit = 20

    assert (
        mask().problem == "more than 20 files and folders to search for other names (hard "
        "links) of the files they hide (deny rule 'fs.read(secrets/**)')"
    )
