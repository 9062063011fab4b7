"""Columns between the model (characters from 1) and servers (code units from 0), and file patterns."""

from pathlib import Path, PurePosixPath

import pytest

from kairox.lsp._text import matches_pattern, to_model_column, to_server_character

LINE = 'g = Greeter("wörld 🎉"); print(g.greet())'  # "greet" starts at character 33


@pytest.mark.parametrize(("encoding", "character"), [("utf-16", 33), ("utf-8", 36), ("utf-32", 32)])
def test_a_column_after_non_ascii_text_converts_both_ways(encoding: str, character: int) -> None:
    assert to_server_character(LINE, 33, encoding) == character
    assert to_model_column(LINE, character, encoding) == 33


def test_a_column_past_the_end_of_the_line_stays_at_its_end() -> None:
    assert to_model_column("abc", 10, "utf-16") == 4
    assert to_model_column("abc", 10, "utf-32") == 4


@pytest.mark.parametrize(
    ("path", "pattern", "expected"),
    [
        ("pkg/main.py", "*.py", True),
        ("pkg/main.pyi", "*.py", False),
        ("src/a/b.ts", "src/**/*.ts", True),
        ("lib/b.ts", "src/**/*.ts", False),
        ("src/b.ts", "src/**/*.ts", True),
        ("web/app.tsx", "*.{ts,tsx}", True),
        ("main.py", "./*.py", True),
    ],
)
def test_file_patterns_match_names_anywhere_and_paths_from_the_root(path: str, pattern: str, expected: bool) -> None:
    assert matches_pattern(PurePosixPath(path), pattern) is expected


def test_a_reply_naming_a_file_with_a_nul_byte_renders_as_a_missing_file(tmp_path: Path) -> None:
    from kairox.config import LspServerConfig
    from kairox.lsp._client import LspClient
    from kairox.lsp._render import locations

    client = LspClient("x", LspServerConfig(command="true"), workspace=tmp_path)
    where = {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 1}}
    found = locations(
        client, [{"uri": "file:///a%00b.py", "range": where}, {"uri": "file:///c\x00d.py", "range": where}]
    )
    assert [item["path"] for item in found] == ["/a\ufffdb.py", "/c\ufffdd.py"]
    assert [item["text"] for item in found] == ["", ""]
