"""Key descriptions come from the docstrings under the fields, read when asked, exactly as pydantic reads them."""

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from kairox.config import KairoxConfig, McpServerConfig
from kairox.config._field_docs import field_description


class Base(BaseModel):
    inherited: int = 0
    """Declared in the base class.

        Indented continuation lines are dedented, as in any docstring.
    """


class ReadByKairox(Base):
    """The class docstring is not a field's."""

    plain: str = ""
    """One line."""
    explicit: str = Field(default="", description="Given in Field")
    """The docstring loses to an explicit description."""
    undocumented: bool = False
    after_gap: int = 1

    """A string after a blank line still documents the field above it."""
    _private = 3
    """Documents no field: the line above is not annotated."""
    mode: Literal["a", "b"] = "a"
    """Two modes."""


class ReadByPydantic(Base):
    """The class docstring is not a field's."""

    model_config = ConfigDict(use_attribute_docstrings=True)

    plain: str = ""
    """One line."""
    explicit: str = Field(default="", description="Given in Field")
    """The docstring loses to an explicit description."""
    undocumented: bool = False
    after_gap: int = 1

    """A string after a blank line still documents the field above it."""
    _private = 3
    """Documents no field: the line above is not annotated."""
    mode: Literal["a", "b"] = "a"
    """Two modes."""


class BaseByPydantic(BaseModel, use_attribute_docstrings=True):
    inherited: int = 0
    """Declared in the base class.

        Indented continuation lines are dedented, as in any docstring.
    """


def test_descriptions_are_what_pydantic_reads_from_the_same_source() -> None:
    ours = {name: field_description(ReadByKairox, name) for name in ReadByKairox.model_fields}
    pydantics = {name: field.description for name, field in ReadByPydantic.model_fields.items()}
    pydantics["inherited"] = BaseByPydantic.model_fields["inherited"].description
    assert (
        ours
        == pydantics
        == {
            "inherited": (
                "Declared in the base class.\n\nIndented continuation lines are dedented, as in any docstring."
            ),
            "plain": "One line.",
            "explicit": "Given in Field",
            "undocumented": None,
            "after_gap": "A string after a blank line still documents the field above it.",
            "mode": "Two modes.",
        }
    )


def test_the_config_models_carry_no_description_until_the_reference_reads_one() -> None:
    # the models no longer parse their own source on import; the reference reads the docstrings on demand
    assert McpServerConfig.model_fields["command"].description is None
    assert (
        field_description(McpServerConfig, "command")
        == "Program of a stdio server; ``${VAR}`` and ``${VAR:-default}`` expand."
    )
    assert field_description(KairoxConfig, "profile") == "Profile applied when ``--profile`` is not given."
    assert field_description(KairoxConfig, "policy") is None
