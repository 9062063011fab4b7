"""What fs.read deny and ask rules hide from sandboxed commands: which paths, found how, and when nothing is done."""

from pathlib import Path

from kairox.policy import Rule, read_mask
from kairox.tools import HiddenPaths


def hidden(ws: Path, *patterns: str, action: str = "deny", roots: tuple[Path, ...] = ()) -> HiddenPaths:
    mask = read_mask(tuple(Rule(action=action, pattern=p) for p in patterns), workspace=ws, home=ws.parent / "home", roots=roots)
    assert mask is not None
    return mask()


def tree(ws: Path, *names: str) -> None:
    for name in names:
        path = ws / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("x")


def test_no_read_rule_means_nothing_to_work_out(tmp_path: Path) -> None:
    rules = (Rule(action="deny", pattern="fs.write(secrets/**)"), Rule(action="allow", pattern="fs.read(secrets/**)"), Rule(action="deny", pattern="fs.read"))
    assert read_mask(rules, workspace=tmp_path, home=tmp_path) is None


def test_a_folder_rule_hides_the_folder_whole_and_a_literal_path_itself(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    tree(ws, "secrets/a/b.txt", "id.txt", "keep.txt", "../home/.ssh/id_rsa")
    assert hidden(ws, "fs.read(secrets/**)", "fs.read(id.txt)", "fs.read(~/.ssh/**)", "fs.read(absent/**)") == HiddenPaths(
        files=(ws / "id.txt",), folders=(tmp_path / "home" / ".ssh", ws / "secrets")
    )


def test_globs_are_searched_below_their_folder_skipping_git_and_symlinks(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    tree(ws, "a/b/c/.env", ".env", "a/.env.example", ".git/x/.env", "config/one.key", "config/sub/two.key", "config/k.txt")
    (ws / "link").symlink_to(ws / "a")
    (ws / "dir.env").mkdir()
    found = hidden(ws, "fs.read(**/.env)", "fs.read(config/*.key)", "fs.read(*.env)", action="ask")
    assert found == HiddenPaths(files=(ws / ".env", ws / "a" / "b" / "c" / ".env", ws / "config" / "one.key"), folders=(ws / "dir.env",))


def test_name_globs_search_the_configured_roots_too(tmp_path: Path) -> None:
    ws, other = tmp_path / "ws", tmp_path / "other"
    tree(ws, "x.txt")
    tree(other, "deep/cert.pem")
    assert hidden(ws, "fs.read(*.pem)", roots=(ws, other)).files == (other / "deep" / "cert.pem",)
