"""Checking a tool's input schema when the server lists it, so a bad one is left out then, not at call time.

A schema is refused when it is not an object, is nested deeper than the decoding limit, has more nodes than any
tool needs, names a ``$ref`` Kairox cannot resolve inside the schema itself (another document, a missing
``$defs`` entry), or loops: a ``$ref`` (or ``allOf`` / ``anyOf`` / ``oneOf`` / ``not`` / ``if`` ...) that comes back
to itself at the same place in the arguments, which sends a validator into endless recursion. A recursive
structure that descends into the arguments on each turn (a tree of ``children``) is fine.
"""

from typing import Any
from urllib.parse import unquote

from kairox._util._decode import MAX_DEPTH, nesting_depth

MAX_NODES = 10_000
"""Schema objects one input schema may hold."""
_IN_PLACE_LISTS = ("allOf", "anyOf", "oneOf")
_IN_PLACE_ONE = ("not", "if", "then", "else")


def _escape(key: str) -> str:
    return key.replace("~", "~0").replace("/", "~1")


def _nodes(schema: dict[str, Any]) -> dict[str, dict[str, Any]] | None:
    """Every object in ``schema`` by its JSON pointer; None when there are more than :data:`MAX_NODES`."""
    found: dict[str, dict[str, Any]] = {}
    stack: list[tuple[str, Any]] = [("", schema)]
    while stack:
        pointer, node = stack.pop()
        if isinstance(node, dict):
            found[pointer] = node
            if len(found) > MAX_NODES:
                return None
            stack.extend((f"{pointer}/{_escape(str(key))}", value) for key, value in node.items())
        elif isinstance(node, list):
            stack.extend((f"{pointer}/{index}", value) for index, value in enumerate(node))
    return found


def _target(ref: str, nodes: dict[str, dict[str, Any]], anchors: dict[str, str]) -> str:
    """The pointer ``ref`` names; raises ValueError saying why it cannot be followed."""
    if not ref.startswith("#"):
        raise ValueError(f"$ref {ref!r} refers to another document; only references inside the schema are followed")
    fragment = unquote(ref[1:])
    if fragment and not fragment.startswith("/"):
        if fragment in anchors:
            return anchors[fragment]
        raise ValueError(f"$ref {ref!r} names an anchor the schema does not define")
    if fragment.rstrip("/") not in nodes and fragment not in nodes:
        raise ValueError(f"$ref {ref!r} points to nothing in the schema")
    return fragment if fragment in nodes else fragment.rstrip("/")


def _in_place(
    pointer: str, node: dict[str, Any], nodes: dict[str, dict[str, Any]], anchors: dict[str, str]
) -> list[str]:
    """Schemas applied to the same value as ``node``: its ``$ref`` target and in-place subschemas."""
    found: list[str] = []
    ref = node.get("$ref")
    if isinstance(ref, str):
        found.append(_target(ref, nodes, anchors))
    for key in _IN_PLACE_LISTS:
        if isinstance(node.get(key), list):
            found += [f"{pointer}/{key}/{i}" for i, item in enumerate(node[key]) if isinstance(item, dict)]
    for key in _IN_PLACE_ONE:
        if isinstance(node.get(key), dict):
            found.append(f"{pointer}/{key}")
    return found


def schema_problem(schema: Any) -> str | None:
    """Why ``schema`` cannot serve as a tool's input schema, or None when it can."""
    if not isinstance(schema, dict):
        return f"its input schema is a JSON {type(schema).__name__}, not an object"
    if nesting_depth(schema) > MAX_DEPTH:
        return f"its input schema is nested more than {MAX_DEPTH} levels deep"
    nodes = _nodes(schema)
    if nodes is None:
        return f"its input schema has more than {MAX_NODES} parts"
    anchors = {node["$anchor"]: pointer for pointer, node in nodes.items() if isinstance(node.get("$anchor"), str)}
    edges: dict[str, list[str]] = {}
    try:
        for pointer, node in nodes.items():
            edges[pointer] = _in_place(pointer, node, nodes, anchors)
    except ValueError as exc:
        return f"its input schema cannot be used: {exc}"
    # a cycle among in-place edges is a validator's endless recursion; walk without recursion ourselves
    state: dict[str, int] = {}
    for start in edges:
        if state.get(start):
            continue
        stack: list[tuple[str, int]] = [(start, 0)]
        state[start] = 1
        while stack:
            pointer, index = stack.pop()
            targets = edges.get(pointer, [])
            if index < len(targets):
                stack.append((pointer, index + 1))
                nxt = targets[index]
                if state.get(nxt) == 1:
                    where = nxt or "/"
                    return (
                        f"its input schema refers to itself at {where!r} "
                        "without descending into the arguments (a $ref loop)"
                    )
                if not state.get(nxt):
                    state[nxt] = 1
                    stack.append((nxt, 0))
            else:
                state[pointer] = 2
    return None
