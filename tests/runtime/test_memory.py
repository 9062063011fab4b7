"""C7: project memory from the repository root down to the working directory."""

from pathlib import Path

from kairox.config import InstructionsConfig
from kairox.runtime import gather_memory


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
