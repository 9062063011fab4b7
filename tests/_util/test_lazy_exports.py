"""Packages whose names load on first use keep one API: what the type checker sees, what ``__all__`` lists and
what a read loads are the same names from the same modules."""

import ast
import importlib
import re
import subprocess
import sys
from pathlib import Path

import pytest

import kairox

LAZY_PACKAGES = ["kairox.config", "kairox.mcp", "kairox.tools"]


def declared(package: str) -> tuple[set[tuple[str, str]], set[tuple[str, str]], set[str]]:
    """(module, name) imported under TYPE_CHECKING, (module, name) given to lazy_exports, and ``__all__``."""
    init = Path(kairox.__file__).parent.parent / package.replace(".", "/") / "__init__.py"
    tree = ast.parse(init.read_text())
    checked: set[tuple[str, str]] = set()
    lazy: set[tuple[str, str]] = set()
    listed: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING":
            for statement in node.body:
                assert isinstance(statement, ast.ImportFrom) and statement.module
                checked |= {(statement.module, alias.name) for alias in statement.names}
        elif isinstance(node, ast.If) and isinstance(node.test, ast.UnaryOp):  # if not TYPE_CHECKING
            call = node.body[0].value
            table = call.args[1]
            for module, names in zip(table.keys, table.values, strict=True):
                where = module.value if not module.value.startswith(".") else package + module.value
                lazy |= {(where, element.value) for element in names.elts}
        elif isinstance(node, ast.Assign) and getattr(node.targets[0], "id", None) == "__all__":
            listed = {element.value for element in node.value.elts}
    return checked, lazy, listed


@pytest.mark.parametrize("package", LAZY_PACKAGES)
def test_the_type_checkers_names_the_lazy_table_and_all_agree(package: str) -> None:
    checked, lazy, listed = declared(package)
    assert checked == lazy
    assert {name for _module, name in lazy} == listed


@pytest.mark.parametrize("package", LAZY_PACKAGES)
def test_every_name_reads_as_the_object_its_module_defines(package: str) -> None:
    checked, _lazy, _listed = declared(package)
    api = importlib.import_module(package)
    for module, name in sorted(checked):
        assert getattr(api, name) is getattr(importlib.import_module(module), name), f"{package}.{name}"
    assert set(api.__all__) <= set(dir(api))


def test_an_unknown_name_is_an_attribute_error() -> None:
    import kairox.config

    with pytest.raises(AttributeError, match=re.escape("module 'kairox.config' has no attribute 'McpServerConfg'")):
        kairox.config.McpServerConfg  # noqa: B018
    assert not hasattr(kairox.config, "McpServerConfg")


def test_reading_one_name_loads_its_module_only() -> None:
    probe = (
        "import sys\nfrom kairox.config import kairox_home\n"
        "print(sorted(m for m in sys.modules if m.startswith('kairox.config.')))"
    )
    run = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60, check=True)
    assert run.stdout.strip() == "['kairox.config._layers']"
