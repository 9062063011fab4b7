"""Argument validation: each tool schema compiled once, and explained only when a call fails it.

The gate checks every call's arguments. ``jsonschema`` walks the schema anew per call and builds an error
iterator even for valid input; here a schema made only of the keywords tool schemas commonly use (``type``,
``properties``, ``required``, ``additionalProperties``, ``items``, string ``enum``, bounds on lengths and
numbers, annotations) is turned once into a tree of small checks. Any other keyword makes the whole schema fall
back to ``jsonschema``'s own ``is_valid``. Either way, a failing call is explained by ``jsonschema``
(``best_match``), which stays the authority: when it finds no error, the call is valid.
"""

import functools
import json
import numbers
from collections.abc import Callable, Mapping
from typing import Any

from jsonschema import exceptions as schema_errors
from jsonschema import validators

Check = Callable[[Any], bool]

_ANNOTATIONS = frozenset({"title", "description", "default", "examples", "$comment", "deprecated", "readOnly", "writeOnly", "format"})
"""Keywords that never fail a value (``format`` is not asserted: validators are built without a format checker)."""

_COMPILED_DRAFTS = frozenset(
    {validators.Draft6Validator, validators.Draft7Validator, validators.Draft201909Validator, validators.Draft202012Validator}
)
"""Drafts whose meaning of the compiled keywords is the same (draft 4 and older count 1.0 as no integer)."""


def _is_integer(value: Any) -> bool:
    if isinstance(value, bool):
        return False
    return isinstance(value, int) or (isinstance(value, float) and value.is_integer())


def _is_number(value: Any) -> bool:
    return not isinstance(value, bool) and isinstance(value, numbers.Number)


_TYPES: dict[str, Check] = {
    "string": lambda value: isinstance(value, str),
    "integer": _is_integer,
    "number": _is_number,
    "boolean": lambda value: isinstance(value, bool),
    "null": lambda value: value is None,
    "object": lambda value: isinstance(value, dict),
    "array": lambda value: isinstance(value, list),
}


class _Unsupported(Exception):
    """The schema uses a keyword (or a form of one) the compiler leaves to ``jsonschema``."""


def _always(value: Any) -> bool:
    return True


def _never(value: Any) -> bool:
    return False


def _type_check(types: Any) -> Check:
    names = [types] if isinstance(types, str) else types
    if not isinstance(names, list) or not names or any(name not in _TYPES for name in names):
        raise _Unsupported
    if len(names) == 1:
        return _TYPES[names[0]]
    checks = tuple(_TYPES[name] for name in names)
    return lambda value: any(check(value) for check in checks)


def _object_check(schema: Mapping[str, Any], *, typed: bool = False) -> Check:
    """The object keywords of ``schema``; ``typed``: also its ``"type": "object"`` (one check, not two)."""
    raw = schema.get("properties", {})
    required = schema.get("required", [])
    if not isinstance(raw, dict) or not isinstance(required, list) or not all(isinstance(k, str) for k in required):
        raise _Unsupported
    properties = {name: _compile(sub) for name, sub in raw.items()}
    extra = schema.get("additionalProperties", True)
    additional = None if extra is True else _compile(extra)
    needed = tuple(required)

    def check(value: Any) -> bool:
        if not isinstance(value, dict):
            return not typed  # object keywords hold for anything that is no object
        for name in needed:
            if name not in value:
                return False
        for name, item in value.items():
            sub = properties.get(name)
            if sub is not None:
                if not sub(item):
                    return False
            elif additional is not None and not additional(item):
                return False
        return True

    return check


def _items_check(items: Any) -> Check:
    if not isinstance(items, dict | bool):
        raise _Unsupported  # a list of schemas is positional in older drafts
    each = _compile(items)
    return lambda value: not isinstance(value, list) or all(each(item) for item in value)


def _bound(keyword: str, limit: Any) -> Check:
    if keyword in ("minLength", "maxLength", "minItems", "maxItems"):
        if not _is_integer(limit):
            raise _Unsupported
        kind: type[str] | type[list[Any]] = str if keyword.endswith("Length") else list
        if keyword.startswith("min"):
            return lambda value: not isinstance(value, kind) or len(value) >= limit
        return lambda value: not isinstance(value, kind) or len(value) <= limit
    if not _is_number(limit):
        raise _Unsupported
    if keyword == "minimum":
        return lambda value: not _is_number(value) or value >= limit
    if keyword == "maximum":
        return lambda value: not _is_number(value) or value <= limit
    if keyword == "exclusiveMinimum":
        return lambda value: not _is_number(value) or value > limit
    return lambda value: not _is_number(value) or value < limit  # exclusiveMaximum


