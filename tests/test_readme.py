"""The README's reference sections stay in step with the code they describe."""

import re
from pathlib import Path

from kairox.cli._common import ExitCode
from kairox.config._reference import config_reference

README = Path(__file__).resolve().parents[1] / "README.md"
CONFIGURATION = README.parent / "docs" / "configuration.md"


def test_config_reference_matches_the_models() -> None:
    text = CONFIGURATION.read_text(encoding="utf-8")
    section = re.search(r"<!-- config-reference:start -->\n(.*)<!-- config-reference:end -->", text, re.S)
    assert section is not None
    assert section.group(1) == config_reference(), "run `kairox config reference` and paste it into the file"


def test_the_reference_and_the_performance_notes_live_in_docs_after_the_command_line_table() -> None:
    text = README.read_text(encoding="utf-8")
    assert "config-reference:start" not in text and "bench/mcp_native_startup.py" not in text
    headings = [line for line in text.splitlines() if line.startswith("## ")]
    assert headings.index("## Command line") < headings.index("## Configuration") < headings.index("## Performance")
    assert "(docs/configuration.md)" in text and "(docs/performance.md)" in text
    assert "bench/mcp_stack_choice.py" in (README.parent / "docs" / "performance.md").read_text(encoding="utf-8")


def test_every_exit_code_is_documented() -> None:
    text = README.read_text(encoding="utf-8")
    for code in ExitCode:
        assert f"| {int(code)} | `{code.name}` |" in text


def test_readme_names_the_two_commands() -> None:
    text = README.read_text(encoding="utf-8")
    assert "make demo" in text and "make test" in text


SECURITY = README.parent / "docs" / "security.md"


def _section(text: str, heading: str) -> str:
    return text.split(f"\n{heading}\n", 1)[1].split("\n## ", 1)[0]


def test_the_first_screen_says_what_kairox_is_and_how_to_use_it_as_an_agent() -> None:
    text = README.read_text(encoding="utf-8")
    first_screen = "\n".join(text.splitlines()[:40])
    for words in (
        "`kairox tui`",
        "`kairox run",
        "`kairox serve`",
        "Claude Code",
        "Codex",
        "Gemini CLI",
        "docs/embedding.md",
    ):
        assert words in first_screen, words
    steps = _section(text, "## Use it as your agent in three steps")
    assert "_API_KEY=" in steps and "kairox config set model " in steps and "kairox tui" in steps
    assert "source .venv/bin/activate" in steps and '.venv/bin:$PATH"' in steps


def test_running_a_model_comes_before_the_front_ends() -> None:
    headings = [line for line in README.read_text(encoding="utf-8").splitlines() if line.startswith("## ")]
    assert (
        headings.index("## Running a model")
        < headings.index("## The terminal UI")
        < headings.index("## Security: the gate")
    )


def test_the_security_detail_lives_in_docs_security_with_a_summary_in_the_readme() -> None:
    text = README.read_text(encoding="utf-8")
    doc = SECURITY.read_text(encoding="utf-8")
    summary = _section(text, "## Security: the gate") + _section(text, "## Security: sandbox and trust")
    assert len(summary.splitlines()) < 60 and "docs/security.md" in summary
    for heading in ("## Security: the gate", "## Security: sandbox and trust"):
        assert f"\n{heading}\n" in doc
    # facts that are only in the long form
    for fact in (
        "`/var/lib/mysql/mysql.sock`",
        "**Read rules hold on every way out.**",
        "**Rules on an MCP tool's values vouch only for what they name.**",
        "**Every server Kairox starts runs in the sandbox too.**",
        "`.venv/bin/python bench/confined_servers.py`",
        "src/kairox/policy/_exec_table.py",
    ):
        assert fact in doc and fact not in text, fact


def test_examples_after_make_demo_use_the_demos_home() -> None:
    quick = _section(README.read_text(encoding="utf-8"), "## Quick start")
    block = quick.split("```sh", 2)[2]
    assert 'export KAIROX_HOME="$PWD/build/demo-home"' in block.splitlines()[1]
