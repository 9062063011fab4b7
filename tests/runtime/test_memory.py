"""C7: project memory from the repository root down to the working directory."""

from pathlib import Path

import pytest

from kairox.config import InstructionsConfig
from kairox.runtime._memory import gather_memory, instruction_text


def test_one_memory_file_per_folder_from_root_down_with_fallbacks(tmp_path: Path) -> None:
    (tmp_path / "AGENTS.md").write_text("root rules")
    (tmp_path / "CLAUDE.md").write_text("ignored: AGENTS.md is there")
    service = tmp_path / "services" / "api"
    service.mkdir(parents=True)
    (tmp_path / "services" / "CLAUDE.md").write_text("services fallback")
    (service / "KAIROX.md").write_text("api rules")
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "AGENTS.md").write_text("not on the way down")
    found = gather_memory(tmp_path, service, InstructionsConfig())
    assert [(m.path, m.text, m.truncated) for m in found] == [
        (tmp_path / "AGENTS.md", "root rules", False),
        (tmp_path / "services" / "CLAUDE.md", "services fallback", False),
        (service / "KAIROX.md", "api rules", False),
    ]


def test_memory_is_capped_and_the_root_survives(tmp_path: Path) -> None:
    (tmp_path / "AGENTS.md").write_text("r" * 200)
    deep = tmp_path / "a"
    deep.mkdir()
    (deep / "AGENTS.md").write_text("d" * 500)
    (deep / "b").mkdir()
    (deep / "b" / "AGENTS.md").write_text("never read")
    found = gather_memory(tmp_path, deep / "b", InstructionsConfig(max_bytes=300))
    assert [m.path for m in found] == [tmp_path / "AGENTS.md", deep / "AGENTS.md"]
    assert found[0].text == "r" * 200 and not found[0].truncated
    assert found[1].truncated and found[1].text.startswith("d" * 100)
    assert "cut at the 300-byte memory budget" in found[1].text


def test_memory_files_that_lead_out_of_the_repository_are_not_read(tmp_path: Path) -> None:
    secret = tmp_path / "home" / ".aws" / "credentials"
    secret.parent.mkdir(parents=True)
    secret.write_text("aws_secret_access_key = abc")
    root = tmp_path / "repo"
    (root / "sub").mkdir(parents=True)
    (root / "AGENTS.md").symlink_to(secret)  # a cloned repository can hold such a link
    (root / "sub" / "AGENTS.md").write_text("sub rules")
    assert [m.text for m in gather_memory(root, root / "sub", InstructionsConfig())] == ["sub rules"]
    escaping = InstructionsConfig(memory_files=["../home/.aws/credentials"], fallback_memory_files=[])
    assert gather_memory(root, root, escaping) == []


def test_instruction_files_of_an_untrusted_project_stay_inside_the_workspace(tmp_path: Path) -> None:
    (tmp_path / "secret.txt").write_text("token-123")
    root = tmp_path / "repo"
    root.mkdir()
    (root / "notes.md").write_text("Use tabs.")
    settings = InstructionsConfig(files=["notes.md", "../secret.txt", str(tmp_path / "secret.txt")])
    assert instruction_text(root, settings, confine_to=root) == [
        ("notes.md", "Use tabs."),
        (
            "../secret.txt",
            "[not read: it is outside the workspace, which is not trusted; `kairox trust` lets project files name it]",
        ),
        (
            str(tmp_path / "secret.txt"),
            "[not read: it is outside the workspace, which is not trusted; `kairox trust` lets project files name it]",
        ),
    ]
    # the user's own files (or a trusted project's) may name any file
    assert instruction_text(root, settings)[1] == ("../secret.txt", "token-123")


def test_instruction_files_expand_the_home_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    (tmp_path / "style.md").write_text("Be brief.")
    assert instruction_text(tmp_path / "elsewhere", InstructionsConfig(files=["~/style.md"])) == [
        ("~/style.md", "Be brief.")
    ]
