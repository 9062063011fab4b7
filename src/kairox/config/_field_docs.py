"""The description of every config key: the docstring under its field in the models' source, read on first use.

Reading docstrings from source is what pydantic's ``use_attribute_docstrings`` does for every model class at
import; doing it here, once and only for the reference, keeps that cost out of every process that merely
imports the models (each MCP server host does).
"""

import ast
import functools
import inspect
import sys

from pydantic import BaseModel


def field_description(model: type[BaseModel], name: str) -> str | None:
    """The ``description`` of field ``name`` of ``model``, else the docstring written under it (in ``model`` or
    the base class that declares it), cleaned like any docstring; ``None`` when it has neither."""
    field = model.model_fields[name]
    if field.description is not None:
        return field.description
    for cls in model.__mro__:
        if name in inspect.get_annotations(cls):
            return _class_docs(cls.__module__).get(cls.__qualname__, {}).get(name)
    return None


@functools.cache
def _class_docs(module: str) -> dict[str, dict[str, str]]:
    """Attribute docstrings of every top-level class of ``module``, by class name, then attribute."""
    try:
        source = inspect.getsource(sys.modules[module])
    except (KeyError, OSError, TypeError):  # no source shipped: no descriptions, as with pydantic's own reader
        return {}
    return {node.name: _attribute_docs(node) for node in ast.parse(source).body if isinstance(node, ast.ClassDef)}


def _attribute_docs(node: ast.ClassDef) -> dict[str, str]:
    docs: dict[str, str] = {}
    previous: ast.stmt | None = None
    for statement in node.body:
        if (
            isinstance(previous, ast.AnnAssign)
            and isinstance(previous.target, ast.Name)
            and isinstance(statement, ast.Expr)
            and isinstance(statement.value, ast.Constant)
            and isinstance(statement.value.value, str)
        ):
            docs[previous.target.id] = inspect.cleandoc(statement.value.value)
        previous = statement
    return docs
