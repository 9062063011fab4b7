"""Frozen records that are quick to build: the same frozen, slotted dataclass, with an ``__init__`` that fills each
slot directly.

A frozen dataclass's ``__init__`` stores every field through ``object.__setattr__``, a generic attribute lookup per
field; records made on every tool call (its events, its context) pay that many times per call. ``quick_init``
generates the same keyword-only ``__init__`` (same defaults, same default factories) storing through each slot's
own descriptor: about a third cheaper, and the record stays what it was (assignment still raises, equality,
hashing and ``repr`` are the dataclass's own).
"""

import dataclasses
from typing import Any, TypeVar

C = TypeVar("C", bound=type)


def _slot(cls: type, name: str) -> Any:
    for klass in cls.__mro__:
        found = klass.__dict__.get(name)
        if found is not None and hasattr(found, "__set__"):
            return found
    raise TypeError(f"{cls.__qualname__}.{name} has no slot")


def quick_init(cls: C) -> C:
    """Give a frozen, slotted dataclass whose fields are all keyword-only an ``__init__`` that fills its slots
    directly. Anything else (a ``__post_init__``, ``init=False`` or positional fields) is refused: it needs the
    dataclass's own ``__init__``."""
    params = getattr(cls, "__dataclass_params__", None)
    if params is None or not params.frozen or "__slots__" not in cls.__dict__ or hasattr(cls, "__post_init__"):
        raise TypeError(f"{cls.__qualname__} is not a frozen, slotted dataclass without __post_init__")
    namespace: dict[str, Any] = {"MISSING": dataclasses.MISSING}
    parameters: list[str] = []
    body: list[str] = []
    for index, field in enumerate(dataclasses.fields(cls)):
        if not field.init or not field.kw_only:
            raise TypeError(f"{cls.__qualname__}.{field.name} is not a keyword-only init field")
        store = f"_store_{index}"
        namespace[store] = _slot(cls, field.name).__set__
        value = field.name
        if field.default is not dataclasses.MISSING:
            namespace[f"_default_{index}"] = field.default
            parameters.append(f"{field.name}=_default_{index}")
        elif field.default_factory is not dataclasses.MISSING:
            namespace[f"_factory_{index}"] = field.default_factory
            parameters.append(f"{field.name}=MISSING")
            value = f"_factory_{index}() if {field.name} is MISSING else {field.name}"
        else:
            parameters.append(field.name)
        body.append(f"    {store}(self, {value})")
    signature = f"self, *, {', '.join(parameters)}" if parameters else "self"
    exec(f"def __init__({signature}) -> None:\n" + ("\n".join(body) or "    pass"), namespace)
    init = namespace["__init__"]
    init.__qualname__ = f"{cls.__qualname__}.__init__"
    init.__module__ = cls.__module__
    cls.__init__ = init  # type: ignore[misc]
    return cls
