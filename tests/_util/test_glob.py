import re

from kairox._util._glob import glob_to_regex


def matches(glob: str, path: str, **options: bool) -> bool:
    return re.fullmatch(glob_to_regex(glob, **options), path, re.DOTALL) is not None


def test_star_stays_in_one_folder_and_double_star_crosses_them() -> None:
    assert matches("src/*.py", "src/a.py") and not matches("src/*.py", "src/pkg/a.py")
    assert matches("src/**/*.py", "src/a.py") and matches("src/**/*.py", "src/pkg/deep/a.py")
    assert matches("a?c", "abc") and not matches("a?c", "a/c")


def test_character_classes_and_negation() -> None:
    assert matches("file[0-9].txt", "file7.txt") and not matches("file[0-9].txt", "fileX.txt")
    assert matches("file[!0-9].txt", "fileX.txt") and not matches("file[!0-9].txt", "file7.txt")
    assert matches("odd[", "odd[")


def test_trailing_double_star_covers_the_folder_itself_only_when_asked() -> None:
    assert matches("dist/**", "dist/a/b") and not matches("dist/**", "dist")
    assert matches("dist/**", "dist", dir_itself=True)


def test_braces_are_alternatives_only_when_asked() -> None:
    assert matches("*.{py,pyi}", "a.pyi", braces=True) and not matches("*.{py,pyi}", "a.js", braces=True)
    assert matches("*.{py,pyi}", "a.{py,pyi}") and not matches("*.{py,pyi}", "a.py")