def _enum_check(allowed: frozenset[str]) -> Check:
    return lambda value: isinstance(value, str) and value in allowed


_BOUNDS = frozenset({"minLength", "maxLength", "minItems", "maxItems", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"})
_OBJECT_KEYWORDS = frozenset({"properties", "required", "additionalProperties"})


def _compile(schema: Any, *, root: bool = False) -> Check:
    if schema is True:
        return _always
    if schema is False:
        return _never
    if not isinstance(schema, dict):
        raise _Unsupported
    checks: list[Check] = []
    typed_object = schema.get("type") == "object" and bool(_OBJECT_KEYWORDS.intersection(schema))
    for keyword, value in schema.items():
        if keyword in _ANNOTATIONS or keyword in _OBJECT_KEYWORDS or (root and keyword == "$schema"):
            continue
        if keyword == "type" and typed_object:
            continue  # checked with the object keywords below
        if keyword == "type":
            checks.append(_type_check(value))
        elif keyword == "items":
            checks.append(_items_check(value))
        elif keyword == "enum":
            if not isinstance(value, list) or not value or not all(isinstance(v, str) for v in value):
                raise _Unsupported  # numbers and booleans compare in jsonschema's own way: left to it
            checks.append(_enum_check(frozenset(value)))
        elif keyword in _BOUNDS:
            checks.append(_bound(keyword, value))
        else:
            raise _Unsupported
    if _OBJECT_KEYWORDS.intersection(schema):
        checks.append(_object_check(schema, typed=typed_object))
    if not checks:
        return _always
    if len(checks) == 1:
        return checks[0]
    if len(checks) == 2:  # the usual pair (a type and the keywords of that type): no generator per value
        first, second = checks
        return lambda value: first(value) and second(value)
    every = tuple(checks)
    return lambda value: all(check(value) for check in every)


def compile_check(schema: Any, cls: type) -> Check | None:
    """A fast yes/no check equal to ``cls(schema).is_valid`` for the keywords it knows, else None."""
    if cls not in _COMPILED_DRAFTS:
        return None
    try:
        return _compile(schema, root=True)
    except _Unsupported:
        return None


class ArgumentValidator:
    """One tool schema, checked fast; a failure explained by ``jsonschema``'s best matching error."""

    __slots__ = ("_validator", "check", "compiled")

    def __init__(self, validator: Any) -> None:
        self._validator = validator
        check = compile_check(validator.schema, type(validator))
        self.compiled = check is not None
        self.check: Check = check if check is not None else validator.is_valid
        """Whether ``arguments`` are valid: the fast answer, nothing explained."""

    def error(self, arguments: Any) -> Any | None:
        """None when ``arguments`` are valid, else the ``jsonschema`` error that explains best why not."""
        if self.check(arguments):
            return None
        return schema_errors.best_match(self._validator.iter_errors(arguments))


def schema_validator(schema: Any) -> tuple[ArgumentValidator | None, str | None]:
    """The validator of a tool's input schema, or why the schema is unusable. Built once per distinct schema:
    a server that lists its tools again (``list_changed``) finds its validators ready."""
    try:
        fingerprint = json.dumps(schema, sort_keys=True, allow_nan=False)
    except (TypeError, ValueError):
        return _build(schema)
    return _cached(fingerprint)


@functools.lru_cache(maxsize=2048)
def _cached(fingerprint: str) -> tuple[ArgumentValidator | None, str | None]:
    return _build(json.loads(fingerprint))


def _build(schema: Any) -> tuple[ArgumentValidator | None, str | None]:
    if not isinstance(schema, dict) or schema.get("type", "object") != "object":
        return None, "its input schema does not describe an object"
    try:
        cls = validators.validator_for(schema, default=validators.Draft202012Validator)
        cls.check_schema(schema)
    except schema_errors.SchemaError as exc:
        return None, f"its input schema is not valid JSON Schema: {exc.message}"
    return ArgumentValidator(cls(schema)), None
