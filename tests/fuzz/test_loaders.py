"""Property-based fuzzing of every loader of outside input: configuration, frontmatter, each JSON manifest,
``.mcp.json``, and the replies of MCP servers, language servers and debug adapters. Whatever the input, the
loader returns data and diagnostics; a hostile input (nesting past the limit, an integer Python refuses to
convert, a NUL byte in a path) comes back as a diagnostic with its file and line."""

from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from tests.fuzz._loaders import LOADERS, Loader

pytestmark = pytest.mark.timeout(600)


@pytest.fixture(scope="module")
def scratch(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("fuzz")


@pytest.mark.parametrize("loader", LOADERS, ids=[loader.name for loader in LOADERS])
def test_a_loader_turns_any_input_into_data_and_diagnostics(loader: Loader, scratch: Path) -> None:
    @given(loader.inputs)
    def run(value: Any) -> None:
        loader.check(value, scratch / loader.name)

    run()
