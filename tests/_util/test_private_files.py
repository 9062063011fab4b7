"""Private files never change a folder Kairox does not own: a file opened in an existing folder leaves the folder as
it is (a log written to /dev/null must not lock /dev), and tightening a home holds back from a shared folder."""

import stat
from pathlib import Path

from kairox._util._files import open_private, tighten


def mode(path: Path) -> int:
    return stat.S_IMODE(path.lstat().st_mode)


def test_a_private_file_in_an_existing_open_folder_leaves_the_folder_open(tmp_path: Path) -> None:
    shared = tmp_path / "shared"
    shared.mkdir(mode=0o755)
    shared.chmod(0o755)
    (shared / "other.txt").write_text("someone else's\n")
    (shared / "other.txt").chmod(0o644)
    with open_private(shared / "mine.log", "ab") as handle:
        handle.write(b"x\n")
    with open_private(tmp_path / "new" / "deeper" / "mine.log", "ab") as handle:
        handle.write(b"x\n")
    assert (mode(shared), mode(shared / "other.txt"), mode(shared / "mine.log")) == (0o755, 0o644, 0o600)
    assert (mode(tmp_path / "new" / "deeper"), mode(tmp_path / "new" / "deeper" / "mine.log")) == (0o700, 0o600)


def test_tightening_a_home_changes_its_own_kept_folders_and_never_a_shared_one(tmp_path: Path) -> None:
    home = tmp_path / "home"
    (home / "sessions").mkdir(parents=True)
    (home / "plugins" / "p").mkdir(parents=True)
    for path, wanted in ((home / "sessions" / "a.jsonl", 0o644), (home / "plugins" / "p" / "run.sh", 0o755)):
        path.write_text("x\n")
        path.chmod(wanted)
    for folder in (home, home / "sessions", home / "plugins"):
        folder.chmod(0o755)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    elsewhere.chmod(0o755)
    (elsewhere / "f.txt").write_text("x\n")
    (elsewhere / "f.txt").chmod(0o644)
    (home / "sessions" / "outside").symlink_to(elsewhere)
    tighten(home)
    assert (mode(home), mode(home / "sessions"), mode(home / "sessions" / "a.jsonl")) == (0o700, 0o700, 0o600)
    assert (mode(home / "plugins"), mode(home / "plugins" / "p" / "run.sh")) == (0o755, 0o755)  # not kept there
    assert (mode(elsewhere), mode(elsewhere / "f.txt")) == (0o755, 0o644)  # a link is not followed
    shared = tmp_path / "tmp"
    (shared / "sessions").mkdir(parents=True)
    shared.chmod(0o1777)
    (shared / "sessions").chmod(0o755)
    tighten(shared)
    assert (mode(shared), mode(shared / "sessions")) == (0o1777, 0o755)
