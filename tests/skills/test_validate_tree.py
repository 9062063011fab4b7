"""S1, S2: `kairox skills validate` reads the skill roots hosts keep in dot-folders and names what it passes over."""

from pathlib import Path

from tests.helpers import kairox


def _skill(folder: Path, name: str) -> Path:
    folder.mkdir(parents=True)
    file = folder / "SKILL.md"
    file.write_text(f"---\nname: {name}\ndescription: Does {name} things when asked.\n---\nSteps.\n", encoding="utf-8")
    return file


def test_codex_collections_in_dot_folders_of_a_skills_folder_are_read(tmp_path: Path) -> None:
    # the layout of a public skills repository: skills/.curated, skills/.system, skills/.experimental
    for collection, name in (
        (".curated", "pdf"),
        (".curated", "docx"),
        (".system", "skill-installer"),
        (".experimental", "canvas"),
    ):
        _skill(tmp_path / "skills" / collection / name, name)
    run = kairox("skills", "validate", tmp_path, "--json")
    assert run.code == 0, run.stderr
    data = run.json()
    assert sorted(s["name"] for s in data["skills"]) == ["canvas", "docx", "pdf", "skill-installer"]
    assert data["counts"]["loaded"] == 4
    text = kairox("skills", "validate", tmp_path / "skills")
    assert text.stdout == "4 skill(s) loaded from 4 file(s); 0 skipped; 0 error(s), 0 warning(s)\n"


def test_host_skill_roots_inside_dot_folders_are_read_and_other_skill_files_reported(tmp_path: Path) -> None:
    _skill(tmp_path / ".agents" / "skills" / "review", "review")
    _skill(tmp_path / ".claude" / "skills" / "deploy", "deploy")
    stray = _skill(tmp_path / ".github" / "templates" / "draft", "draft")
    run = kairox("skills", "validate", tmp_path, "--json")
    assert run.code == 0, run.stderr
    data = run.json()
    assert sorted(s["name"] for s in data["skills"]) == ["deploy", "review"]
    assert data["counts"]["passed_over"] == 1
    assert [(d["severity"], d["path"], d["reason"]) for d in data["diagnostics"]] == [
        ("info", str(stray), "skipped: it lies in a dot-folder that is not a skill root Kairox reads"),
    ]
    text = kairox("skills", "validate", tmp_path)
    assert (
        text.stdout == "2 skill(s) loaded from 2 file(s); 0 skipped; 0 error(s), 0 "
        "warning(s); 1 in other dot-folders not read (--verbose names them)\n"
    )
    assert kairox("skills", "validate", tmp_path, "--verbose").stderr.startswith(
        f"info: {stray}: skill 'draft': skipped:"
    )


def test_a_folder_with_skill_files_but_no_loaded_skill_says_so(tmp_path: Path) -> None:
    _skill(tmp_path / ".drafts" / "one", "one")
    run = kairox("skills", "validate", tmp_path)
    assert run.code == 0
    assert (
        run.stdout == "0 skill(s) loaded from 0 file(s); 0 skipped; 0 error(s), 1 "
        "warning(s); 1 in other dot-folders not read (--verbose names them)\n"
    )
    assert run.stderr == (
        f"warning: {tmp_path}: skill '{tmp_path.name}': no skill was loaded, though the folder holds SKILL.md files "
        "(see the diagnostics above, and --verbose)\n"
    )
    empty = tmp_path / "empty"
    empty.mkdir()
    quiet = kairox("skills", "validate", empty)
    assert (quiet.code, quiet.stderr) == (0, "")
