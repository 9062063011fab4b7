"""``@path`` imports in memory files: expanded inside the workspace, nested to a bound, read rules applied."""

import os
from pathlib import Path

from tests.helpers import kairox

from kairox.config import InstructionsConfig, trust_workspace
from kairox.runtime._imports import MAX_IMPORT_DEPTH
from kairox.runtime._memory import gather_memory


def memory_text(root: Path) -> str:
    (found,) = gather_memory(root, root, InstructionsConfig())
    return found.text


def test_an_import_brings_the_files_text_in_and_nested_imports_too(tmp_path: Path) -> None:
    (tmp_path / "docs").mkdir()
    (tmp_path / "CLAUDE.md").write_text("# Rules\nSee @docs/style.md for style.\nMail me: me@example.com\n")
    (tmp_path / "docs" / "style.md").write_text("Use tabs.\n@../testing.md\n")
    (tmp_path / "testing.md").write_text("Run pytest.\n")
    assert memory_text(tmp_path) == "# Rules\nSee Use tabs.\nRun pytest. for style.\nMail me: me@example.com"


def test_imports_in_code_are_left_as_written(tmp_path: Path) -> None:
    (tmp_path / "style.md").write_text("imported")
    (tmp_path / "AGENTS.md").write_text("Use `@style.md` literally.\n```\n@style.md\n```\n@style.md\n")
    assert memory_text(tmp_path) == "Use `@style.md` literally.\n```\n@style.md\n```\nimported"


def test_imports_nest_only_to_the_depth_bound_and_a_cycle_is_read_once(tmp_path: Path) -> None:
    levels = MAX_IMPORT_DEPTH + 2
    for n in range(1, levels + 1):
        (tmp_path / f"l{n}.md").write_text(f"level {n}" + (f" @l{n + 1}.md" if n < levels else " @CLAUDE.md"))
    (tmp_path / "CLAUDE.md").write_text("top @l1.md")
    expected = "top " + " ".join(f"level {n}" for n in range(1, MAX_IMPORT_DEPTH + 1))
    expected += f" [@l{MAX_IMPORT_DEPTH + 1}.md not imported: imports nest at most {MAX_IMPORT_DEPTH} levels]"
    assert memory_text(tmp_path) == expected
    (tmp_path / "l2.md").write_text("level 2 @CLAUDE.md")
    assert memory_text(tmp_path) == "top level 1 level 2 [@CLAUDE.md already imported above]"


def test_an_import_outside_the_workspace_is_refused(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    root.mkdir()
    (tmp_path / "secret.md").write_text("outside text")
    (root / "link.md").symlink_to(tmp_path / "secret.md")
    (root / "CLAUDE.md").write_text(f"@../secret.md\n@{tmp_path / 'secret.md'}\n@link.md\n")
    assert memory_text(root) == (
        "[@../secret.md not imported: it is outside the workspace]\n"
        f"[@{tmp_path / 'secret.md'} not imported: it is outside the workspace]\n"
        "[@link.md not imported: it is outside the workspace]"
    )


def test_an_import_the_read_rules_deny_is_refused_in_the_prompt(tmp_path: Path, isolated_home: Path) -> None:
    root = tmp_path / "repo"
    (root / ".git").mkdir(parents=True)
    (root / "secrets").mkdir()
    (root / "secrets" / "keys.md").write_text("KEY=hunter2")
    (root / "notes.md").write_text("plain notes")
    (root / "AGENTS.md").write_text("@notes.md\n@secrets/keys.md\n")
    (isolated_home / "kairox.toml").write_text('[policy.rules]\ndeny = ["fs.read(secrets/**)"]\n')
    trust_workspace(root)
    run = kairox("context", cwd=root)
    assert run.code == 0, run.stderr
    assert "plain notes" in run.stdout
    assert "hunter2" not in run.stdout
    assert "[@secrets/keys.md not imported: the read rules refuse it (" in run.stdout


def test_an_import_of_another_name_of_a_denied_file_is_refused_in_the_prompt(
    tmp_path: Path, isolated_home: Path
) -> None:
    root = tmp_path / "repo"
    (root / "secrets").mkdir(parents=True)
    (root / "secrets" / "keys.md").write_text("KEY=hunter2")
    os.link(root / "secrets" / "keys.md", root / "notes.md")  # a hard link made before the rule
    (root / "AGENTS.md").write_text("@notes.md\n")
    (isolated_home / "kairox.toml").write_text('[policy.rules]\ndeny = ["fs.read(secrets/**)"]\n')
    trust_workspace(root)
    run = kairox("context", cwd=root)
    assert run.code == 0, run.stderr
    assert "hunter2" not in run.stdout
    assert (
        f"[@notes.md not imported: the read rules refuse it ({root / 'notes.md'} is another name (hard link) of"
        in run.stdout
    )
