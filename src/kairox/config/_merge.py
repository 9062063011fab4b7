"""Merging layers key by key while remembering where every value came from (C2, C3)."""

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kairox.config._keys import item_line, join_key, split_key
from kairox.config._layers import Layer
from kairox.config._models import CONCAT_LISTS, SERVER_SECTIONS

ENTRY_SECTIONS = (*SERVER_SECTIONS, "plugins.marketplaces")
"""Sections whose entries a higher layer replaces whole instead of key by key (a model provider's merge key by key:
``-c model_providers.NAME.base_url=...`` keeps the entry's ``context_window`` and key variable)."""
_CONCAT = frozenset(CONCAT_LISTS)


@dataclass(frozen=True, kw_only=True, slots=True)
class KeyOrigin:
    """Where one value came from."""

    layer: Layer
    file: Path | None = None
    line: int | None = None
    source: str | None = None
    """A label for values that come from no file: ``env:KAIROX_MODEL``, ``cli:-c``, ``plugin:<name>``."""
    shadowed: tuple["KeyOrigin", ...] = ()
    """Lower layers that set the same key, nearest first."""

    def where(self) -> str:
        if self.file is not None:
            return f"{self.file}:{self.line}" if self.line else str(self.file)
        return self.source or str(self.layer)

    def to_json(self, *, with_shadowed: bool = True) -> dict[str, Any]:
        data: dict[str, Any] = {
            "layer": self.source if self.layer is Layer.PLUGIN and self.source else str(self.layer),
            "file": str(self.file) if self.file else None,
            "line": self.line,
        }
        if self.source and self.layer is not Layer.PLUGIN:
            data["source"] = self.source
        if with_shadowed:
            data["shadowed"] = [s.to_json(with_shadowed=False) for s in self.shadowed]
        return data

    def above(self, previous: "KeyOrigin | None") -> "KeyOrigin":
        """This origin winning over ``previous`` (and what ``previous`` shadowed), nearest first."""
        if previous is None:
            return (
                self
                if not self.shadowed
                else KeyOrigin(layer=self.layer, file=self.file, line=self.line, source=self.source)
            )
        plain = (
            previous
            if not previous.shadowed
            else KeyOrigin(layer=previous.layer, file=previous.file, line=previous.line, source=previous.source)
        )
        return KeyOrigin(
            layer=self.layer, file=self.file, line=self.line, source=self.source, shadowed=(plain, *previous.shadowed)
        )


Leaf = tuple[str, tuple[str, ...], Any, KeyOrigin, tuple[KeyOrigin, ...] | None]
"""``(dotted key, its parts, value, origin, each item's origin for a list that concatenates across layers)``."""


@dataclass(kw_only=True, slots=True)
class LayerData:
    """One layer's raw table and the positions of its keys."""

    layer: Layer
    raw: dict[str, Any]
    file: Path | None = None
    positions: dict[str, tuple[int, int]] = field(default_factory=dict)
    text_lines: list[str] = field(default_factory=list)
    source: str | None = None
    untrusted: bool = False
    """A project or local file of a workspace the user has not trusted."""
    leaf_origins: dict[str, "KeyOrigin"] | None = None
    """Per-leaf origins given by the caller (the profile layer re-uses the origins of its file's keys)."""
    leaf_list: list[Leaf] | None = None
    """Every leaf with its origin, worked out once (see :meth:`leaves`); a cached file brings its own."""
    pin_memo: dict[tuple[str, int], tuple[Any, Any, Any]] | None = None
    """Trust pins of this file's values, kept with the file's parse (see ``TrustGate``)."""

    def leaves(self) -> list[Leaf]:
        """Every leaf of ``raw`` (as :func:`leaves` finds them) with its origin, computed on first use."""
        if self.leaf_list is None:
            found: list[Leaf] = []
            for parts, value in _leaf_parts(self.raw, ()):
                key = join_key(parts)
                items = None
                if key in _CONCAT and isinstance(value, list):
                    items = tuple(self.origin(key, item, index) for index, item in enumerate(value))
                found.append((key, parts, value, self.origin(key), items))
            self.leaf_list = found
        return self.leaf_list

    def line_of(self, key: str) -> int | None:
        probe = key
        while probe:
            if probe in self.positions:
                return self.positions[probe][0]
            probe = probe.rpartition(".")[0]
        return None

    def origin(self, key: str, item: Any = None, index: int | None = None) -> KeyOrigin:
        if self.leaf_origins is not None and key in self.leaf_origins:
            return self.leaf_origins[key]
        line = self.line_of(key)
        if index is not None and isinstance(item, dict):
            line = self.line_of(f"{key}.{index}") or line
        elif isinstance(item, str) and key in self.positions:
            line = item_line(self.text_lines, self.positions[key], item)
        return KeyOrigin(layer=self.layer, file=self.file, line=line, source=self.source)


