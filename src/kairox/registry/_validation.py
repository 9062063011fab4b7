"""Argument validation: each tool schema compiled once, and explained only when a call fails it.

The gate checks every call's arguments. ``jsonschema`` walks the schema anew per call and builds an error
iterator even for valid input; here a schema made only of the keywords tool schemas commonly use (``type``,
``properties``, ``required``, ``additionalProperties``, ``items``, string ``enum``, bounds on lengths and
numbers, annotations) is turned once into a tree of small checks. Any other keyword makes the whole schema fall
back to ``jsonschema``'s own ``is_valid``. Either way, a failing call is explained by ``jsonschema``
(``best_match``), which stays the authority: when it finds no error, the call is valid.

The compiler also holds each keyword's value to what the drafts' meta-schemas require (a ``minLength`` is a
non-negative integer, ``required`` lists distinct strings, a ``description`` is text ...), stricter where the drafts
differ. So a schema it compiles, under a ``$schema`` it knows, is one ``jsonschema`` would accept, and building the
tools' validators needs no ``jsonschema`` at all (its import is a sixth of a registry's start): it is imported
when a call fails a check, to explain it, or for a schema the compiler leaves to it.
"""

import functools
import json
import numbers
from collections.abc import Callable, Mapping
from typing import Any

Check = Callable[[Any], bool]

_ANNOTATIONS: dict[str, Callable[[Any], bool]] = {
    "title": lambda value: isinstance(value, str),
    "description": lambda value: isinstance(value, str),
    "$comment": lambda value: isinstance(value, str),
    "format": lambda value: isinstance(value, str),
    "default": lambda value: True,
    "examples": lambda value: isinstance(value, list),
    "deprecated": lambda value: isinstance(value, bool),
    "readOnly": lambda value: isinstance(value, bool),
    "writeOnly": lambda value: isinstance(value, bool),
}
"""Keywords that never fail a value (``format`` is not asserted: validators are built without a format checker),
and what their values must be for every draft's meta-schema to accept them."""

_COMPILED_DRAFTS = frozenset({"Draft6Validator", "Draft7Validator", "Draft201909Validator", "Draft202012Validator"})
"""Drafts whose meaning of the compiled keywords is the same (draft 4 and older count 1.0 as no integer)."""

_KNOWN_SCHEMAS = {
    "http://json-schema.org/draft-06/schema": "Draft6Validator",
    "http://json-schema.org/draft-06/schema#": "Draft6Validator",
    "http://json-schema.org/draft-07/schema": "Draft7Validator",
    "http://json-schema.org/draft-07/schema#": "Draft7Validator",
    "https://json-schema.org/draft/2019-09/schema": "Draft201909Validator",
    "https://json-schema.org/draft/2019-09/schema#": "Draft201909Validator",
    "https://json-schema.org/draft/2020-12/schema": "Draft202012Validator",
    "https://json-schema.org/draft/2020-12/schema#": "Draft202012Validator",
}
"""``$schema`` values and the ``jsonschema`` validator class each means (the default, with none, is 2020-12); any
other value is left to ``jsonschema``'s own ``validator_for``."""


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
    if (
        not isinstance(names, list)
        or not names
        or any(name not in _TYPES for name in names)
        or len(set(names)) != len(names)
    ):
        raise _Unsupported
    if len(names) == 1:
        return _TYPES[names[0]]
    checks = tuple(_TYPES[name] for name in names)
    return lambda value: any(check(value) for check in checks)


def _object_check(schema: Mapping[str, Any], *, typed: bool = False) -> Check:
    """The object keywords of ``schema``; ``typed``: also its ``"type": "object"`` (one check, not two)."""
    raw = schema.get("properties", {})
    required = schema.get("required", [])
    if (
        not isinstance(raw, dict)
        or not isinstance(required, list)
        or not all(isinstance(k, str) for k in required)
        or len(set(required)) != len(required)
    ):
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
        if not _is_integer(limit) or limit < 0:
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


