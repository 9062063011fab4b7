"""The README's reference sections stay in step with the code they describe."""

import re
from pathlib import Path

from kairox.cli._common import ExitCode
from kairox.config._reference import config_reference

README = Path(__file__).resolve().parents[1] / "README.md"


def test_config_reference_matches_the_models() -> None:
    text = README.read_text(encoding="utf-8")
    section = re.search(r"<!-- config-reference:start -->\n(.*)<!-- config-reference:end -->", text, re.S)
    assert section is not None
    assert section.group(1) == config_reference(), "run `kairox config reference` and paste it into README.md"


def test_every_exit_code_is_documented() -> None:
    text = README.read_text(encoding="utf-8")
    for code in ExitCode:
        assert f"| {int(code)} | `{code.name}` |" in text


def test_readme_names_the_two_commands() -> None:
    text = README.read_text(encoding="utf-8")
    assert "make demo" in text and "make test" in text