def is_entry(parts: tuple[str, ...]) -> bool:
    return len(parts) >= 2 and join_key(parts[:-1]) in ENTRY_SECTIONS


def leaves(raw: dict[str, Any], prefix: tuple[str, ...] = ()) -> Iterator[tuple[str, Any]]:
    """``(dotted key, value)`` for every leaf; server entries and non-empty lists are leaves, empty tables none."""
    for parts, value in _leaf_parts(raw, prefix):
        yield join_key(parts), value


def _leaf_parts(
    raw: dict[str, Any], prefix: tuple[str, ...], found: list[tuple[tuple[str, ...], Any]] | None = None
) -> list[tuple[tuple[str, ...], Any]]:
    found = [] if found is None else found
    for name, value in raw.items():
        parts = (*prefix, name)
        if isinstance(value, dict) and not is_entry(parts):
            _leaf_parts(value, parts, found)
        else:
            found.append((parts, value))
    return found


@dataclass(kw_only=True, slots=True)
class Merged:
    values: dict[str, Any] = field(default_factory=dict)
    origins: dict[str, KeyOrigin] = field(default_factory=dict)
    items: dict[str, list[tuple[Any, KeyOrigin]]] = field(default_factory=dict)
    """Concatenated lists: each item with its own origin."""
    parts: dict[str, tuple[str, ...]] = field(default_factory=dict)
    """The parts of each merged key (a key set afterwards is split when the tree is built)."""

    def tree(self) -> dict[str, Any]:
        root: dict[str, Any] = {}
        known = self.parts
        for key, value in self.values.items():
            parts = known.get(key) or split_key(key)
            node = root
            for part in parts[:-1]:
                node = node.setdefault(part, {})
            node[parts[-1]] = value
        return root


Accept = Callable[[LayerData, str, Any], bool]


def merge(layers: list[LayerData], accept: Accept | None = None, *, only: frozenset[str] | None = None) -> Merged:
    """Merge ``layers`` (lowest first). ``accept(layer, key, value)`` may drop a leaf or a list item.

    ``only``: merge just the keys under these top-level names (the others do not change how those merge).
    """
    merged = Merged()
    values, origins, items, known = merged.values, merged.origins, merged.items, merged.parts
    for data in layers:
        for key, parts, value, origin, item_origins in data.leaves():
            if only is not None and parts[0] not in only:
                continue
            if item_origins is not None:
                bucket = items.setdefault(key, [])
                taken = [
                    (item, item_origins[index])
                    for index, item in enumerate(value)
                    if accept is None or accept(data, key, item)
                ]
                if taken or key not in origins:
                    # the list's provenance is its highest contributing layer; lower contributors are listed
                    origins[key] = origin.above(origins.get(key) if bucket else None)
                bucket.extend(taken)
                values[key] = [item for item, _ in bucket]
                known[key] = parts
                continue
            if accept is not None and not accept(data, key, value):
                continue
            origins[key] = origin.above(origins.get(key))
            values[key] = value
            known[key] = parts
    return merged