_BOUNDS = frozenset(
    {"minLength", "maxLength", "minItems", "maxItems", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"}
)
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
        annotation = _ANNOTATIONS.get(keyword)
        if annotation is not None:
            if not annotation(value):
                raise _Unsupported  # a value the meta-schema refuses: jsonschema says what is wrong with it
            continue
        if keyword in _OBJECT_KEYWORDS or (root and keyword == "$schema" and isinstance(value, str)):
            continue
        if keyword == "type" and typed_object:
            continue  # checked with the object keywords below
        if keyword == "type":
            checks.append(_type_check(value))
        elif keyword == "items":
            checks.append(_items_check(value))
        elif keyword == "enum":
            if (
                not isinstance(value, list)
                or not value
                or not all(isinstance(v, str) for v in value)
                or len(set(value)) != len(value)
            ):
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
    if cls.__name__ not in _COMPILED_DRAFTS:
        return None
    try:
        return _compile(schema, root=True)
    except _Unsupported:
        return None


class ArgumentValidator:
    """One tool schema, checked fast; a failure explained by ``jsonschema``'s best matching error (its validator is
    made when the first call fails, for a compiled schema)."""

    __slots__ = ("_draft", "_schema", "_validator", "check", "compiled")

    def __init__(self, schema: Any, draft: str, check: Check | None = None, validator: Any = None) -> None:
        self._schema = schema
        self._draft = draft
        self._validator = validator
        self.compiled = check is not None
        if check is None:
            check = self.validator.is_valid
        self.check: Check = check
        """Whether ``arguments`` are valid: the fast answer, nothing explained."""

    @property
    def validator(self) -> Any:
        """The ``jsonschema`` validator of the schema."""
        if self._validator is None:
            from jsonschema import validators

            self._validator = getattr(validators, self._draft)(self._schema)
        return self._validator

    def error(self, arguments: Any) -> Any | None:
        """None when ``arguments`` are valid, else the ``jsonschema`` error that explains best why not."""
        if self.check(arguments):
            return None
        from jsonschema import exceptions

        return exceptions.best_match(self.validator.iter_errors(arguments))


_FINGERPRINT = json.JSONEncoder(sort_keys=True, allow_nan=False)
"""``json.dumps(schema, sort_keys=True, allow_nan=False)`` with one encoder made once: ``dumps`` with options
makes a new encoder per call, half the cost of a small schema's fingerprint (2,000 tools at every start)."""


def schema_validator(schema: Any) -> tuple[ArgumentValidator | None, str | None]:
    """The validator of a tool's input schema, or why the schema is unusable. Built once per distinct schema:
    a server that lists its tools again (``list_changed``) finds its validators ready."""
    try:
        fingerprint = _FINGERPRINT.encode(schema)
    except (TypeError, ValueError):
        return _build(schema)
    return _cached(fingerprint)


@functools.lru_cache(maxsize=2048)
def _cached(fingerprint: str) -> tuple[ArgumentValidator | None, str | None]:
    return _build(json.loads(fingerprint))


def _build(schema: Any) -> tuple[ArgumentValidator | None, str | None]:
    if not isinstance(schema, dict) or schema.get("type", "object") != "object":
        return None, "its input schema does not describe an object"
    declared = schema.get("$schema")
    draft = (
        "Draft202012Validator"
        if "$schema" not in schema
        else _KNOWN_SCHEMAS.get(declared)
        if isinstance(declared, str)
        else None
    )
    if draft is not None:
        try:
            # keywords and values the compiler holds to the meta-schemas: a schema jsonschema would accept too
            return ArgumentValidator(schema, draft, _compile(schema, root=True)), None
        except (_Unsupported, TypeError):
            pass
    if "$schema" in schema and not isinstance(declared, str):
        return None, f"its input schema is not valid JSON Schema: $schema is {type(declared).__name__}, not a URI"
    from jsonschema import exceptions, validators

    try:
        cls = validators.validator_for(schema, default=validators.Draft202012Validator)
        cls.check_schema(schema)
        validator = cls(schema)
    except exceptions.SchemaError as exc:
        return None, f"its input schema is not valid JSON Schema: {exc.message}"
    except Exception as exc:  # whatever else jsonschema trips on: the tool is left out, the others stay
        return None, f"its input schema could not be read as JSON Schema: {type(exc).__name__}: {exc}"
    return ArgumentValidator(schema, cls.__name__, compile_check(schema, cls), validator), None
